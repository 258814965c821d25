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

import pydantic
import reactivex
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler

from .. import jsonrpc
from .._durations import Duration, to_seconds
from ..errors import (
    AcpConnectionException,
    AcpErrorCodes,
    AcpException,
    AcpProtocolException,
    AcpTimeoutException,
    error_to_exception,
    exception_to_error,
)
from ..transport.base import AcpTransport, Frame, TransportClosed
from .incoming import IncomingNotification, IncomingRequest
from .loop import LoopRunner
from .observable import AcpObservable
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

CANCEL_REQUEST = "$/cancel_request"

_T = TypeVar("_T")

RequestHandler = Callable[[IncomingRequest], "reactivex.Observable[Any] | None"]
"""Handles one request: return an Observable of the result (first value answers), or ``None``
when the handler answers later through :meth:`IncomingRequest.respond`."""

NotificationHandler = Callable[[IncomingNotification], "reactivex.Observable[Any] | None"]
"""Handles one notification: return ``None`` when done, or an Observable the drain waits for."""

_DEFAULT: Any = object()


def _to_wire(value: Any) -> Any:
    to_wire = getattr(value, "to_wire", None)
    if to_wire is not None:
        return to_wire()
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


class _Outgoing:
    """One outgoing request from subscription to settlement."""

    __slots__ = (
        "done",
        "id",
        "lock",
        "method",
        "observer",
        "params",
        "result_type",
        "timeout",
        "timer",
        "written",
    )

    def __init__(
        self,
        method: str,
        params: Any,
        result_type: Any,
        observer: abc.ObserverBase[Any],
        timeout: float | None,
    ) -> None:
        self.method = method
        self.params = params
        self.result_type = result_type
        self.observer = observer
        self.timeout = timeout
        self.id: int | None = None
        self.done = False
        self.written = False
        self.timer: abc.DisposableBase | None = None
        self.lock = threading.Lock()

    def claim(self) -> bool:
        with self.lock:
            if self.done:
                return False
            self.done = True
        timer, self.timer = self.timer, None
        if timer is not None:
            timer.dispose()
        return True


class SessionStats:
    """What the engine skipped or refused on one connection (counters, written on the loop).

    ``parse_errors``: incoming lines that were not JSON (answered ``-32700``, then skipped);
    ``invalid_messages``: JSON that is not a JSON-RPC message (answered ``-32600`` if it could
    be); ``oversized_frames``: lines over the transport's size cap (discarded);
    ``stray_responses``: responses to unknown or already settled ids (ignored);
    ``producer_waits``: times a producer thread blocked on back-pressure (docs/reliability.md).
    """

    __slots__ = (
        "invalid_messages",
        "oversized_frames",
        "parse_errors",
        "producer_waits",
        "stray_responses",
    )

    def __init__(self) -> None:
        self.parse_errors = 0
        self.invalid_messages = 0
        self.oversized_frames = 0
        self.stray_responses = 0
        self.producer_waits = 0

    def as_dict(self) -> dict[str, int]:
        """The counters by name."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"SessionStats({self.as_dict()})"


class _OutboundGate:
    """Back-pressure for producers on threads other than the loop (docs/reliability.md).

    Closed while the transport reports its write buffer over its high-water mark
    (:meth:`pause` ... :meth:`resume`, driven by asyncio's ``pause_writing``/``resume_writing``)
    or while ``limit`` hand-offs to the loop are queued and not yet run. A producer thread waits
    in :meth:`enter` until it opens; the loop calls :meth:`leave` when it runs the hand-off.
    The loop thread itself never waits here (it cannot block). :meth:`open_forever` releases
    every waiter when the connection ends.
    """

    __slots__ = ("_cond", "_forever", "_limit", "_paused", "_queued", "_stats")

    def __init__(self, limit: int, stats: SessionStats) -> None:
        self._cond = threading.Condition()
        self._limit = limit
        self._queued = 0
        self._paused = False
        self._forever = False
        self._stats = stats

    @property
    def paused(self) -> bool:
        return self._paused and not self._forever

    def enter(self) -> None:
        with self._cond:
            if not self._forever and (self._paused or self._queued >= self._limit):
                self._stats.producer_waits += 1
                while not self._forever and (self._paused or self._queued >= self._limit):
                    self._cond.wait()
            self._queued += 1

    def leave(self) -> None:
        with self._cond:
            self._queued -= 1
            if self._queued < self._limit and not self._paused:
                self._cond.notify()

    def pause(self) -> None:
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    def open_forever(self) -> None:
        with self._cond:
            self._forever = True
            self._cond.notify_all()


class _GatedRunner(LoopRunner):
    """The session's loop runner: hand-offs queued from other threads pass the outbound gate.

    ``call_later`` from a foreign thread is how blocking code (a sync prompt handler's
    ``send_update``) queues writes, so that is where a producer waits when the outbound buffer
    is full. Calls made on the loop, and ``call``, are never gated (answers are never held).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop | None, *, name: str, gate: _OutboundGate
    ) -> None:
        super().__init__(loop, name=name)
        self._gate = gate

    def call_later(self, fn: Callable[[], Any]) -> None:
        if self.in_loop():
            super().call_later(fn)
            return
        gate = self._gate
        gate.enter()

        def run() -> None:
            gate.leave()
            fn()

        super().call_later(run)


