"""What the client does when a prompt is given up, so that the session stays usable.

Disposing a ``session/prompt`` subscription (directly, ``take_until``, ``timeout``, Ctrl-C in a
blocking call, the client's ``prompt_timeout``) after it was written tells the agent twice, each
once: ``session/cancel`` for its session (what production agents implement), then the engine's
``$/cancel_request`` for its id. The agent still ends the old turn with a late answer, which the
engine discards; until that answer arrives (bounded by :data:`SETTLE_BOUND`), a new prompt for
the same session is **held** and written only then, because agents refuse (``-32600``) or merge
a prompt that arrives while their previous turn is still winding down.

This module is *not* responsible for writing anything itself (the client's ``cancel`` and the
engine do) or for ``CancellationSignal`` stops, which wait for the agent's answer anyway.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.subject import AsyncSubject

from ..schema import PromptResponse, SessionNotification
from ..session import AcpObservable, AcpSession
from .cancellation import CancellationSignal
from .streams import UpdateStream

__all__ = ["SETTLE_BOUND", "SettlingTurns", "TurnBuffer", "with_updates"]

_log = logging.getLogger("rxacp.client")

SETTLE_BOUND = 10.0
"""Seconds a new prompt waits at most for the late answer of its session's disposed prompt."""


def with_updates(
    stream: UpdateStream,
    session_id: str,
    prompt: AcpObservable[Any],
    hold: Callable[[], reactivex.Observable[Any] | None] | None = None,
) -> AcpObservable[Any]:
    """``prompt`` preceded by the ``SessionUpdate`` models of its session that arrive while it is in
    flight. Subscribe it on the loop (:meth:`SettlingTurns.hold` does), right before the prompt
    is written, so the tap starts with the turn::

        ──u1──u2──u3──R|     (u: SessionUpdate models; R: the PromptResponse)

    ``hold`` (called after each update) may return an Observable that holds the next
    notification until it completed: the blocking iterator's bounded buffer uses it.
    """

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        def on_update(notification: SessionNotification) -> reactivex.Observable[Any] | None:
            if notification.session_id != session_id:
                return None
            observer.on_next(notification.update)
            return hold() if hold is not None else None

        remove = stream.tap(on_update)
        inner = prompt.subscribe(
            observer.on_next, observer.on_error, observer.on_completed, scheduler=scheduler
        )

        def dispose() -> None:
            remove()
            inner.dispose()

        return Disposable(dispose)

    return AcpObservable(subscribe)


class _Settling:
    __slots__ = ("tokens", "waiters")

    def __init__(self) -> None:
        self.tokens: set[object] = set()
        self.waiters: list[_Held] = []


class SettlingTurns:
    """Sessions whose disposed prompt has not been answered yet, and the prompts held for them.

    All state lives on the connection's loop: the engine calls :meth:`abandon` there, and the
    subscriptions of :meth:`hold` decide there, after any disposal queued before them (so
    "dispose, then prompt again" from another thread is held as it should be).
    """

    def __init__(
        self,
        session: AcpSession,
        send_cancel: Callable[[str], object],
        bound: float = SETTLE_BOUND,
    ) -> None:
        self._session = session
        self._send_cancel = send_cancel
        self._bound = bound
        self._sessions: dict[str, _Settling] = {}

    def abandon(self, session_id: str) -> Callable[[], None]:
        """(Loop.) A written prompt of ``session_id`` was given up: send ``session/cancel`` and
        hold the session's next prompts. Returns the release to run on the late answer."""
        self._send_cancel(session_id)
        token = object()
        self._sessions.setdefault(session_id, _Settling()).tokens.add(token)
        session = self._session
        timer = session.scheduler.schedule_relative(
            self._bound,
            lambda _s, _st: session.run_on_loop(
                lambda: self._release(session_id, token, timed_out=True)
            ),
        )

        def release() -> None:
            timer.dispose()
            self._release(session_id, token, timed_out=False)

        return release

    def _release(self, session_id: str, token: object, *, timed_out: bool) -> None:
        settling = self._sessions.get(session_id)
        if settling is None or token not in settling.tokens:
            return
        settling.tokens.discard(token)
        if settling.tokens:
            return
        del self._sessions[session_id]
        if timed_out:
            _log.debug(
                "session %s: no answer to the disposed prompt after %.1f s; sending the next",
                session_id,
                self._bound,
            )
        for held in settling.waiters:
            held.go()

    def hold(
        self,
        session_id: str,
        source: AcpObservable[Any],
        stop: CancellationSignal | None = None,
    ) -> AcpObservable[Any]:
        """``source`` (a prompt of ``session_id``), subscribed once the session settled::

        settled:     ──prompt──▶ ──R|
        settling:    ····(late answer or bound)──prompt──▶ ──R|
        dispose while held: nothing is sent
        stop cancelled while held: ····R(cancelled)|  (nothing sent)
        """
        session = self._session

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            if not session.is_open:  # settles at once on the caller's thread
                return source.subscribe(observer, scheduler=scheduler)
            held = _Held(source, observer, scheduler, stop)

            def decide() -> None:
                settling = self._sessions.get(session_id)
                if settling is None:
                    held.go()
                else:
                    settling.waiters.append(held)

            def dispose() -> None:
                held.disposed = True

                def drop() -> None:
                    settling = self._sessions.get(session_id)
                    if settling is not None and held in settling.waiters:
                        settling.waiters.remove(held)
                    held.dispose()

                session.run_on_loop(drop)

            session.run_on_loop(decide)
            return Disposable(dispose)

        return AcpObservable(subscribe)


