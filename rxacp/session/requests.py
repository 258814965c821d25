"""The pending-requests table: outgoing requests from subscription to settlement.

:class:`PendingRequests` owns the request ids, the pending entries, their timeout timers and
``$/cancel_request`` (with what it remembers of given-up requests, ``abandoned.py``). Requests
are cold :class:`AcpObservable`\\ s: subscribing writes the request, disposing before the answer
sends ``$/cancel_request`` once (only if written), a timeout is a disposal that errors with
:class:`AcpTimeoutException`. The table writes through the ``send`` callable it is given and
reads the connection's phase; the session hands it the answers (in order, through the inbox).

This module is *not* responsible for incoming requests, ordering or the connection's lifecycle.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pydantic
from reactivex import abc
from reactivex.disposable import CompositeDisposable, Disposable

from .. import jsonrpc
from .._durations import Duration, to_seconds
from ..errors import (
    AcpErrorCodes,
    AcpException,
    AcpProtocolException,
    AcpTimeoutException,
    error_to_exception,
)
from ..schema._base import first_invalid, validation_errors
from .abandoned import CANCEL_REQUEST, AbandonedRequests
from .graceful import current_trigger
from .observable import AcpObservable
from .pending import PendingRequest, to_wire_value
from .state import CLOSED, ConnectionState

if TYPE_CHECKING:
    from .loop import LoopRunner
    from .stats import SessionStats

__all__ = ["CANCEL_REQUEST", "DEFAULT_TIMEOUT", "PendingRequests"]

_PEER = {"client": "the agent", "agent": "the client"}
"""Who sent an answer, by this side's role (for error messages)."""

_log = logging.getLogger("rxacp.session")

DEFAULT_TIMEOUT: Any = object()
"""``timeout`` default of :meth:`PendingRequests.request`: the table's request timeout."""

Send = Callable[[dict[str, Any]], None]
"""Writes one message; raises ``TypeError``/``ValueError`` (before writing) if it is not JSON."""


