"""Outgoing requests and notifications of :class:`AcpSession` (a mixin of it).

Requests are cold :class:`AcpObservable`\\ s: subscribing writes the request, disposing before
the answer sends ``$/cancel_request`` once (only if written), a timeout is a disposal that
errors with :class:`AcpTimeoutException`. Answers are delivered in order behind earlier
notifications (the inbox lives in ``dispatch.py``).

This module is *not* responsible for incoming requests or the connection's lifecycle.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pydantic
from reactivex import abc
from reactivex.disposable import Disposable

from .. import jsonrpc
from .._durations import Duration, to_seconds
from ..errors import (
    AcpConnectionException,
    AcpErrorCodes,
    AcpException,
    AcpProtocolException,
    AcpTimeoutException,
    error_to_exception,
)
from ..schema._base import validation_errors
from .abandoned import CANCEL_REQUEST, AbandonedRequests
from .observable import AcpObservable
from .pending import PendingRequest, to_wire_value

if TYPE_CHECKING:
    from ..transport.base import Frame
    from .loop import LoopRunner
    from .stats import SessionStats

__all__ = ["CANCEL_REQUEST", "OutgoingRequests"]

_log = logging.getLogger("rxacp.session")

_DEFAULT: Any = object()


class OutgoingRequests:
    """The outgoing half of the engine. Only :class:`AcpSession` uses it (as a base class)."""

    if TYPE_CHECKING:  # provided by AcpSession
        _runner: LoopRunner
        _role: str
        _state: str
        _closed_error: AcpConnectionException | None
        _pending: dict[int, PendingRequest]
        _abandoned: AbandonedRequests
        _next_id: int
        _request_timeout: float | None
        _inbox: collections.deque[tuple[Any, ...]]
        _inbox_busy: bool
        scheduler: abc.SchedulerBase
        stats: SessionStats

        def _ensure_started(self) -> None: ...
        def _encode(self, msg: dict[str, Any]) -> Frame: ...
        def _write(self, msg: dict[str, Any]) -> None: ...
        def _send_frame(self, frame: Frame) -> None: ...

    def send_request(
        self,
        method: str,
        params: Any = None,
        result_type: Any = None,
        *,
        timeout: Duration | None = _DEFAULT,
        before: Callable[[], object] | None = None,
        on_abandon: Callable[[], Callable[[], None] | None] | None = None,
    ) -> AcpObservable[Any]:
        """A cold Observable of one request's answer.

        Subscribing writes the request; the answer emits once and completes::

            subscribe  ──request──▶ peer
            answer     ──────────R|        (R: result, typed by ``result_type.from_wire``)
            error      ──────────X         (AcpProtocolException / AcpTimeoutException /
                                             AcpConnectionException)
            dispose    ──────X  → $/cancel_request sent once (if written and unanswered)

        ``timeout`` overrides the session's request timeout (``None``/``0``: no timeout).
        ``before`` runs at each subscription before anything is sent (a precondition such as
        a capability gate): when it raises, that error ends the Observable and nothing is sent.
        ``on_abandon`` runs on the loop when a written, unanswered request is disposed or times
        out, just before ``$/cancel_request`` is written (the client sends ``session/cancel``
        there for a prompt); it may return a callable run once when the late answer arrives or
        the connection ends.
        """
        seconds = (
            self._request_timeout if timeout is _DEFAULT else to_seconds(timeout, name="timeout")
        )

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            if before is not None:
                try:
                    before()
                except Exception as exc:
                    observer.on_error(exc)
                    return Disposable()
            state = PendingRequest(method, params, result_type, observer, seconds, on_abandon)
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
            msg = jsonrpc.notification_obj(method, to_wire_value(params))
            self._write(msg)
        except (TypeError, ValueError) as exc:
            _log.error("%s: cannot send %s notification: %s", self._role, method, exc)

    def _start_outgoing(self, state: PendingRequest) -> None:
        if state.done:
            return
        if self._state in ("closing", "closed"):
            self._fail(state, self._closed_error or AcpConnectionException("connection is closing"))
            return
        self._ensure_started()
        self._next_id += 1
        rid = self._next_id
        try:
            frame = self._encode(
                jsonrpc.request_obj(rid, state.method, to_wire_value(state.params))
            )
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

    def _dispose_outgoing(self, state: PendingRequest) -> None:
        if state.claim():
            self._runner.call(lambda: self._forget(state, "disposed"))

    def _forget(self, state: PendingRequest, why: str) -> None:
        rid = state.id
        if rid is None or self._pending.get(rid) is not state:
            return  # never written, or already answered: nothing to tell the peer
        del self._pending[rid]
        if not state.written or self._state == "closed":
            return
        if state.on_abandon is not None:
            try:
                late = state.on_abandon()
            except Exception:
                _log.exception("%s: abandoning %s failed", self._role, state.method)
                late = None
            if late is not None:
                self._abandoned.wait_for_late_answer(state, late)
        abandoned = self._abandoned
        if not abandoned.cancel_request_supported:
            _log.debug(
                "%s: %s request %s (%s): the peer does not take $/cancel_request",
                self._role,
                why,
                rid,
                state.method,
            )
            return
        _log.debug(
            "%s: %s request %s (%s): sending $/cancel_request", self._role, why, rid, state.method
        )
        abandoned.cancel_requests_sent += 1
        self._write(jsonrpc.notification_obj(CANCEL_REQUEST, {"requestId": rid}))

    def _time_out(self, state: PendingRequest) -> None:
        if not state.claim():
            return
        self._forget(state, "timed out")
        self._emit_error(state, AcpTimeoutException(state.method, state.timeout or 0.0))

    def _fail(self, state: PendingRequest, error: Exception) -> None:
        if state.claim():
            if state.id is not None:
                self._pending.pop(state.id, None)
            self._emit_error(state, error)

    def _emit_error(self, state: PendingRequest, error: Exception) -> None:
        try:
            state.observer.on_error(error)
        except Exception:
            _log.exception("%s: observer of %s failed in on_error", self._role, state.method)

    def _on_response(self, msg: jsonrpc.Response | jsonrpc.ErrorResponse) -> None:
        state = self._pending.pop(msg.id, None) if isinstance(msg.id, int) else None
        if state is None:
            state = self._abandoned.take(msg.id)  # a late answer someone waits for
        if state is None:
            self.stats.stray_responses += 1
            error = msg.error if type(msg) is jsonrpc.ErrorResponse else None
            self._abandoned.on_stray_answer(msg.id, error)
            return
        if self._inbox_busy or self._inbox:
            self._inbox.append(("r", state, msg))
        else:
            self._deliver(state, msg)

    def _deliver(
        self, state: PendingRequest, msg: jsonrpc.Response | jsonrpc.ErrorResponse
    ) -> None:
        if not state.claim():
            _log.debug("%s: discarding late answer to %s (%r)", self._role, state.method, state.id)
            try:
                state.run_late()
            except Exception:
                _log.exception("%s: late-answer callback of %s failed", self._role, state.method)
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
                            validation_errors(exc),
                        )
                    )
                    return
            observer.on_next(result)
            observer.on_completed()
        except Exception:
            _log.exception("%s: observer of %s failed", self._role, state.method)
