"""``UpdateStream``: the client's hot stream of ``session/update`` notifications.

Every :class:`~rxacp.schema.SessionNotification` the client receives is emitted here, on the
connection's loop, in arrival order (before the registered consumers see it), to whoever
subscribed at that moment — a subscriber sees only later updates. The stream completes when
the connection ends. ``AcpAsyncClient.updates()`` exposes it; ``prompt_turn()`` taps it for one
turn.

A subscriber that raises is logged and does not stop the others. Subscribers run on the loop:
a slow one holds it (and so the reading of the agent's output); to hand updates to another
thread use ``observe_on``, whose queue is RxPY's (unbounded) — see
``docs/getting-started-client.md`` for a bounded pattern.

This module is *not* responsible for parsing (the client's handlers are) or for consumers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from ..schema import SessionNotification
from ..session import AcpObservable

__all__ = ["UpdateStream", "call_logged"]

_log = logging.getLogger("rxacp.client")


def call_logged(failed: str, fn: Callable[..., object], *args: Any) -> None:
    """``fn(*args)``; an exception is logged as ``failed`` and goes no further (one subscriber
    or listener that raises does not stop the others)."""
    try:
        fn(*args)
    except Exception:
        _log.exception(failed)


_Listener = Callable[[SessionNotification], "reactivex.Observable[Any] | None"]


class UpdateStream:
    """Hot multicast of incoming ``SessionNotification``\\ s (thread-safe subscribe/dispose)."""

    __slots__ = ("_completed", "_listeners", "_lock", "_observers")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._observers: tuple[abc.ObserverBase[SessionNotification], ...] = ()
        self._listeners: tuple[_Listener, ...] = ()
        self._completed = False

    @property
    def observed(self) -> bool:
        """True while someone listens (the client skips parsing when nobody does)."""
        return bool(self._observers or self._listeners)

    # ------------------------------------------------------------------ feeding (loop)
    def emit(self, notification: SessionNotification) -> reactivex.Observable[Any] | None:
        """Deliver one notification to the current subscribers (loop thread). A tap may
        return an Observable: the next notification waits until it completed (returned)."""
        holds: list[reactivex.Observable[Any]] = []
        for listener in self._listeners:
            try:
                hold = listener(notification)
            except Exception:
                _log.exception("a prompt_turn() update tap failed")
                continue
            if hold is not None:
                holds.append(hold)
        for observer in self._observers:
            call_logged("an updates() subscriber failed", observer.on_next, notification)
        if not holds:
            return None
        return holds[0] if len(holds) == 1 else reactivex.merge(*holds)

    def complete(self) -> None:
        """The connection ended: complete every subscriber, and later ones at once."""
        with self._lock:
            self._completed = True
            observers, self._observers = self._observers, ()
            self._listeners = ()
        for observer in observers:
            call_logged("an updates() subscriber failed on completion", observer.on_completed)

    # ------------------------------------------------------------------ subscribing
    def tap(self, listener: _Listener) -> Callable[[], None]:
        """Call ``listener`` with every later notification; returns the removal (loop use).
        ``listener`` may return an Observable that holds the next notification until it
        completed (a bounded hand-off to another thread)."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def remove() -> None:
            with self._lock:
                self._listeners = tuple(x for x in self._listeners if x is not listener)

        return remove

    def observable(self, session_id: str | None = None) -> AcpObservable[SessionNotification]:
        """The hot Observable of (one session's, when ``session_id`` is given) notifications::

        updates:   ──n1──n2──n3──n4──...──|   (completes when the connection ends)
        subscribe late:       ──n3──n4──...
        """

        def subscribe(
            observer: abc.ObserverBase[SessionNotification],
            scheduler: abc.SchedulerBase | None = None,
        ) -> abc.DisposableBase:
            target: abc.ObserverBase[Any] = (
                observer if session_id is None else _SessionFilter(observer, session_id)
            )
            with self._lock:
                completed = self._completed
                if not completed:
                    self._observers = (*self._observers, target)
            if completed:
                observer.on_completed()
                return Disposable()

            def dispose() -> None:
                with self._lock:
                    self._observers = tuple(x for x in self._observers if x is not target)

            return Disposable(dispose)

        return AcpObservable(subscribe)


class _SessionFilter(abc.ObserverBase[Any]):
    """Passes on one session's notifications."""

    __slots__ = ("_observer", "_session_id")

    def __init__(self, observer: abc.ObserverBase[Any], session_id: str) -> None:
        self._observer = observer
        self._session_id = session_id

    def on_next(self, value: Any) -> None:
        if value.session_id == self._session_id:
            self._observer.on_next(value)

    def on_error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def on_completed(self) -> None:
        self._observer.on_completed()