class PendingRequests:
    """Outgoing requests waiting for their answer, by id (state lives on the loop).

    Args:
        state: the connection's phase (read only).
        runner: hands work to the connection's loop.
        scheduler: runs the timeout timers.
        send: writes one message (see :data:`Send`).
        role: for log messages.
        request_timeout: default timeout in seconds (``None``: none).
        stats: counts stray answers.
    """

    def __init__(
        self,
        state: ConnectionState,
        runner: LoopRunner,
        scheduler: abc.SchedulerBase,
        send: Send,
        *,
        role: str,
        request_timeout: float | None,
        stats: SessionStats,
    ) -> None:
        self._state = state
        self._runner = runner
        self._scheduler = scheduler
        self._send = send
        self._role = role
        self.request_timeout = request_timeout
        self._stats = stats
        self._table: dict[int, PendingRequest] = {}
        self._next_id = 0
        self.abandoned = AbandonedRequests(role)
        """Whether the peer takes ``$/cancel_request``; who waits for late answers."""
        self.capture_context = False
        """Write each request in the ``contextvars`` context it was subscribed in (set by
        tracing, so a request's span has the subscriber's current span as its parent)."""

    def __len__(self) -> int:
        return len(self._table)

    def request(
        self,
        method: str,
        params: Any = None,
        result_type: Any = None,
        *,
        timeout: Duration | None = DEFAULT_TIMEOUT,
        before: Callable[[], object] | None = None,
        on_abandon: Callable[[], Callable[[], None] | None] | None = None,
        timeout_setting: str | None = None,
    ) -> AcpObservable[Any]:
        """A cold Observable of one request's answer (``AcpSession.send_request`` is this).

        Subscribing writes the request; the answer emits once and completes::

            subscribe  ──request──▶ peer
            answer     ──────────R|        (R: result, typed by ``result_type.from_wire``)
            error      ──────────X         (AcpProtocolException / AcpTimeoutException /
                                             AcpConnectionException)
            dispose    ──────X  → $/cancel_request sent once (if written and unanswered)

        ``timeout`` overrides the session's request timeout (``None``/``0``: no timeout);
        ``timeout_setting`` is what the :class:`AcpTimeoutException` names as the setting that
        changes it (default: ``request_timeout``, or none for an explicit ``timeout``).
        ``before`` runs at each subscription before anything is sent (a precondition such as
        a capability gate): when it raises, that error ends the Observable and nothing is sent.
        ``on_abandon`` runs on the loop when a written, unanswered request is disposed or times
        out, just before ``$/cancel_request`` is written (the client sends ``session/cancel``
        there for a prompt); it may return a callable run once when the late answer arrives or
        the connection ends.
        """
        seconds = (
            self.request_timeout
            if timeout is DEFAULT_TIMEOUT
            else to_seconds(timeout, name="timeout")
        )
        if timeout_setting is None and timeout is DEFAULT_TIMEOUT:
            timeout_setting = "request_timeout"

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            if before is not None:
                try:
                    before()
                except Exception as exc:
                    observer.on_error(exc)
                    return Disposable()
            pending = PendingRequest(method, params, result_type, observer, seconds, on_abandon)
            pending.timeout_setting = timeout_setting
            if self._state.phase == CLOSED:
                # the loop may already be stopped: settle here, on the caller's thread
                self._fail(pending, self._state.refusal())
                return Disposable()
            trigger = current_trigger()
            if self.capture_context:
                context = contextvars.copy_context()
                self._runner.call(lambda: context.run(self._start, pending))
            else:
                self._runner.call(lambda: self._start(pending))
            disposable = Disposable(lambda: self._dispose(pending))
            if trigger is None:
                return disposable

            def fire(_: Any = None) -> None:
                self._runner.call(lambda: self._cancel_gracefully(pending))

            # RequestCancellation.cancel_when: cancel, keep waiting (a failing trigger: ignored)
            watch = trigger.subscribe(fire, lambda _error: None, fire)
            return CompositeDisposable(watch, disposable)

        return AcpObservable(subscribe)

    # ------------------------------------------------------------------ loop side
    def _start(self, pending: PendingRequest) -> None:
        if pending.done:
            return
        if self._state.refusing:
            self._fail(pending, self._state.refusal())
            return
        self._next_id += 1
        rid = pending.id = self._next_id
        self._table[rid] = pending
        try:
            self._send(jsonrpc.request_obj(rid, pending.method, to_wire_value(pending.params)))
        except (TypeError, ValueError) as exc:
            self._fail(
                pending,
                AcpException(f"cannot send {pending.method}: params are not valid JSON: {exc}"),
            )
            return
        pending.written = True
        if pending.cancel_sent:  # the graceful cancel fired before the request was written
            pending.cancel_sent = False
            self._cancel_gracefully(pending)
        if pending.timeout is not None:
            pending.timer = self._scheduler.schedule_relative(
                pending.timeout, lambda _s, _st: self._runner.call(lambda: self._time_out(pending))
            )

    def _cancel_gracefully(self, pending: PendingRequest) -> None:
        """``$/cancel_request`` for a pending request, which keeps waiting for its answer."""
        if pending.done or pending.cancel_sent:
            return
        pending.cancel_sent = True
        if not pending.written:
            return  # sent by _start right after the request itself
        rid = pending.id
        if rid is None or self._table.get(rid) is not pending or self._state.phase == CLOSED:
            return
        abandoned = self.abandoned
        if not abandoned.cancel_request_supported:
            return
        _log.debug(
            "%s: cancel_when: $/cancel_request for %s (%s), waiting for the answer",
            self._role,
            rid,
            pending.method,
        )
        abandoned.cancel_requests_sent += 1
        self._send(jsonrpc.notification_obj(CANCEL_REQUEST, {"requestId": rid}))

    def _dispose(self, pending: PendingRequest) -> None:
        if pending.claim():
            self._runner.call(lambda: self._forget(pending, "disposed"))

    def _forget(self, pending: PendingRequest, why: str) -> None:
        rid = pending.id
        if rid is None or self._table.get(rid) is not pending:
            return  # never written, or already answered: nothing to tell the peer
        del self._table[rid]
        if not pending.written or self._state.phase == CLOSED:
            return
        abandoned = self.abandoned
        if pending.on_abandon is not None:
            try:
                late = pending.on_abandon()
            except Exception:
                _log.exception("%s: abandoning %s failed", self._role, pending.method)
                late = None
            if late is not None:
                abandoned.wait_for_late_answer(pending, late)
        if pending.cancel_sent:
            return  # cancel_when sent it already: at most one $/cancel_request per request
        if not abandoned.cancel_request_supported:
            _log.debug(
                "%s: %s request %s (%s): the peer does not take $/cancel_request",
                self._role,
                why,
                rid,
                pending.method,
            )
            return
        _log.debug(
            "%s: %s request %s (%s): sending $/cancel_request", self._role, why, rid, pending.method
        )
        abandoned.cancel_requests_sent += 1
        self._send(jsonrpc.notification_obj(CANCEL_REQUEST, {"requestId": rid}))

    def _time_out(self, pending: PendingRequest) -> None:
        if not pending.claim():
            return
        self._forget(pending, "timed out")
        self._emit_error(
            pending,
            AcpTimeoutException(
                pending.method, pending.timeout or 0.0, setting=pending.timeout_setting
            ),
        )

    def _fail(self, pending: PendingRequest, error: Exception) -> None:
        if pending.claim():
            if pending.id is not None:
                self._table.pop(pending.id, None)
            self._emit_error(pending, error)

    def _emit_error(self, pending: PendingRequest, error: Exception) -> None:
        try:
            pending.observer.on_error(error)
        except Exception:
            _log.exception("%s: observer of %s failed in on_error", self._role, pending.method)

    def take(self, msg: jsonrpc.Response | jsonrpc.ErrorResponse) -> PendingRequest | None:
        """Remove and return the entry an answer belongs to, pending or abandoned with someone
        waiting for its late answer (``None``: a stray answer)."""
        pending = self._table.pop(msg.id, None) if isinstance(msg.id, int) else None
        if pending is None:
            pending = self.abandoned.take(msg.id)  # a late answer someone waits for
        if pending is None:
            self._stats.stray_responses += 1
            error = msg.error if type(msg) is jsonrpc.ErrorResponse else None
            self.abandoned.on_stray_answer(msg.id, error)
        return pending

    def deliver(
        self, pending: PendingRequest, msg: jsonrpc.Response | jsonrpc.ErrorResponse
    ) -> None:
        """Settle a taken entry with its answer (typed by its ``result_type``)."""
        if not pending.claim():
            _log.debug(
                "%s: discarding late answer to %s (%r)", self._role, pending.method, pending.id
            )
            self._run_late(pending)
            return
        observer = pending.observer
        try:
            if type(msg) is jsonrpc.ErrorResponse:
                observer.on_error(error_to_exception(msg.error, pending.method))
                return
            result = msg.result  # type: ignore[union-attr]
            if pending.result_type is not None:
                try:
                    result = pending.result_type.from_wire(result if result is not None else {})
                except pydantic.ValidationError as exc:
                    peer = _PEER.get(self._role, "the peer")
                    observer.on_error(
                        AcpProtocolException(
                            AcpErrorCodes.INTERNAL_ERROR,
                            f"{peer} sent an invalid {pending.method} result: {first_invalid(exc)}",
                            validation_errors(exc),
                        )
                    )
                    return
            observer.on_next(result)
            observer.on_completed()
        except Exception:
            _log.exception("%s: observer of %s failed", self._role, pending.method)

    def fail_all(self, reason: Exception, queued: Iterable[PendingRequest] = ()) -> None:
        """Error every pending entry, and the taken ones still ``queued`` for delivery; release
        whoever waits for a late answer."""
        entries = [*self._table.values(), *queued]
        self._table.clear()
        for pending in entries:
            if pending.claim():
                self._emit_error(pending, reason)
            else:
                self._run_late(pending)  # an abandoned request's late answer
        self.abandoned.release_all()

    def _run_late(self, pending: PendingRequest) -> None:
        try:
            pending.run_late()
        except Exception:
            _log.exception("%s: late-answer callback of %s failed", self._role, pending.method)