class AcpSession:
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
        self._gate = _OutboundGate(max_queued_writes, self.stats)
        self._runner: LoopRunner = _GatedRunner(loop, name=f"rxacp-{role}-loop", gate=self._gate)
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
        self._pending: dict[int, _Outgoing] = {}
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
        """Wait (in any asyncio loop) until the connection ended."""
        if self._terminated.is_set():
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not future.done():
                future.set_result(None)

        def done(_: AcpConnectionException) -> None:
            loop.call_soon_threadsafe(resolve)

        self.add_close_listener(done)
        await future

    def close(self, timeout: float = 10.0) -> None:
        """Close at once: pending requests error, handlers are disposed, the transport closes.

        Idempotent; safe from any thread, including handlers on the loop (then it is scheduled).
        """
        with self._state_lock:
            if self._close_called:
                return
            self._close_called = True
        if self._runner.in_loop():
            self.loop.create_task(self._close_then_finish(self._close_async()))
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
            self.loop.create_task(self._close_then_finish(self._close_gracefully_async(bound)))
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

    # ------------------------------------------------------------------ outgoing
    def send_request(
        self,
        method: str,
        params: Any = None,
        result_type: Any = None,
        *,
        timeout: Duration | None = _DEFAULT,
    ) -> AcpObservable[Any]:
        """A cold Observable of one request's answer.

        Subscribing writes the request; the answer emits once and completes::

            subscribe  ──request──▶ peer
            answer     ──────────R|        (R: result, typed by ``result_type.from_wire``)
            error      ──────────X         (AcpProtocolException / AcpTimeoutException /
                                             AcpConnectionException)
            dispose    ──────X  → $/cancel_request sent once (if written and unanswered)

        ``timeout`` overrides the session's request timeout (``None``/``0``: no timeout).
        """
        seconds = (
            self._request_timeout if timeout is _DEFAULT else to_seconds(timeout, name="timeout")
        )

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            state = _Outgoing(method, params, result_type, observer, seconds)
            if self._state == "closed":
                # the loop may already be stopped: settle here, on the caller's thread
                self._fail(state, self._closed_error or AcpConnectionException("connection closed"))
                return Disposable()
            self._runner.call(lambda: self._start_outgoing(state))
            return Disposable(lambda: self._dispose_outgoing(state))

        return AcpObservable(subscribe)

    def send_notification(self, method: str, params: Any = None) -> None:
        """Write one notification (from any thread). Dropped with a debug log after close.

        From a thread other than the loop's it waits while the outbound buffer is full
        (back-pressure, see ``docs/reliability.md``); on the loop it never blocks.
        """
        if self._runner.in_loop():
            self._send_notification_on_loop(method, params)
        else:
            self._runner.call_later(lambda: self._send_notification_on_loop(method, params))

    def _send_notification_on_loop(self, method: str, params: Any) -> None:
        if self._state == "closed":
            _log.debug("%s: dropping %s notification: connection closed", self._role, method)
            return
        self._ensure_started()
        try:
            msg = jsonrpc.notification_obj(method, _to_wire(params))
            self._write(msg)
        except (TypeError, ValueError) as exc:
            _log.error("%s: cannot send %s notification: %s", self._role, method, exc)

    def _start_outgoing(self, state: _Outgoing) -> None:
        if state.done:
            return
        if self._state in ("closing", "closed"):
            self._fail(state, self._closed_error or AcpConnectionException("connection is closing"))
            return
        self._ensure_started()
        self._next_id += 1
        rid = self._next_id
        try:
            frame = self._encode(jsonrpc.request_obj(rid, state.method, _to_wire(state.params)))
        except (TypeError, ValueError) as exc:
            self._fail(
                state, AcpException(f"cannot send {state.method}: params are not valid JSON: {exc}")
            )
            return
        state.id = rid
        self._pending[rid] = state
        self._send_frame(frame)
        state.written = True
        if state.timeout is not None:
            state.timer = self.scheduler.schedule_relative(
                state.timeout, lambda _s, _st: self._runner.call(lambda: self._time_out(state))
            )

    def _dispose_outgoing(self, state: _Outgoing) -> None:
        if state.claim():
            self._runner.call(lambda: self._forget(state, "disposed"))

    def _forget(self, state: _Outgoing, why: str) -> None:
        rid = state.id
        if rid is None or self._pending.get(rid) is not state:
            return  # never written, or already answered: nothing to tell the peer
        del self._pending[rid]
        if state.written and self._state != "closed":
            _log.debug(
                "%s: %s request %s (%s): sending $/cancel_request",
                self._role,
                why,
                rid,
                state.method,
            )
            self._write(jsonrpc.notification_obj(CANCEL_REQUEST, {"requestId": rid}))

    def _time_out(self, state: _Outgoing) -> None:
        if not state.claim():
            return
        self._forget(state, "timed out")
        self._emit_error(state, AcpTimeoutException(state.method, state.timeout or 0.0))

    def _fail(self, state: _Outgoing, error: Exception) -> None:
        if state.claim():
            if state.id is not None:
                self._pending.pop(state.id, None)
            self._emit_error(state, error)

    def _emit_error(self, state: _Outgoing, error: Exception) -> None:
        try:
            state.observer.on_error(error)
        except Exception:
            _log.exception("%s: observer of %s failed in on_error", self._role, state.method)

    def _on_response(self, msg: jsonrpc.Response | jsonrpc.ErrorResponse) -> None:
        state = self._pending.pop(msg.id, None) if isinstance(msg.id, int) else None
        if state is None:
            self.stats.stray_responses += 1
            _log.debug(
                "%s: ignoring response to unknown or finished request id %r", self._role, msg.id
            )
            return
        if self._inbox_busy or self._inbox:
            self._inbox.append(("r", state, msg))
        else:
            self._deliver(state, msg)

    def _deliver(self, state: _Outgoing, msg: jsonrpc.Response | jsonrpc.ErrorResponse) -> None:
        if not state.claim():
            _log.debug("%s: discarding late answer to %s (%r)", self._role, state.method, state.id)
            return
        observer = state.observer
        try:
            if type(msg) is jsonrpc.ErrorResponse:
                observer.on_error(error_to_exception(msg.error))
                return
            result = msg.result  # type: ignore[union-attr]
            if state.result_type is not None:
                try:
                    result = state.result_type.from_wire(result if result is not None else {})
                except pydantic.ValidationError as exc:
                    observer.on_error(
                        AcpProtocolException(
                            AcpErrorCodes.INTERNAL_ERROR,
                            f"invalid {state.method} result from the peer: "
                            f"{exc.error_count()} validation error(s)",
                            exc.errors(
                                include_url=False, include_context=False, include_input=False
                            ),
                        )
                    )
                    return
            observer.on_next(result)
            observer.on_completed()
        except Exception:
            _log.exception("%s: observer of %s failed", self._role, state.method)

    # ------------------------------------------------------------------ incoming requests
    def _on_request(self, msg: jsonrpc.Request) -> None:
        rid = msg.id
        if rid in self._incoming:
            self._write_error(
                rid,
                AcpErrorCodes.INVALID_REQUEST,
                f"Invalid request: id {rid!r} is already in flight",
            )
            return
        handler = self._request_handlers.get(msg.method)
        if handler is None:
            hint = self.unhandled_request_hint(msg.method) if self.unhandled_request_hint else None
            error = AcpProtocolException.method_not_found(msg.method, hint)
            self._write_error(rid, error.code, error.message)
            return
        if self._state in ("closing", "closed"):
            self._write_error(rid, AcpErrorCodes.REQUEST_CANCELLED, "connection is closing")
            return
        req = IncomingRequest(self, rid, msg.method, msg.params)
        self._incoming[rid] = req
        try:
            source = handler(req)
        except BaseException as exc:
            req.respond_error(exc)
            return
        if source is None:
            return
        got = [False]

        def on_next(value: Any) -> None:
            got[0] = True
            req.respond(value)

        def on_error(error: Exception) -> None:
            req.respond_error(error)

        def on_completed() -> None:
            if not got[0]:
                req.respond_error(
                    AcpProtocolException.internal_error(
                        f"handler for {msg.method} completed without a result"
                    )
                )

        try:
            subscription = source.subscribe(on_next, on_error, on_completed)
        except BaseException as exc:
            req.respond_error(exc)
            return
        with req._lock:
            if not req.answered:
                req._subscription = subscription
                return
        subscription.dispose()

    def _write_answer(self, req: IncomingRequest, result: Any = None, error: Any = None) -> None:
        self._runner.call(lambda: self._write_answer_on_loop(req, result, error))

    def _write_answer_on_loop(self, req: IncomingRequest, result: Any, error: Any) -> None:
        if self._incoming.get(req.id) is req:
            del self._incoming[req.id]
        if self._state == "closed":
            _log.debug("%s: dropping answer to %s: connection closed", self._role, req.method)
            return
        if error is not None:
            err = error if isinstance(error, dict) else exception_to_error(error)
            self._write(jsonrpc.error_obj(req.id, err))
            return
        try:
            wire = _to_wire(result)
            frame = self._encode(jsonrpc.response_obj(req.id, {} if wire is None else wire))
        except (TypeError, ValueError) as exc:
            _log.error("%s: result of %s is not valid JSON: %s", self._role, req.method, exc)
            self._write_error(
                req.id, AcpErrorCodes.INTERNAL_ERROR, "Internal error: result is not valid JSON"
            )
            return
        self._send_frame(frame)

    def _on_cancel_request(self, params: Any) -> None:
        rid = params.get("requestId") if isinstance(params, dict) else None
        # only a JSON-RPC id can name a request: a list/object requestId from a hostile peer
        # must be ignored, not crash the lookup (found by tests/reliability fuzz)
        valid = isinstance(rid, int | str) and not isinstance(rid, bool)
        req = self._incoming.get(rid) if valid else None
        if req is None or req.answered:
            _log.debug(
                "%s: ignoring $/cancel_request for unknown or finished id %r", self._role, rid
            )
            return
        hook = req.cancel_hook
        if hook is not None and hook(req):
            return
        req.respond_error(AcpProtocolException.request_cancelled())

    # ------------------------------------------------------------------ incoming notifications
    def _on_notification(self, msg: jsonrpc.Notification) -> None:
        if msg.method == CANCEL_REQUEST:
            self._on_cancel_request(msg.params)
            return
        entry = self._notification_handlers.get(msg.method)
        if entry is None:
            _log.debug("%s: no handler for notification %s; ignored", self._role, msg.method)
            return
        handler, ordered = entry
        note = IncomingNotification(self, msg.method, msg.params)
        if not ordered:
            self._run_unordered(handler, note)
        elif self._inbox_busy or self._inbox:
            self._inbox.append(("n", handler, note))
        else:
            self._inbox.append(("n", handler, note))
            self._drain()

    def _run_unordered(self, handler: NotificationHandler, note: IncomingNotification) -> None:
        try:
            source = handler(note)
            if source is not None:
                source.subscribe(on_error=lambda e: self._log_notification_error(note, e))
        except Exception as exc:
            self._log_notification_error(note, exc)

    def _log_notification_error(self, note: IncomingNotification, exc: BaseException) -> None:
        _log.error(
            "%s: handler of notification %s failed: %s", self._role, note.method, exc, exc_info=exc
        )

    def _drain(self) -> None:
        """Deliver queued notifications and responses in order (loop thread)."""
        inbox = self._inbox
        while inbox and not self._inbox_busy:
            item = inbox.popleft()
            if item[0] == "r":
                self._deliver(item[1], item[2])
                continue
            handler, note = item[1], item[2]
            try:
                source = handler(note)
            except Exception as exc:
                self._log_notification_error(note, exc)
                continue
            if source is None:
                continue
            if not self._await_notification(source, note):
                return
        if not inbox and not self._inbox_busy:
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def _await_notification(
        self, source: reactivex.Observable[Any], note: IncomingNotification
    ) -> bool:
        """Subscribe to a notification handler's work; True if it already finished."""
        flags = {"sync": True, "done": False}

        def finish(error: Exception | None = None) -> None:
            if error is not None:
                self._log_notification_error(note, error)
            if flags["done"]:
                return
            flags["done"] = True
            if flags["sync"]:
                return

            def resume() -> None:
                self._inbox_busy = False
                self._drain()

            self._runner.call(resume)

        self._inbox_busy = True
        try:
            source.subscribe(on_error=finish, on_completed=finish)
        except Exception as exc:
            finish(exc)
        flags["sync"] = False
        if flags["done"]:
            self._inbox_busy = False
            return True
        return False

    async def _inbox_idle(self) -> None:
        if not self._inbox and not self._inbox_busy:
            return
        waiter: asyncio.Future[None] = self.loop.create_future()
        self._idle_waiters.append(waiter)
        await waiter

    # ------------------------------------------------------------------ blocking handlers
    def run_blocking(self, fn: Callable[[], _T]) -> AcpObservable[_T]:
        """A cold Observable that runs ``fn`` on the worker pool and emits its result.

        ``--R|`` when ``fn`` returns ``R``; ``--X`` when it raises. Disposing discards the result
        (a running thread cannot be stopped; the handler should poll its cancellation state).
        """

        def subscribe(
            observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            disposed = [False]

            def work() -> None:
                if disposed[0]:
                    return
                try:
                    value = fn()
                except Exception as exc:
                    if not disposed[0]:
                        observer.on_error(exc)
                    return
                if not disposed[0]:
                    observer.on_next(value)
                    observer.on_completed()

            try:
                self._workers.submit(work)
            except RuntimeError as exc:
                observer.on_error(AcpConnectionException(f"connection is closed: {exc}"))
            return Disposable(lambda: disposed.__setitem__(0, True))

        return AcpObservable(subscribe)

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
                if item[0] == "r" and item[1].claim():
                    self._emit_error(item[1], reason)
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def _close_transport_after_eof(self) -> None:
        try:
            await self._transport.close()
        except Exception:  # pragma: no cover
            _log.debug("transport close after EOF failed", exc_info=True)
