"""The phase of one connection, shared by the parts of the engine.

``new → starting → open → closing → closed``. The lifecycle and the wire move it; the
pending-requests table, the inbox and the in-flight table only read it (to refuse work once the
connection is closing). All reads and writes happen on the connection's loop, except that a
caller thread may read it to settle a request at once when the loop is already gone.

This module is *not* responsible for moving between phases (``lifecycle.py`` moves it to
``starting`` and ``closing``, ``wire.py`` to ``open``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from ..errors import AcpConnectionException

__all__ = ["CLOSED", "CLOSING", "NEW", "OPEN", "STARTING", "ConnectionState"]

_log = logging.getLogger("rxacp.session")

NEW, STARTING, OPEN, CLOSING, CLOSED = "new", "starting", "open", "closing", "closed"

CloseListener = Callable[[AcpConnectionException], None]


class ConnectionState:
    """Where a connection is in its life, and why it ended once it has."""

    __slots__ = ("_listeners", "error", "phase", "terminated")

    def __init__(self) -> None:
        self.phase = NEW
        self.error: AcpConnectionException | None = None
        """Why the connection ended (set once, when it reaches ``closed``)."""
        self.terminated = threading.Event()
        """Set once the connection ended and its close listeners ran."""
        self._listeners: list[CloseListener] = []

    def end(self, reason: AcpConnectionException) -> bool:
        """Move to ``closed`` (loop thread); False if it already was. Does not tell the
        listeners yet: :meth:`announce_end` does, once the rest of the engine settled."""
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
