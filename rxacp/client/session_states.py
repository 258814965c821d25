"""The read model as Observables: the client's per-session :class:`SessionState`\\ s, and the
:func:`fold_session_state` operator for any stream of updates.

:class:`SessionStates` is the client's registry: it folds every ``session/update`` the client
receives into its session's state on the connection's loop — before ``updates()`` subscribers
and the consumers see that update, and whether or not anyone watches, so updates that arrive
before the ``session/new`` (``load``/``resume``) answer are in the session's state by the time
the caller learns the session id. ``AcpAsyncClient.session_state(sid)`` is its hot,
replaying Observable; ``AcpSyncClient.session_state(sid)`` its latest snapshot. A session's
state is dropped when this client's ``session/close`` or ``session/delete`` for it succeeded.

Every emission runs under the registry's (reentrant) lock, so each subscriber gets its states
one at a time, in order, without duplicates, also when it subscribes from another thread
while updates arrive. A session nobody subscribes to is folded in batches
(:meth:`SessionState.apply_all`, at most :data:`_BATCH` updates wait), folded at once when
read.

This module is *not* responsible for the fold itself (:mod:`rxacp.client.read_model`) or for
receiving and parsing notifications (``handlers.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from ..schema import PromptResponse, SessionNotification
from ..schema import methods as m
from ..session import AcpObservable
from .read_model import SessionState
from .streams import call_logged

__all__ = ["CallHooks", "SessionStates", "fold_session_state"]


_Hook = Callable[[Any, Any], None]


class CallHooks(NamedTuple):
    """What one call does to the read model (see :meth:`SessionStates.hooks`)."""

    start: _Hook | None
    answer: _Hook | None
    end: _Hook | None


_BATCH = 32
"""Updates of a session nobody watches are folded this many at a time (``apply_all``):
measured end to end, 16-32 cost least (12.7-12.9 us per update against 15.2 for 128, where
the waiting notifications outlive the young GC generation, and 14.8 for one at a time)."""


class _Entry:
    __slots__ = ("observers", "pending", "state")

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.pending: list[SessionNotification] = []  # not folded yet (nobody watched)
        self.observers: tuple[abc.ObserverBase[SessionState], ...] = ()

    def current(self) -> SessionState:
        """The latest state, with the pending updates folded in (lock held)."""
        if self.pending:
            pending, self.pending = self.pending, []
            self.state = self.state.apply_all(pending)
        return self.state


class SessionStates:
    """Every session's latest :class:`SessionState` on one connection (thread safe)."""

    __slots__ = ("_completed", "_entries", "_lock")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._entries: dict[str, _Entry] = {}
        self._completed = False

    # ------------------------------------------------------------------ feeding (loop)
    def on_update(self, notification: SessionNotification) -> None:
        """Fold one notification into its session's state and emit the new snapshot."""
        sid = notification.session_id
        with self._lock:
            entry = self._entry(sid)
            if not entry.observers:  # nobody watches: fold later, in batches (cheaper)
                pending = entry.pending
                pending.append(notification)
                if len(pending) >= _BATCH:
                    entry.current()
                return
            entry.state = state = entry.current().apply(notification)  # total on parsed updates
            for observer in entry.observers:
                _emit(observer, state)

    def _entry(self, session_id: str) -> _Entry:
        """The session's entry, made empty the first time (lock held)."""
        entry = self._entries.get(session_id)
        if entry is None:
            entry = self._entries[session_id] = _Entry(SessionState(session_id))
        return entry

    def hooks(self, method: str) -> CallHooks | None:
        """What a call of ``method`` does to the read model (``None``: nothing). Each hook
        takes ``(params, result)``: ``start`` runs as the request is sent, ``answer`` with its
        result, ``end`` however it ends (answered, failed or disposed).

        The session setup answers seed the session's modes and config options (a
        ``session/load`` first empties the state: the agent replays the history);
        ``set_mode``/``set_config_option`` answers record the change; a ``prompt``'s start and
        end end the chunk run of a turn; ``close``/``delete`` answers drop the session's state.
        """
        names = _HOOKS.get(method)
        if names is None:
            return None
        start, answer, end = (None if n is None else getattr(self, n) for n in names)
        return CallHooks(start, answer, end)

    def _change(self, session_id: str, change: Callable[[SessionState], SessionState]) -> None:
        with self._lock:
            entry = self._entry(session_id)
            entry.state = state = change(entry.current())
            for observer in entry.observers:
                _emit(observer, state)

    def _on_new(self, params: Any, result: Any) -> None:
        self._change(str(result.session_id), lambda s: s.with_setup(result))

    def _on_setup(self, params: Any, result: Any) -> None:
        self._change(str(params.session_id), lambda s: s.with_setup(result))

    def _on_set_mode(self, params: Any, result: Any) -> None:
        self._change(str(params.session_id), lambda s: s.with_mode(str(params.mode_id)))

    def _on_load(self, params: Any, result: Any) -> None:
        sid = str(params.session_id)
        self._change(sid, lambda s: SessionState(sid))  # the replay rebuilds it

    def _on_turn_end(self, params: Any, result: Any) -> None:
        # nothing visible changes: the state is replaced without an emission
        with self._lock:
            entry = self._entries.get(str(params.session_id))
            if entry is not None:
                entry.state = entry.current().with_turn_end()

    def _on_end(self, params: Any, result: Any) -> None:
        self.forget(str(params.session_id))

    def forget(self, session_id: str) -> None:
        """The session ended (``session/close`` or ``session/delete`` succeeded): complete its
        subscribers and drop its state."""
        with self._lock:
            entry = self._entries.pop(session_id, None)
            observers = entry.observers if entry is not None else ()
            for observer in observers:
                _complete(observer)

    def complete(self) -> None:
        """The connection ended: complete every subscriber (the states stay readable)."""
        with self._lock:
            self._completed = True
            for entry in self._entries.values():
                observers, entry.observers = entry.observers, ()
                for observer in observers:
                    _complete(observer)

    # ------------------------------------------------------------------ reading
    def latest(self, session_id: str) -> SessionState:
        """The session's latest snapshot (``SessionState(session_id)`` before any update)."""
        with self._lock:
            entry = self._entries.get(session_id)
            return entry.current() if entry is not None else SessionState(session_id)

    def observable(self, session_id: str) -> AcpObservable[SessionState]:
        """Hot: the latest snapshot at subscription, then one per update; completes when the
        connection ends or the session was closed by this client::

            updates(sid)        ──n1─────n2─────n3──|
            session_state(sid)  S0─S1────S2─────S3──|
            subscribed later           S1─S2─────S3──|   (the latest first)
        """

        def subscribe(
            observer: abc.ObserverBase[SessionState], _scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            with self._lock:
                entry = self._entry(session_id)
                _emit(observer, entry.current())
                if self._completed:
                    _complete(observer)
                    return Disposable()
                entry.observers = (*entry.observers, observer)

            def dispose() -> None:
                with self._lock:
                    entry.observers = tuple(o for o in entry.observers if o is not observer)

            return Disposable(dispose)

        return AcpObservable(subscribe)


_HOOKS: dict[str, tuple[str | None, str | None, str | None]] = {
    m.SESSION_NEW: (None, "_on_new", None),
    m.SESSION_LOAD: ("_on_load", "_on_setup", None),
    m.SESSION_RESUME: (None, "_on_setup", None),
    m.SESSION_SET_CONFIG_OPTION: (None, "_on_setup", None),
    m.SESSION_SET_MODE: (None, "_on_set_mode", None),
    m.SESSION_PROMPT: ("_on_turn_end", None, "_on_turn_end"),
    m.SESSION_CLOSE: (None, "_on_end", None),
    m.SESSION_DELETE: (None, "_on_end", None),
}
"""The calls that change the read model: (start, answer, end) hook names (see
:meth:`SessionStates.hooks`)."""


def _emit(observer: abc.ObserverBase[SessionState], state: SessionState) -> None:
    call_logged("a session_state() subscriber failed", observer.on_next, state)


def _complete(observer: abc.ObserverBase[SessionState]) -> None:
    call_logged("a session_state() subscriber failed on completion", observer.on_completed)


def fold_session_state(
    initial: SessionState | None = None,
) -> Callable[[reactivex.Observable[Any]], AcpObservable[SessionState]]:
    """An operator folding a stream of ``session/update``\\ s into :class:`SessionState`
    snapshots: ``updates(sid)`` (``SessionNotification``\\ s), ``prompt_turn()`` (bare
    ``SessionUpdate`` models; its ``PromptResponse`` emits nothing but ends the turn, see
    :meth:`SessionState.with_turn_end`) or recorded fixtures. One snapshot per update,
    starting from ``initial`` (default ``SessionState()``)::

        source                     ──u1──u2──R──|     (R: PromptResponse, ends the turn)
        fold_session_state()       ──S1──S2─────|     (S1 = initial.apply(u1), ...)

    Anything else in the stream errors with the ``TypeError``/``ValueError`` of
    :meth:`SessionState.apply` (e.g. another session's notification). Each subscription
    folds from ``initial`` again.
    """

    def operator(source: reactivex.Observable[Any]) -> AcpObservable[SessionState]:
        def subscribe(
            observer: abc.ObserverBase[SessionState], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            current = [SessionState() if initial is None else initial]
            done = [False]
            subscription: list[abc.DisposableBase] = []

            def on_next(item: Any) -> None:
                if done[0]:
                    return
                if isinstance(item, PromptResponse):
                    current[0] = current[0].with_turn_end()  # no emission: nothing visible
                    return
                try:
                    state = current[0].apply(item)
                except Exception as error:
                    done[0] = True
                    if subscription:
                        subscription[0].dispose()
                    observer.on_error(error)
                    return
                current[0] = state
                observer.on_next(state)

            def on_error(error: Exception) -> None:
                if not done[0]:
                    done[0] = True
                    observer.on_error(error)

            def on_completed() -> None:
                if not done[0]:
                    done[0] = True
                    observer.on_completed()

            inner: abc.DisposableBase = source.subscribe(
                on_next, on_error, on_completed, scheduler=scheduler
            )
            subscription.append(inner)
            if done[0]:
                inner.dispose()
            return inner

        return AcpObservable(subscribe)

    return operator
