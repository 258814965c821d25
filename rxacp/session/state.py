"""The phase of one connection, shared by the parts of the engine.

``new → starting → open → closing → closed``; any phase may end in ``closed``. The legal moves
are :data:`TRANSITIONS`, and the phase is written in exactly one place,
:meth:`ConnectionState.advance` (a checked compare-and-set under the state's own lock), so a
move that is not in the table fails loudly instead of leaving the connection half-way. The
connection asks for ``starting`` and ``closing``, the wire for ``open``, :meth:`end` for
``closed``; the pending-requests table, the inbox and the in-flight table only read the phase
(to refuse work once the connection is closing).

This module is *not* responsible for deciding when to move (``connection.py``, ``wire.py`` and
the session's settle do).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from ..errors import AcpConnectionException

__all__ = [
    "CLOSED",
    "CLOSING",
    "NEW",
    "OPEN",
    "STARTING",
    "TRANSITIONS",
    "ConnectionState",
    "IllegalTransition",
]

_log = logging.getLogger("rxacp.session")

NEW, STARTING, OPEN, CLOSING, CLOSED = "new", "starting", "open", "closing", "closed"

TRANSITIONS: dict[str, frozenset[str]] = {
    NEW: frozenset({STARTING, CLOSED}),  # the first start (or a close before any start)
    STARTING: frozenset({OPEN, CLOSED}),  # the transport started (or failed to)
    OPEN: frozenset({CLOSING, CLOSED}),  # a graceful close began (or the connection ended)
    CLOSING: frozenset({CLOSED}),  # the graceful close finished
    CLOSED: frozenset(),
}
"""Every legal move of a connection's phase: ``TRANSITIONS[from]`` is where it may go."""


class IllegalTransition(RuntimeError):
    """A move of the phase that :data:`TRANSITIONS` does not allow (an engine bug)."""


CloseListener = Callable[[AcpConnectionException], None]


class ConnectionState:
    """Where a connection is in its life, and why it ended once it has."""

    __slots__ = ("_listeners", "_lock", "error", "phase", "terminated")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.phase = NEW
        """The current phase (read it freely; only :meth:`advance` writes it)."""
        self.error: AcpConnectionException | None = None
        """Why the connection ended (set once, when it reaches ``closed``)."""
        self.terminated = threading.Event()
        """Set once the connection ended and its close listeners ran."""
        self._listeners: list[CloseListener] = []

    def advance(self, expected: str, to: str) -> bool:
        """Move from ``expected`` to ``to`` if the phase is ``expected`` now; False (and no
        change) otherwise. Thread-safe. Raises :class:`IllegalTransition` when the move is not
        in :data:`TRANSITIONS`."""
        if to not in TRANSITIONS[expected]:
            raise IllegalTransition(f"connection phase cannot move from {expected} to {to}")
        with self._lock:
            if self.phase != expected:
                return False
            self.phase = to
            return True

    def end(self, reason: AcpConnectionException) -> bool:
        """Move to ``closed`` from any phase (loop thread); False if it already was. Does not
        tell the listeners yet: :meth:`announce_end` does, once the rest of the engine
        settled."""
        with self._lock:
            if self.phase == CLOSED:
                return False
            self.phase = CLOSED
            self.error = reason
            return True

    def announce_end(self) -> None:
        """Tell every close listener why the connection ended, then set :attr:`terminated`."""
        listeners, self._listeners = self._listeners, []
        assert self.error is not None
        for listener in listeners:
            try:
                listener(self.error)
            except Exception:
                _log.exception("a close listener failed")
        self.terminated.set()

    def add_listener(self, listener: CloseListener) -> None:
        """Call ``listener(reason)`` when the connection ends, or now if it has (loop thread)."""
        if self.error is not None:
            listener(self.error)
        else:
            self._listeners.append(listener)

    async def wait_terminated(self, runner_call: Callable[[Callable[[], None]], None]) -> None:
        """Wait in the running loop (any loop) until :attr:`terminated`; ``runner_call`` runs a
        function on the connection's loop."""
        if self.terminated.is_set():
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not future.done():
                future.set_result(None)

        def done(_: AcpConnectionException) -> None:
            loop.call_soon_threadsafe(resolve)

        runner_call(lambda: self.add_listener(done))
        await future

    @property
    def refusing(self) -> bool:
        """True once the connection stopped taking new work (``closing`` or ``closed``)."""
        return self.phase == CLOSING or self.phase == CLOSED

    def refusal(self) -> AcpConnectionException:
        """The error new work gets while the connection is closing or closed."""
        if self.error is not None:
            return self.error
        return AcpConnectionException(
            "connection closed" if self.phase == CLOSED else "connection is closing"
        )
