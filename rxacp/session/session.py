"""``AcpSession``: the JSON-RPC engine one ACP connection runs on, for either role.

The contract (DESIGN §3):

* Outgoing requests are **cold** :class:`AcpObservable`\\ s: nothing is sent until subscription;
  each subscription allocates an id and writes one request. A result answer emits the (typed)
  result then completes; an error answer errors with :class:`AcpProtocolException`.
* Disposing before the answer (by the subscriber, ``take_until``, ``timeout`` or the request
  timeout) removes the pending entry and sends ``$/cancel_request`` exactly once, and only if the
  request was written. A late answer is discarded.
* Every pending request settles on every path: EOF, transport error, ``close()`` and
  ``close_gracefully()`` error it with :class:`AcpConnectionException` at once.
* Incoming requests go to registered handlers that return Observables; exactly one answer per
  request whatever races. ``$/cancel_request`` disposes the handler and answers ``-32800``.
* Incoming notifications reach their handlers in arrival order, one finished before the next
  starts; a response is delivered only after the notifications that arrived before it.

Threads: all state lives on the connection's event loop (see :class:`LoopRunner`); public methods
may be called from any thread and hand their work to the loop. Timers run on the injectable
``scheduler``.

The engine is split by concern: this module holds the connection's lifecycle (start, close,
EOF), frame intake and writing; ``requests.py`` the outgoing requests, ``dispatch.py`` incoming
requests, notifications and the ordered inbox, ``backpressure.py`` the producer gate.

This module is *not* responsible for ACP semantics (prompt turns, capabilities, typed handler
registration): those live in ``rxacp.client`` and ``rxacp.agent``.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from reactivex import abc
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler

from .. import jsonrpc
from .._durations import Duration, to_seconds
from ..errors import (
    AcpConnectionException,
    AcpErrorCodes,
    AcpException,
)
from ..transport.base import AcpTransport, Frame, TransportClosed
from .abandoned import AbandonedRequests
from .backpressure import GatedRunner, OutboundGate
from .dispatch import IncomingDispatch, NotificationHandler, RequestHandler
from .incoming import IncomingRequest
from .loop import LoopRunner
from .pending import PendingRequest
from .requests import CANCEL_REQUEST, OutgoingRequests
from .stats import SessionStats
from .workers import WorkerPool

__all__ = [
    "CANCEL_REQUEST",
    "AcpSession",
    "NotificationHandler",
    "RequestHandler",
    "SessionStats",
]

_log = logging.getLogger("rxacp.session")
_wire = logging.getLogger("rxacp.wire")


_T = TypeVar("_T")


class AcpSession(OutgoingRequests, IncomingDispatch):
    """The JSON-RPC engine of one connection (used by both clients and agents).

    Args:
        transport: moves the frames.
        role: ``"client"`` or ``"agent"``; only used in thread names and logs.
        request_timeout: default timeout of outgoing requests (``timedelta`` or seconds; ``0`` or
            ``None`` disables). A request may override it.
        scheduler: runs every timer; default ``AsyncIOThreadSafeScheduler`` on the loop.
        loop: an event loop the caller already runs; default: a new loop on a daemon thread.
        max_workers: size of the pool that runs blocking handlers.
        max_queued_writes: back-pressure bound: how many writes other threads may queue for
            the loop before they block (see ``docs/reliability.md``).
    """

    def __init__(
        self,
        transport: AcpTransport,
        *,
        role: str = "peer",
        request_timeout: Duration | None = 60.0,
        scheduler: abc.SchedulerBase | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        max_workers: int = 32,
        max_queued_writes: int = 1024,
    ) -> None:
        if isinstance(max_queued_writes, bool) or not isinstance(max_queued_writes, int):
            raise TypeError(f"max_queued_writes must be an int, got {max_queued_writes!r}")
        if max_queued_writes < 1:
            raise ValueError(f"max_queued_writes must be >= 1, got {max_queued_writes}")
        self._transport = transport
        self._role = role
        self.stats = SessionStats()
        """Counters of skipped and refused input, and of producer waits."""
        self._gate = OutboundGate(max_queued_writes, self.stats)
        self._runner: LoopRunner = GatedRunner(loop, name=f"rxacp-{role}-loop", gate=self._gate)
        cork, uncork = getattr(transport, "cork", None), getattr(transport, "uncork", None)
        if callable(cork) and callable(uncork):  # one write per batch of hand-offs (measured)
            self._runner.batch_hooks = (cork, uncork)
        self.scheduler: abc.SchedulerBase = scheduler or AsyncIOThreadSafeScheduler(
            self._runner.loop
        )
        self._request_timeout = to_seconds(request_timeout, name="request_timeout")
        self._workers = WorkerPool(max_workers, name=f"rxacp-{role}-worker")
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, tuple[NotificationHandler, bool]] = {}
        self.unhandled_request_hint: Callable[[str], str | None] | None = None
        self._pending: dict[int, PendingRequest] = {}
        self._abandoned = AbandonedRequests(role)
        self._incoming: dict[Any, IncomingRequest] = {}
        self._next_id = 0
        self._inbox: collections.deque[tuple[Any, ...]] = collections.deque()
        self._inbox_busy = False
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._state = "new"  # new → starting → open → closing → closed
        self._state_lock = threading.Lock()
        self._early_frames: list[Frame] = []
        self._started = threading.Event()
        self._start_error: BaseException | None = None
        self._closed_error: AcpConnectionException | None = None
        self._close_listeners: list[Callable[[AcpConnectionException], None]] = []
        self._terminated = threading.Event()
        self._close_called = False
        self._close_task: asyncio.Task[None] | None = None  # a close started on the loop
        self._objects = transport.carries_objects

    # ------------------------------------------------------------------ properties
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop that drives this connection."""
        return self._runner.loop

    @property
    def runner(self) -> LoopRunner:
        """The loop runner (use ``runner.call(fn)`` to run code on the connection's loop)."""
        return self._runner

    @property
    def workers(self) -> WorkerPool:
        """The pool that runs blocking handlers."""
        return self._workers

    @property
    def request_timeout(self) -> float | None:
        """Default timeout of outgoing requests in seconds (``None``: none)."""
        return self._request_timeout

    @property
    def is_open(self) -> bool:
        """True until the connection closed (EOF, error or close)."""
        return self._state not in ("closing", "closed")

    @property
    def closed_error(self) -> AcpConnectionException | None:
        """Why the connection ended, once it has."""
        return self._closed_error

    @property
    def pending_request_count(self) -> int:
        """Outgoing requests still waiting for an answer."""
        return len(self._pending)

    @property
    def incoming_request_count(self) -> int:
        """Incoming requests not answered yet."""
        return len(self._incoming)

    @property
    def outbound_paused(self) -> bool:
        """True while the transport's write buffer is over its high-water mark (back-pressure:
        producer threads calling ``send_notification``/``send_update`` wait; see
        ``docs/reliability.md``). Loop-thread producers may poll it."""
        return self._gate.paused

    # ------------------------------------------------------------------ registration
    def set_request_handler(self, method: str, handler: RequestHandler) -> None:
        """Register the handler of incoming requests for ``method`` (replacing any)."""
        self._request_handlers[method] = handler

    def set_notification_handler(
        self, method: str, handler: NotificationHandler, *, ordered: bool = True
    ) -> None:
        """Register the handler of incoming notifications for ``method``.

        ``ordered=False`` runs it as soon as the notification arrives, ahead of queued ones
        (used for cancellation, which must not wait behind a slow consumer).
        """
        self._notification_handlers[method] = (handler, ordered)

    def has_request_handler(self, method: str) -> bool:
        """True when incoming ``method`` requests have a handler."""
        return method in self._request_handlers

    # ------------------------------------------------------------------ lifecycle
    def start(self, timeout: float = 30.0) -> None:
        """Start the transport. Idempotent and thread-safe.

        From any thread but the loop's it blocks until the transport started and raises
        :class:`AcpConnectionException` if it could not. On the loop thread it schedules the start
        (frames sent meanwhile are queued); use :meth:`start_async` there to wait.
        """
        if self._begin_start():
            if self._runner.in_loop():
                self._start_in_background()
                return
            try:
                self._runner.run(self._start_async(), timeout)
            except AcpException:
                raise
            except BaseException as exc:
                raise AcpConnectionException(f"transport failed to start: {exc}") from exc
            return
        if not self._runner.in_loop():
            self._started.wait(timeout)
        if self._start_error is not None:
            raise AcpConnectionException(f"transport failed to start: {self._start_error}")

    async def start_async(self) -> None:
        """Start the transport from code running on the connection's loop."""
        if self._begin_start():
            await self._start_async()
        elif not self._started.is_set():
            while not self._started.is_set():  # another caller is starting it on this loop
                await asyncio.sleep(0.001)
        if self._start_error is not None:
            raise AcpConnectionException(f"transport failed to start: {self._start_error}")

    def _begin_start(self) -> bool:
        with self._state_lock:
            if self._state != "new":
                return False
            self._state = "starting"
            return True

    async def _start_async(self) -> None:
        try:
            await self._transport.start(self.loop, self)
        except BaseException as exc:
            self._start_error = exc
            self._started.set()
            self._shutdown(AcpConnectionException(f"transport failed to start: {exc}"), hard=True)
            if isinstance(exc, AcpException):
                raise
            raise AcpConnectionException(f"transport failed to start: {exc}") from exc
        if self._state == "starting":
            self._state = "open"
        early, self._early_frames = self._early_frames, []
        for frame in early:
            self._transport.send(frame)
        self._started.set()

    def _ensure_started(self) -> None:
        if self._state == "new" and self._begin_start():
            self._start_in_background()

    def _start_in_background(self) -> None:
        task = self.loop.create_task(self._start_async())
        # the failure is reported to every pending request; retrieve it so asyncio stays quiet
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def add_close_listener(self, listener: Callable[[AcpConnectionException], None]) -> None:
        """Call ``listener(reason)`` on the loop when the connection ends (now, if it has)."""
        if self._closed_error is not None and self._terminated.is_set():
            listener(self._closed_error)  # already over (the loop may be gone)
            return

        def add() -> None:
            if self._closed_error is not None:
                listener(self._closed_error)
            else:
                self._close_listeners.append(listener)

        self._runner.call(add)

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the connection ended; False if ``timeout`` passed first."""
        return self._terminated.wait(timeout)

    async def wait_closed_async(self) -> None:
        """Wait (in any asyncio loop) until the connection ended.

        When the close was started on the connection's own loop, this also waits for the
        transport to finish closing (for a spawned agent: until the process is gone), so a
        caller's loop may stop right after it.
        """
        if not self._terminated.is_set():
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()

            def resolve() -> None:
                if not future.done():
                    future.set_result(None)

            def done(_: AcpConnectionException) -> None:
                loop.call_soon_threadsafe(resolve)

            self.add_close_listener(done)
            await future
        task = self._close_task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            await asyncio.shield(task)

    def close(self, timeout: float = 10.0) -> None:
        """Close at once: pending requests error, handlers are disposed, the transport closes.

        Idempotent; safe from any thread, including handlers on the loop (then it is scheduled).
        """
        with self._state_lock:
            if self._close_called:
                return
            self._close_called = True
        if self._runner.in_loop():
            self._close_task = self.loop.create_task(self._close_then_finish(self._close_async()))
            return
        try:
            self._runner.run(self._close_async(), timeout)
        except Exception:  # pragma: no cover - best effort
            _log.debug("close did not finish cleanly", exc_info=True)
        self._finish_close()

    async def aclose(self) -> None:
        """Close from code running on the connection's loop."""
        with self._state_lock:
            if self._close_called:
                return
            self._close_called = True
        await self._close_async()

    def close_gracefully(self, timeout: float | None = None) -> None:
        """Stop taking new work, let queued notifications drain and writes flush, then close.

        The drain is bounded by ``timeout`` (default: the request timeout, or 60 s).
        """
        with self._state_lock:
            if self._close_called:
                return
            self._close_called = True
        bound = timeout if timeout is not None else (self._request_timeout or 60.0)
        if self._runner.in_loop():
            closing = self._close_gracefully_async(bound)
            self._close_task = self.loop.create_task(self._close_then_finish(closing))
            return
        try:
            self._runner.run(self._close_gracefully_async(bound), bound + 10.0)
        except Exception:  # pragma: no cover - best effort
            _log.debug("graceful close did not finish cleanly", exc_info=True)
        self._finish_close()

    async def _close_gracefully_async(self, bound: float) -> None:
        if self._state == "open":
            self._state = "closing"
        try:
            await asyncio.wait_for(self._inbox_idle(), bound)
            await asyncio.wait_for(self._transport.drain(), bound)
        except TimeoutError:
            _log.warning("graceful close: drain did not finish within %.1f s", bound)
        await self._close_async("connection closed gracefully")

    async def _close_async(self, reason: str = "connection closed") -> None:
        self._shutdown(AcpConnectionException(reason), hard=True)
        if self._state != "new":
            try:
                await self._transport.close()
            except Exception:  # pragma: no cover - transports should not fail to close
                _log.warning("transport failed to close", exc_info=True)

    async def _close_then_finish(self, closing: Coroutine[Any, Any, None]) -> None:
        """Close from a task on our own loop, then release the workers and the loop."""
        try:
            await closing
        finally:
            self._finish_close()

    def _finish_close(self) -> None:
        self._workers.shutdown()
        self._runner.stop()

    # ------------------------------------------------------------------ FrameReceiver
    def on_frame(self, frame: Frame) -> None:
        """Transport callback (loop thread): one incoming message."""
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("%s <- %s", self._role, frame)
        try:
            msg = jsonrpc.parse_message(frame)
        except jsonrpc.ParseError as exc:
            self.stats.parse_errors += 1
            self._write_error(None, AcpErrorCodes.PARSE_ERROR, f"Parse error: {exc}")
            return
        except jsonrpc.InvalidMessage as exc:
            self.stats.invalid_messages += 1
            if exc.answerable:
                self._write_error(
                    exc.id, AcpErrorCodes.INVALID_REQUEST, f"Invalid request: {exc.reason}"
                )
            else:
                _log.warning("%s: ignoring invalid message: %s", self._role, exc.reason)
            return
        kind = type(msg)
        if kind is jsonrpc.Notification:
            self._on_notification(msg)  # type: ignore[arg-type]
        elif kind is jsonrpc.Request:
            self._on_request(msg)  # type: ignore[arg-type]
        else:
            self._on_response(msg)  # type: ignore[arg-type]

    def on_frame_too_large(self, size: int) -> None:
        """Transport callback: an oversized line was discarded."""
        self.stats.oversized_frames += 1
        _log.warning(
            "%s: discarded an incoming message of %d bytes (over the size cap)", self._role, size
        )
        self._write_error(
            None,
            AcpErrorCodes.PARSE_ERROR,
            f"Parse error: message of {size} bytes exceeds the size cap",
        )

    def on_write_paused(self) -> None:
        """Optional transport callback: the write buffer passed its high-water mark."""
        self._gate.pause()

    def on_write_resumed(self) -> None:
        """Optional transport callback: the write buffer drained below its low-water mark."""
        self._gate.resume()

    def on_closed(self, info: TransportClosed) -> None:
        """Transport callback: the incoming stream ended."""
        self._gate.open_forever()
        reason = info.reason if info.error is None else f"{info.reason}: {info.error}"
        self._shutdown(
            AcpConnectionException(reason, exit_code=info.exit_code, stderr_tail=info.stderr_tail),
            hard=False,
        )

    # ------------------------------------------------------------------ writing
    def _encode(self, msg: dict[str, Any]) -> Frame:
        return msg if self._objects else jsonrpc.serialize(msg)

    def _write(self, msg: dict[str, Any]) -> None:
        try:
            frame = self._encode(msg)
        except (TypeError, ValueError) as exc:
            _log.error("%s: cannot serialize outgoing message: %s", self._role, exc)
            return
        self._send_frame(frame)

    def _send_frame(self, frame: Frame) -> None:
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("%s -> %s", self._role, frame)
        state = self._state
        if state == "open" or state == "closing":
            self._transport.send(frame)
        elif state in ("new", "starting"):
            self._early_frames.append(frame)

    def _write_error(self, rid: Any, code: int, message: str) -> None:
        self._write(jsonrpc.error_obj(rid, {"code": int(code), "message": message}))

    # ------------------------------------------------------------------ shutdown
    def _shutdown(self, reason: AcpConnectionException, *, hard: bool) -> None:
        """Settle everything (loop thread). ``hard`` also fails answers queued in the inbox."""
        if self._state != "closed":
            self._state = "closed"
            self._closed_error = reason
            self._started.set()
            self._gate.open_forever()  # release producer threads waiting on back-pressure
            pending = list(self._pending.values())
            self._pending.clear()
            for state in pending:
                if state.claim():
                    self._emit_error(state, reason)
            incoming = list(self._incoming.values())
            self._incoming.clear()
            for req in incoming:
                req.abandon()
            self._abandoned.release_all()
            listeners, self._close_listeners = self._close_listeners, []
            for listener in listeners:
                try:
                    listener(reason)
                except Exception:
                    _log.exception("%s: close listener failed", self._role)
            self._terminated.set()
            if not hard:
                self.loop.create_task(self._close_transport_after_eof())
        if hard:
            queued = list(self._inbox)
            self._inbox.clear()
            self._inbox_busy = False
            for item in queued:
                if item[0] != "r":
                    continue
                if item[1].claim():
                    self._emit_error(item[1], reason)
                else:
                    item[1].run_late()  # an abandoned request's late answer
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def _close_transport_after_eof(self) -> None:
        try:
            await self._transport.close()
        except Exception:  # pragma: no cover
            _log.debug("transport close after EOF failed", exc_info=True)
