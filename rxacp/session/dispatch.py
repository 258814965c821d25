"""Incoming requests and notifications of :class:`AcpSession` (a mixin of it).

Exactly one answer per incoming request whatever races (handler result, ``$/cancel_request``,
close); notifications are handled strictly in arrival order, and a response is delivered only
after the notifications that arrived before it (the inbox); blocking handlers run on the worker
pool.

This module is *not* responsible for outgoing requests or the connection's lifecycle.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from .. import jsonrpc
from ..errors import (
    AcpConnectionException,
    AcpErrorCodes,
    AcpProtocolException,
    exception_to_error,
)
from .adapters import as_observable
from .incoming import IncomingNotification, IncomingRequest
from .observable import AcpObservable
from .pending import PendingRequest, to_wire_value
from .requests import CANCEL_REQUEST

if TYPE_CHECKING:
    from ..transport.base import Frame
    from .loop import LoopRunner
    from .session import AcpSession
    from .workers import WorkerPool

__all__ = ["IncomingDispatch", "NotificationHandler", "RequestHandler"]

_log = logging.getLogger("rxacp.session")

_T = TypeVar("_T")

RequestHandler = Callable[[IncomingRequest], "reactivex.Observable[Any] | None"]
"""Handles one request: return an Observable of the result (first value answers), or ``None``
when the handler answers later through :meth:`IncomingRequest.respond`."""

NotificationHandler = Callable[[IncomingNotification], "reactivex.Observable[Any] | None"]
"""Handles one notification: return ``None`` when done, or an Observable the drain waits for."""


class IncomingDispatch:
    """The incoming half of the engine. Only :class:`AcpSession` uses it (as a base class)."""

    if TYPE_CHECKING:  # provided by AcpSession / OutgoingRequests
        _runner: LoopRunner
        _role: str
        _state: str
        _workers: WorkerPool
        _request_handlers: dict[str, RequestHandler]
        _notification_handlers: dict[str, tuple[NotificationHandler, bool]]
        _incoming: dict[Any, IncomingRequest]
        _inbox: collections.deque[tuple[Any, ...]]
        _inbox_busy: bool
        _idle_waiters: list[asyncio.Future[None]]
        unhandled_request_hint: Callable[[str], str | None] | None

        @property
        def loop(self) -> asyncio.AbstractEventLoop: ...
        def _encode(self, msg: dict[str, Any]) -> Frame: ...
        def _write(self, msg: dict[str, Any]) -> None: ...
        def _send_frame(self, frame: Frame) -> None: ...
        def _write_error(self, rid: Any, code: int, message: str) -> None: ...
        def _deliver(
            self, state: PendingRequest, msg: jsonrpc.Response | jsonrpc.ErrorResponse
        ) -> None: ...

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
        req = IncomingRequest(cast("AcpSession", self), rid, msg.method, msg.params)
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
        if self._runner.in_loop():
            self._write_answer_on_loop(req, result, error)
        else:
            self._runner.call(lambda: self._write_answer_on_loop(req, result, error))

    def _write_answer_on_loop(self, req: IncomingRequest, result: Any, error: Any) -> None:
        if self._incoming.get(req.id) is req:
            del self._incoming[req.id]
        if self._state == "closed":
            _log.debug("%s: dropping answer to %s: connection closed", self._role, req.method)
            return
        if error is not None:
            err = error if isinstance(error, dict) else exception_to_error(error, req.method)
            self._write(jsonrpc.error_obj(req.id, err))
            return
        try:
            wire = to_wire_value(result)
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
        note = IncomingNotification(cast("AcpSession", self), msg.method, msg.params)
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
    def run_blocking(self, fn: Callable[[], _T], *, name: str | None = None) -> AcpObservable[_T]:
        """A cold Observable that runs ``fn`` on the worker pool and emits its result.

        ``--R|`` when ``fn`` returns ``R``; ``--X`` when it raises. When ``fn`` returns an
        awaitable (it is an ``async def`` handler given to a blocking API), that is awaited on
        the connection's loop and its outcome emitted. Disposing discards the result
        (a running thread cannot be stopped; the handler should poll its cancellation state);
        disposing while ``fn`` runs *abandons* it: its worker slot is given back to the pool
        (bounded, logged with ``name``), so a handler that ignores cancellation does not starve
        the next one.
        """

        def subscribe(
            observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            disposed = [False]
            returned = [False]  # fn is over: disposal from here on is no abandonment
            awaited: list[abc.DisposableBase | None] = [None]

            def work() -> None:
                if disposed[0]:
                    return
                try:
                    value = fn()
                except Exception as exc:
                    returned[0] = True
                    if not disposed[0]:
                        observer.on_error(exc)
                    return
                returned[0] = True
                if disposed[0]:
                    return
                if inspect.isawaitable(value) and not isinstance(value, reactivex.Observable):
                    # an async def handler given to a blocking API: awaited on the loop
                    awaited[0] = as_observable(value, self.loop).subscribe(observer)
                    if disposed[0]:
                        awaited[0].dispose()
                    return
                observer.on_next(value)
                observer.on_completed()

            try:
                task = self._workers.submit(
                    work, name=name or getattr(fn, "__qualname__", "blocking handler")
                )
            except RuntimeError as exc:
                observer.on_error(AcpConnectionException(f"connection is closed: {exc}"))
                return Disposable()

            def dispose() -> None:
                disposed[0] = True
                if awaited[0] is not None:
                    awaited[0].dispose()
                if not returned[0] and task.state == "running":  # queued: skipped by work()
                    self._workers.abandon(task)

            return Disposable(dispose)

        return AcpObservable(subscribe)
