"""``Connection``: the one state machine of a connection. It owns the phase (through
:class:`~rxacp.session.state.ConnectionState`, whose transition table it follows), the start,
the settle and the close; the other parts are tables it settles and knows nothing of it.

* **Start**: the first caller (or the first write, through the wire) creates the start task;
  every caller waits for the same task and sees the same outcome. A start that fails settles the
  connection hard and is raised to every waiter.
* **Settle** (:meth:`Connection.settle`, once, loop thread): every path ends here: EOF and the
  peer's exit (the wire reports them: :meth:`Connection.peer_closed`), a failed start,
  ``close()``, the end of ``close_gracefully()``. It fails every pending request, abandons the
  in-flight incoming requests, releases producer threads waiting on back-pressure and tells the
  close listeners; ``hard`` also fails the answers queued in the inbox.
* **Close**: the first ``close``/``close_gracefully`` wins. From another thread it runs on the
  loop and the caller waits (bounded); on the loop it becomes a task that
  :meth:`Connection.wait_closed_async` awaits. Either way it ends by shutting the worker pool
  down and stopping an owned loop.
* **End of stream**: once the connection has settled after EOF, the transport is closed in a
  task kept here.

This module is *not* responsible for the frames (``wire.py``) nor for what the tables hold; it
moves the phase towards ``starting`` and ``closing``, the wire to ``open``, and
:class:`ConnectionState` to ``closed``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..errors import AcpConnectionException, AcpException, exception_text
from ..transport.base import AcpTransport
from .backpressure import OutboundGate
from .completion import Completion
from .dispatch import InFlightRequests
from .inbox import Inbox
from .loop import LoopRunner
from .requests import PendingRequests
from .state import CLOSING, NEW, OPEN, STARTING, ConnectionState
from .workers import ExecutorWorkers, WorkerPool

if TYPE_CHECKING:
    from .wire import Wire

__all__ = ["Connection"]

_log = logging.getLogger("rxacp.session")

CLOSE_MARGIN = 10.0
"""Seconds a caller waits for a close beyond its graceful bound: the time the transport gets to
close (an agent process: stdin closed, SIGTERM, SIGKILL) once every pending request settled."""


class Connection:
    """One connection's start, settle and close (see the module docstring).

    Args:
        state: the connection's phase.
        runner: the connection's loop.
        transport: closed by the close (and after EOF).
        wire: starts the transport (:meth:`Wire.start`).
        gate: the producer gate, opened for good when the connection ends.
        pending: the outgoing requests, failed when it ends.
        in_flight: the incoming requests, abandoned when it ends.
        inbox: waited for by a graceful close; its queued answers fail on a hard settle.
        workers: shut down once the connection closed.
    """

    def __init__(
        self,
        state: ConnectionState,
        runner: LoopRunner,
        transport: AcpTransport,
        *,
        wire: Wire,
        gate: OutboundGate,
        pending: PendingRequests,
        in_flight: InFlightRequests,
        inbox: Inbox,
        workers: WorkerPool | ExecutorWorkers,
    ) -> None:
        self._state = state
        self._runner = runner
        self._transport = transport
        self._wire = wire
        self._gate = gate
        self._pending = pending
        self._in_flight = in_flight
        self._inbox = inbox
        self._workers = workers
        self._lock = threading.Lock()
        self._started = threading.Event()
        self._start_task: asyncio.Task[None] | None = None
        self._start_error: BaseException | None = None
        self._close_claimed = False
        self._close_task: asyncio.Task[None] | None = None  # a close started on the loop
        self._eof_task: asyncio.Task[None] | None = None
        self.closed = Completion("close")
        """Settles once a close (of either kind) finished: the connection ended, its transport
        closed and what it owns was released."""

    # ------------------------------------------------------------------ start
    def start(self, timeout: float) -> None:
        """Start and wait (see ``AcpSession.start``); on the loop thread only schedule it."""
        if self._runner.in_loop():
            self.ensure_started()
            return
        if not self._started.is_set():
            try:
                self._runner.run(self.start_async(), timeout)
            except AcpException:
                raise
            except TimeoutError as exc:
                message = f"transport did not start within {timeout:g} s"
                raise AcpConnectionException(message) from exc
            except BaseException as exc:
                raise AcpConnectionException(
                    f"transport failed to start: {exception_text(exc)}"
                ) from exc
        self._raise_start_error()

    async def start_async(self) -> None:
        """Start from code running on the connection's loop, and wait for it."""
        self.ensure_started()
        task = self._start_task
        if task is not None and not task.done():
            await asyncio.wait([task])
        self._raise_start_error()

    def ensure_started(self) -> None:
        """Start in the background (on the loop) unless started already."""
        if not self._state.advance(NEW, STARTING):
            return
        self._start_task = self._runner.loop.create_task(self._start())

    # ------------------------------------------------------------------ settle
    def settle(self, reason: AcpConnectionException, hard: bool) -> None:
        """End the connection for ``reason``, once (loop thread): fail every pending request,
        abandon the in-flight incoming requests, release waiting producers, tell the close
        listeners. ``hard`` also fails the answers queued in the inbox; otherwise (EOF) the
        transport is closed next."""
        if self._state.end(reason):
            self._started.set()  # nobody need wait for the start any more
            self._gate.open_forever()
            self._pending.fail_all(reason)
            self._in_flight.abandon_all()
            self._state.announce_end()
            if not hard:
                self._eof_task = self._runner.loop.create_task(self._close_transport())
        if hard:
            self._pending.fail_all(reason, self._inbox.clear())

    def peer_closed(self, reason: AcpConnectionException) -> None:
        """The incoming stream ended (EOF, the peer's exit; loop thread): settle, then close
        the transport."""
        self.settle(reason, False)

    def _raise_start_error(self) -> None:
        error = self._start_error
        if isinstance(error, AcpException):
            raise error
        if error is not None:
            raise AcpConnectionException(
                f"transport failed to start: {exception_text(error)}"
            ) from error

    async def _start(self) -> None:
        try:
            await self._wire.start(self._runner.loop)
        except BaseException as exc:  # reported to every caller waiting and every request
            self._start_error = exc
            self.settle(
                AcpConnectionException(f"transport failed to start: {exception_text(exc)}"), True
            )
            if not isinstance(exc, Exception):
                raise
        finally:
            self._started.set()

    # ------------------------------------------------------------------ close
    def close(self, timeout: float) -> None:
        """Close at once (see ``AcpSession.close``); only the first close of either kind runs."""
        self._close_once(self._close_now, timeout)

    def close_gracefully(self, bound: float) -> None:
        """Stop taking new work, wait for queued incoming work and the transport's writes, then
        close. ``bound`` is one deadline shared by both waits; the close itself (settling every
        pending request, closing the transport) runs after it whatever the waits did."""
        self._close_once(lambda: self._close_gracefully(bound), bound + CLOSE_MARGIN)

    async def wait_closed_async(self) -> None:
        """Wait until the connection ended and, when the close was started on the connection's
        own loop and this is that loop, until it finished too."""
        await self._state.wait_terminated(self._runner.call)
        task = self._close_task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            await asyncio.shield(task)

    def _claim_close(self) -> bool:
        with self._lock:
            if self._close_claimed:
                return False
            self._close_claimed = True
            return True

    def _close_once(self, closing: Callable[[], Coroutine[Any, Any, None]], timeout: float) -> None:
        if not self._claim_close():
            return
        if self._runner.in_loop():
            self._close_task = self._runner.loop.create_task(self._close_then_finish(closing()))
            return
        try:
            self._runner.run(closing(), timeout)
        except Exception:
            # the close overran its wait (a transport that does not close): whatever it did,
            # every pending request still settles before the loop stops (DESIGN §3)
            _log.warning("close did not finish within %.1f s", timeout, exc_info=True)
            self._settle_from_outside(AcpConnectionException("connection closed"))
        self._finish_close()

    def _settle_from_outside(self, reason: AcpConnectionException) -> None:
        """Settle from a thread other than the loop's, waiting a bounded time for the loop."""
        try:
            self._runner.run(self._settle_now(reason), CLOSE_MARGIN)
        except Exception:  # the loop itself is stuck: nothing more can be done from here
            _log.error("could not settle the connection: its loop does not run", exc_info=True)

    async def _settle_now(self, reason: AcpConnectionException) -> None:
        self.settle(reason, True)

    async def _close_gracefully(self, bound: float) -> None:
        self._state.advance(OPEN, CLOSING)
        try:
            async with asyncio.timeout(bound):  # one deadline for both waits
                await self._inbox.wait_idle()
                await self._transport.drain()
        except TimeoutError:
            _log.warning("graceful close: drain did not finish within %.1f s", bound)
        await self._close_now("connection closed gracefully")

    async def _close_now(self, reason: str = "connection closed") -> None:
        self.settle(AcpConnectionException(reason), True)
        await self._close_transport()

    async def _close_transport(self) -> None:
        eof_close = self._eof_task
        if eof_close is not None and eof_close is not asyncio.current_task():
            # closing since the peer's EOF (it drains what is still queued): let that finish
            # rather than return at once from a second close() and stop the loop under it
            await asyncio.shield(eof_close)
            return
        try:
            await self._transport.close()
        except Exception:  # pragma: no cover - transports should not fail to close
            _log.warning("transport failed to close", exc_info=True)

    async def _close_then_finish(self, closing: Coroutine[Any, Any, None]) -> None:
        """Close from a task on the connection's own loop, then release the workers and loop."""
        try:
            await closing
        finally:
            self._finish_close()

    def _finish_close(self) -> None:
        try:
            self._workers.shutdown()
        finally:
            self.closed.complete()
            self._runner.stop()
