"""The books a client keeps per ACP session: :class:`KnownSessions` (the sessions it created,
loaded, resumed or forked; an agent's request for any other is refused) and
:class:`PermissionTracker` (the pending ``session/request_permission`` requests that
``session/cancel`` answers ``cancelled``).

This module is *not* responsible for refusing or answering anything itself (``handlers.py``
and the client do, with these books).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from reactivex import operators as ops

from ..errors import AcpProtocolException, peer_echo
from ..schema import RequestPermissionResponse
from ..schema import methods as m
from ..session import AcpObservable, IncomingRequest

__all__ = [
    "MAX_PENDING_PERMISSIONS",
    "TRACKED",
    "KnownSessions",
    "PermissionTracker",
    "unknown_session",
]

MAX_PENDING_PERMISSIONS = 16
"""Permission requests one session may have waiting for an answer at once; more are refused
``-32600`` without reaching the application (a person answers them one at a time; an agent
that asks for more is flooding). Issue 30."""

_CREATING = frozenset((m.SESSION_NEW, m.SESSION_FORK))
"""Calls whose answer names a new session."""
TRACKED = _CREATING | {m.SESSION_LOAD, m.SESSION_RESUME, m.SESSION_CLOSE}
"""Calls whose outcome changes :class:`KnownSessions` (:meth:`KnownSessions.tracked`)."""


class KnownSessions:
    """The ACP sessions this client created, loaded, resumed or forked (and did not close).

    Thread-safe. An agent's request naming any other session is answered ``-32002`` without
    reaching the application (:func:`install`), except while a ``session/new`` or
    ``session/fork`` is unanswered (the agent may use the new id before its answer is
    delivered).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set()
        self._creating = 0

    def add(self, session_id: str) -> None:
        if session_id in self._ids:  # a known session's next call: no lock (a set read is atomic)
            return
        with self._lock:
            self._ids.add(session_id)

    def discard(self, session_id: str) -> None:
        with self._lock:
            self._ids.discard(session_id)

    def creating(self, delta: int) -> None:
        """A ``session/new`` or ``session/fork`` was sent (``+1``) or settled (``-1``)."""
        with self._lock:
            self._creating += delta

    def accepts(self, session_id: str) -> bool:
        """Whether an agent's request for ``session_id`` may reach the application."""
        with self._lock:
            return session_id in self._ids or self._creating > 0

    def tracked(
        self,
        method: str,
        params: Any,
        send: Callable[[Callable[[], None]], AcpObservable[Any]],
        gate: Callable[[], None],
    ) -> AcpObservable[Any]:
        """``send(before)``'s call (one of :data:`TRACKED`), kept in these books:
        ``session/new`` and ``session/fork`` add the answered id (and accept any id while
        unanswered), ``session/load`` and ``session/resume`` theirs when sent (dropped if
        refused), and ``session/close`` drops it once answered. ``gate`` runs first, at each
        subscription. (Any other call naming a session, a prompt..., adds it when made.)"""
        named = str(getattr(params, "session_id", "") or "")
        creates = method in _CREATING
        sent = [False]

        def before() -> None:
            gate()
            sent[0] = True
            if creates:
                self.creating(+1)
            elif method != m.SESSION_CLOSE:
                self.add(named)

        def settled() -> None:
            if sent[0] and creates:
                sent[0] = False
                self.creating(-1)

        def on_next(result: Any) -> None:
            if creates:
                self.add(str(getattr(result, "session_id", "")))
            elif method == m.SESSION_CLOSE:
                self.discard(named)

        def on_error(_error: Exception) -> None:
            if method in (m.SESSION_LOAD, m.SESSION_RESUME):
                self.discard(named)

        source: AcpObservable[Any] = send(before).pipe(
            ops.do_action(on_next=on_next, on_error=on_error), ops.finally_action(settled)
        )
        return source


def unknown_session(session_id: str) -> AcpProtocolException:
    """The ``-32002`` of an agent's request for a session this client does not know (the id
    echoed bounded: :func:`~rxacp.errors.peer_echo`)."""
    return AcpProtocolException.resource_not_found(
        f"Resource not found: unknown session {peer_echo(session_id)} (this client did not "
        "create or load it, or closed it)",
        {"sessionId": peer_echo(session_id, quote=False)},
    )


class PermissionTracker:
    """Pending incoming ``session/request_permission`` requests, per ACP session id.

    Thread-safe. :meth:`cancel_session` answers every pending one with outcome ``cancelled``
    (which also disposes the user's handler). At most ``limit`` wait per session:
    :meth:`track` refuses more.
    """

    def __init__(self, limit: int = MAX_PENDING_PERMISSIONS) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, set[IncomingRequest]] = {}
        self.limit = limit

    def track(self, session_id: str, req: IncomingRequest) -> None:
        """Count ``req`` as waiting; raises the ``-32600`` when ``limit`` already wait."""
        with self._lock:
            pending = self._pending.setdefault(session_id, set())
            if len(pending) >= self.limit:
                raise AcpProtocolException.invalid_request(
                    f"Invalid request: {len(pending)} permission requests of session "
                    f"{peer_echo(session_id)} are already waiting for an answer (this "
                    f"client's limit is {self.limit}); wait for their answers"
                )
            pending.add(req)

    def untrack(self, session_id: str, req: IncomingRequest) -> None:
        with self._lock:
            reqs = self._pending.get(session_id)
            if reqs is not None:
                reqs.discard(req)
                if not reqs:
                    del self._pending[session_id]

    def pending_count(self) -> int:
        """How many permission requests are waiting, in all sessions."""
        with self._lock:
            return sum(len(v) for v in self._pending.values())

    def cancel_session(self, session_id: str) -> int:
        """Answer the session's pending permission requests ``cancelled``; returns how many."""
        with self._lock:
            reqs = self._pending.pop(session_id, set())
        answered = 0
        for req in reqs:
            if req.respond(RequestPermissionResponse.cancelled()):
                answered += 1
        return answered
