"""The in-flight table: incoming requests from arrival to their one answer.

:class:`InFlightRequests` routes each incoming request to its registered handler and keeps it
until it is answered exactly once whatever races (handler result, ``$/cancel_request``, close);
it writes the answer through the callables it is given.
This module is *not* responsible for outgoing requests, notifications or the connection's
lifecycle.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import reactivex

from .. import jsonrpc
from ..errors import AcpErrorCodes, AcpProtocolException, exception_to_error, peer_echo
from .incoming import IncomingRequest
from .pending import to_wire_value
from .state import CLOSED, ConnectionState

if TYPE_CHECKING:
    from .backpressure import InboundGate, OutboundGate
    from .loop import LoopRunner
    from .requests import Send
    from .stats import SessionStats

__all__ = ["InFlightRequests", "RequestHandler"]

_log = logging.getLogger("rxacp.session")

_T = TypeVar("_T")

RequestHandler = Callable[[IncomingRequest], "reactivex.Observable[Any] | None"]
"""Handles one request: return an Observable of the result (first value answers), or ``None``
when the handler answers later through :meth:`IncomingRequest.respond`."""


class InFlightRequests:
    """Incoming requests not answered yet, by id, and the handlers they are routed to.

    Args:
        state: the connection's phase (read only).
        runner: hands answers from other threads to the loop.
        send: writes one message (raises before writing if it is not JSON).
        write: writes one message (logs and drops it if it is not JSON).
        role: for log messages.
        outbound: the outbound gate: while it reports the transport's write buffer over its
            high-water mark (the peer is not reading), incoming requests are *held* instead of
            being handed to their handlers, and handed over once it drained
            (:meth:`release_held`). The answers are what would pile up.
        inbound: told how many requests are held (reading pauses past its bound).
        stats: counts the held requests (``requests_held``).
        max_per_method: at most this many requests of one method are with their handlers at
            once (the worker pool's ``max_workers``, for blocking and ``async`` handlers
            alike); more wait, in arrival order, until one is answered. So a flood of one
            kind neither holds every worker nor delays another kind, and what a burst read in
            one chunk costs is bounded.
    """

    def __init__(
        self,
        state: ConnectionState,
        runner: LoopRunner,
        send: Send,
        write: Send,
        *,
        role: str,
        outbound: OutboundGate | None = None,
        inbound: InboundGate | None = None,
        max_per_method: int | None = None,
        stats: SessionStats | None = None,
    ) -> None:
        self._state = state
        self._runner = runner
        self._send = send
        self._write = write
        self._role = role
        self._outbound = outbound
        self._inbound = inbound
        self._max_per_method = max_per_method
        self._stats = stats
        self._held: dict[Any, jsonrpc.Request] = {}
        """Requests not handed to their handlers yet, by id."""
        self._waiting: dict[str, collections.deque[Any]] = {}
        """The held ids of each method, in arrival order."""
        self._running: dict[str, int] = {}
        """Requests of each method with their handlers (in the table)."""
        self._releasing = False
        self._release_pending: set[str] = set()
        self.handlers: dict[str, RequestHandler] = {}
        """Request handlers by method name."""
        self.unheld: set[str] = set()
        """Methods whose requests are never held (``set_request_handler(held=False)``)."""
        self.unhandled_hint: Callable[[str], str | None] | None = None
        """What to add to the ``-32601`` answer of a method without a handler."""
        self._table: dict[Any, IncomingRequest] = {}

    def __len__(self) -> int:
        return len(self._table) + len(self._held)

    @property
    def held_count(self) -> int:
        """Incoming requests not handed to their handlers yet (the peer is not reading, or
        ``max_per_method`` of their method are running)."""
        return len(self._held)

    def _paused(self) -> bool:
        return self._outbound is not None and self._outbound.paused

    def _full(self, method: str) -> bool:
        cap = self._max_per_method
        return cap is not None and self._running.get(method, 0) >= cap

    def set_handler(self, method: str, handler: RequestHandler, *, held: bool = True) -> None:
        """Register the handler of incoming requests for ``method`` (replacing any).

        ``held=False``: its requests reach the handler at once, never held while the peer is
        not reading nor past ``max_workers`` of the method (``docs/reliability.md``); for
        requests that must see what arrives after them (a long request and the
        notification that cancels it) and that something else bounds.
        """
        self.handlers[method] = handler
        if held:
            self.unheld.discard(method)
        else:
            self.unheld.add(method)

    def on_request(self, msg: jsonrpc.Request) -> None:
        """Route one incoming request (loop thread); held while the peer is not reading or
        its method is at ``max_per_method``."""
        rid = msg.id
        method = msg.method
        if rid in self._held or rid in self._table:
            self._write_error(
                rid,
                AcpErrorCodes.INVALID_REQUEST,
                f"Invalid request: id {rid!r} is already in flight",
            )
            return
        if method not in self.unheld and (
            self._paused() or self._waiting.get(method) or self._full(method)
        ):
            if self._stats is not None:
                self._stats.requests_held += 1
            self._held[rid] = msg
            self._waiting.setdefault(method, collections.deque()).append(rid)
            if self._inbound is not None:
                self._inbound.held(len(self._held))
            return
        self._dispatch(msg)

    def release_held(self, method: str | None = None) -> None:
        """Hand held requests (of ``method``, or of every method) to their handlers, in
        arrival order per method, while the outbound buffer is not full and their method is
        under ``max_per_method`` (loop thread)."""
        if not self._held:
            return
        pending = self._release_pending
        pending.update([method] if method is not None else self._waiting)
        if self._releasing:  # an answer written by a handler just handed over: the loop
            return  # below goes on (no recursion, however many are held)
        self._releasing = True
        try:
            while pending:
                name = pending.pop()
                queue = self._waiting.get(name)
                while queue and not self._paused() and not self._full(name):
                    msg = self._held.pop(queue.popleft())
                    self._dispatch(msg)
                if not queue:
                    self._waiting.pop(name, None)
        finally:
            self._releasing = False
        if self._inbound is not None:
            self._inbound.held(len(self._held))

    def _answered(self, method: str) -> None:
        count = self._running.get(method, 0) - 1
        if count > 0:
            self._running[method] = count
        else:
            self._running.pop(method, None)
        if self._waiting.get(method):
            self.release_held(method)

    def _dispatch(self, msg: jsonrpc.Request) -> None:
        rid = msg.id
        if rid in self._table:
            self._write_error(
                rid,
                AcpErrorCodes.INVALID_REQUEST,
                f"Invalid request: id {peer_echo(rid)} is already in flight",
            )
            return
        handler = self.handlers.get(msg.method)
        if handler is None:
            hint = self.unhandled_hint(msg.method) if self.unhandled_hint else None
            error = AcpProtocolException.method_not_found(msg.method, hint)
            self._write_error(rid, error.code, error.message)
            return
        if self._state.refusing:
            self._write_error(rid, AcpErrorCodes.REQUEST_CANCELLED, "connection is closing")
            return
        req = IncomingRequest(self, rid, msg.method, msg.params)
        self._table[rid] = req
        self._running[msg.method] = self._running.get(msg.method, 0) + 1
        try:
            source = handler(req)
        except Exception as exc:  # KeyboardInterrupt / CancelledError propagate, unanswered
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
        except Exception as exc:  # KeyboardInterrupt / CancelledError propagate, unanswered
            req.respond_error(exc)
            return
        req.attach(subscription)

    def write_answer(self, req: IncomingRequest, result: Any = None, error: Any = None) -> None:
        """Write the one answer of ``req`` (from any thread; claimed by the caller)."""
        if self._runner.in_loop():
            self._write_answer_on_loop(req, result, error)
            return
        if self._outbound is None:
            self._runner.call(lambda: self._write_answer_on_loop(req, result, error))
            return
        # from a worker: answers computed faster than the transport takes them wait here,
        # not in the loop's queue (see OutboundGate.answer_queued)
        outbound = self._outbound
        outbound.answer_queued()

        def write() -> None:
            try:
                self._write_answer_on_loop(req, result, error)
            finally:
                outbound.answer_written()

        self._runner.call(write)

    def _write_answer_on_loop(self, req: IncomingRequest, result: Any, error: Any) -> None:
        try:
            self._write_answer_now(req, result, error)
        finally:
            if self._table.get(req.id) is req:
                del self._table[req.id]
                self._answered(req.method)

    def _write_answer_now(self, req: IncomingRequest, result: Any, error: Any) -> None:
        if self._state.phase == CLOSED:
            _log.debug("%s: dropping answer to %s: connection closed", self._role, req.method)
            return
        if error is not None:
            err = error if isinstance(error, dict) else exception_to_error(error, req.method)
            self._write(jsonrpc.error_obj(req.id, err))
            return
        try:
            wire = to_wire_value(result)
            self._send(jsonrpc.response_obj(req.id, {} if wire is None else wire))
        except (TypeError, ValueError) as exc:
            _log.error("%s: result of %s is not valid JSON: %s", self._role, req.method, exc)
            self._write_error(
                req.id, AcpErrorCodes.INTERNAL_ERROR, "Internal error: result is not valid JSON"
            )

    def on_cancel_request(self, params: Any) -> None:
        """``$/cancel_request`` from the peer: dispose the handler, answer ``-32800``."""
        rid = params.get("requestId") if isinstance(params, dict) else None
        # only a JSON-RPC id can name a request: a list/object requestId from a hostile peer
        # must be ignored, not crash the lookup (found by tests/reliability fuzz)
        valid = (isinstance(rid, int | str) and not isinstance(rid, bool)) or (
            rid is None and isinstance(params, dict) and "requestId" in params  # ACP: id null
        )
        if valid and rid in self._held:  # never handed to a handler: answered now
            msg = self._held.pop(rid)
            queue = self._waiting.get(msg.method)
            if queue is not None:
                queue.remove(rid)
                if not queue:
                    del self._waiting[msg.method]
            if self._inbound is not None:
                self._inbound.held(len(self._held))
            self._write(
                jsonrpc.error_obj(rid, exception_to_error(AcpProtocolException.request_cancelled()))
            )
            return
        req = self._table.get(rid) if valid else None
        if req is None or req.answered:
            _log.debug(
                "%s: ignoring $/cancel_request for unknown or finished id %r", self._role, rid
            )
            return
        req.peer_cancelled()

    def _write_error(self, rid: Any, code: int, message: str) -> None:
        self._write(jsonrpc.error_obj(rid, {"code": int(code), "message": message}))

    def abandon_all(self) -> None:
        """The connection is gone: dispose every handler without answering."""
        requests = list(self._table.values())
        self._table.clear()
        self._held.clear()  # never handed to a handler: nothing to dispose
        self._waiting.clear()
        self._running.clear()
        for req in requests:
            req.abandon()