class _Held:
    """One prompt subscription, sent at once or when its session settled (loop only)."""

    __slots__ = ("_inner", "_observer", "_scheduler", "_source", "_stop", "disposed")

    def __init__(
        self,
        source: AcpObservable[Any],
        observer: abc.ObserverBase[Any],
        scheduler: abc.SchedulerBase | None,
        stop: CancellationSignal | None,
    ) -> None:
        self._stop = stop
        self._source = source
        self._observer = observer
        self._scheduler = scheduler
        self.disposed = False
        self._inner: abc.DisposableBase | None = None

    def go(self) -> None:
        if self.disposed:
            return
        if self._stop is not None and self._stop.is_cancelled():
            self._observer.on_next(PromptResponse.cancelled())  # as for a stop before sending
            self._observer.on_completed()
        else:
            self._inner = self._source.subscribe(self._observer, scheduler=self._scheduler)

    def dispose(self) -> None:
        inner, self._inner = self._inner, None
        if inner is not None:
            inner.dispose()


class TurnBuffer:
    """The blocking ``prompt_turn`` iterator's hand-off: the loop puts each emission here and
    the caller's thread takes them in order. Bounded: once ``limit`` wait, :meth:`hold` makes
    the loop's inbox wait (so reading the agent pauses) until the caller took half of them.
    """

    def __init__(self, session: AcpSession, limit: int = 256) -> None:
        self._session = session
        self._limit = limit
        self._cond = threading.Condition()
        self._items: collections.deque[tuple[str, Any]] = collections.deque()
        self._holding: AsyncSubject[Any] | None = None

    # loop side
    def on_next(self, value: Any) -> None:
        self._put("n", value)

    def on_error(self, error: Exception) -> None:
        self._put("e", error)

    def on_completed(self) -> None:
        self._put("c", None)

    def _put(self, kind: str, value: Any) -> None:
        with self._cond:
            self._items.append((kind, value))
            self._cond.notify()

    def hold(self) -> reactivex.Observable[Any] | None:
        """(Loop, after each update.) An Observable to wait on while the buffer is full."""
        with self._cond:
            if len(self._items) < self._limit:
                return None
            if self._holding is None:
                self._holding = AsyncSubject()
            return self._holding

    # caller side
    def take(self, timeout: float | None) -> tuple[str, Any]:
        """The next emission ``("n", value)``, ``("e", error)`` or ``("c", None)``; raises
        ``TimeoutError`` when ``timeout`` passes first."""
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._items), timeout):
                raise TimeoutError
            item = self._items.popleft()
            release = None
            if self._holding is not None and len(self._items) <= self._limit // 2:
                release, self._holding = self._holding, None
        if release is not None:
            self._session.run_on_loop(release.on_completed)
        return item

    def close(self) -> None:
        """The caller stopped iterating: never hold the loop again."""
        with self._cond:
            self._limit = 1 << 62
            release, self._holding = self._holding, None
        if release is not None:
            self._session.run_on_loop(release.on_completed)
