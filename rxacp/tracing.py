"""OpenTelemetry tracing of one ACP connection (the optional extra ``rxacp[otel]``).

:class:`WireTracer` watches a connection's messages where the engine writes and reads them (the
engine's one wire-observer hook, :meth:`rxacp.session.AcpSession.set_wire_observer`) and makes:

- a span per **outgoing request** (kind ``CLIENT``) and per **incoming request** (``SERVER``),
  named by the method (``session/prompt``, ``fs/read_text_file``...), with the OpenTelemetry
  RPC semantic-convention attributes ``rpc.system`` (``jsonrpc``), ``rpc.method``,
  ``rpc.jsonrpc.version``, ``rpc.jsonrpc.request_id`` and, for an error answer,
  ``rpc.jsonrpc.error_code`` / ``rpc.jsonrpc.error_message`` (status ``ERROR``); plus
  ``acp.session.id`` and, on a ``session/prompt`` span — the span of the **prompt turn** on
  either side — ``acp.stop_reason`` and ``acp.session.update_count`` (client side);
- **W3C trace context across the wire**: every outgoing request carries its span's
  ``traceparent`` (and ``tracestate``/``baggage``, through the global propagator) in
  ``params._meta``, the keys the ACP meta-propagation RFD reserves; an incoming request's span
  continues the trace found there. So one trace spans both processes: the client's
  ``session/prompt`` → the agent's ``session/prompt`` → the agent's ``fs/*`` or permission
  requests of that turn → the client's handling of them;
- **span events** for cancellation: ``acp.cancel_request`` (``$/cancel_request`` sent or
  received for the span's request) and ``acp.session_cancel`` (``session/cancel`` sent or
  received for the turn's session).

A span's parent is the current span where the request was subscribed; an agent's request with
no current span belongs to the turn of its ``sessionId``. A prompt handler runs with its turn's
span as the current span (:meth:`WireTracer.in_turn`), so the spans it starts — its model
calls — are children of the turn.

On by default when ``opentelemetry-api`` is importable and a tracer provider is set
(``opentelemetry.trace.set_tracer_provider``) when the client or agent is built; a builder's
``tracing(False)`` turns it off, ``tracing(tracer_provider=p)`` uses ``p``. Off, the engine
checks one attribute per message (measured in ``docs/tracing.md``).

This module is *not* responsible for exporting spans (the application's tracer provider is) or
for the messages themselves (the engine): it never changes a message except for adding the
trace context to an outgoing request's ``_meta``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import jsonrpc

if TYPE_CHECKING:
    from .session import AcpSession

__all__ = ["TRACER_NAME", "WireTracer", "install_tracing", "tracing_available"]

TRACER_NAME = "rxacp"
"""The instrumentation scope of rxacp's spans."""

_log = logging.getLogger("rxacp.tracing")

_R = TypeVar("_R")

MAX_OPEN_SPANS = 10_000
"""Open spans kept per direction: past it the oldest is ended (status ``ERROR``), so requests a
peer never answers cannot grow memory without bound."""

_CANCEL_REQUEST = "$/cancel_request"
_SESSION_CANCEL = "session/cancel"
_SESSION_PROMPT = "session/prompt"
_SESSION_UPDATE = "session/update"


def tracing_available() -> bool:
    """Whether ``opentelemetry-api`` can be imported (the ``rxacp[otel]`` extra)."""
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def install_tracing(
    session: AcpSession, role: str, enabled: bool | None, tracer_provider: Any = None
) -> WireTracer | None:
    """Trace ``session`` when asked to: ``enabled`` ``False`` never; ``True`` or ``None`` (the
    default: automatic) with ``tracer_provider`` when given, else with the global provider if
    one was set. Returns the tracer installed (``None``: nothing, zero cost).

    Automatic mode imports nothing: an application that set a provider has imported
    ``opentelemetry.trace`` already, so when it is not in ``sys.modules`` there is no
    provider to use (and rxacp does not pay for importing OpenTelemetry).
    """
    if enabled is False:
        return None
    if tracer_provider is None and enabled is None and "opentelemetry.trace" not in sys.modules:
        return None
    if not tracing_available():
        return None
    from opentelemetry import trace

    provider = tracer_provider
    if provider is None:
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            return None  # no provider set: every span would be a no-op
    tracer = WireTracer(provider.get_tracer(TRACER_NAME), role)
    session.set_wire_observer(tracer)
    session.add_close_listener(lambda reason: tracer.close(str(reason)))
    return tracer


class WireTracer:
    """Spans from one connection's messages (loop thread only; see the module docstring)."""

    def __init__(self, tracer: Any, role: str) -> None:
        from opentelemetry import context, propagate, trace

        self._tracer = tracer
        self._role = role
        self._trace = trace
        self._context = context
        self._propagate = propagate
        self._out: dict[Any, _Call] = {}  # our requests, by id
        self._in: dict[Any, _Call] = {}  # the peer's requests, by id
        self._out_turns: dict[str, _Call] = {}  # our session/prompt in flight, by session id
        self._in_turns: dict[str, _Call] = {}  # the peer's session/prompt, by session id

    # ------------------------------------------------------------------ the engine's hook
    def outgoing(self, msg: dict[str, Any]) -> dict[str, Any]:
        """A message about to be written; returns it (a request: with the trace context)."""
        try:
            if "method" in msg:
                if "id" in msg:
                    return self._request_out(msg)
                self._notification_out(msg)
            elif "id" in msg:
                self._answer_out(msg)
        except Exception:  # tracing never breaks the connection
            _log.exception("%s: tracing an outgoing message failed", self._role)
        return msg

    def incoming(self, msg: Any) -> None:
        """A message just read and parsed (before the engine routes it)."""
        try:
            kind = type(msg)
            if kind is jsonrpc.Request:
                self._request_in(msg)
            elif kind is jsonrpc.Notification:
                self._notification_in(msg)
            elif kind is jsonrpc.Response or kind is jsonrpc.ErrorResponse:
                call = self._out.pop(msg.id, None)
                if call is not None:
                    self._settle(
                        call,
                        msg.result if kind is jsonrpc.Response else None,
                        msg.error if kind is jsonrpc.ErrorResponse else None,
                    )
                    self._drop_turn(self._out_turns, call)
        except Exception:
            _log.exception("%s: tracing an incoming message failed", self._role)

    def close(self, reason: str) -> None:
        """The connection ended: end every span still open (status ``ERROR``)."""
        calls = [*self._out.values(), *self._in.values()]
        self._out.clear()
        self._in.clear()
        self._out_turns.clear()
        self._in_turns.clear()
        for call in calls:
            call.span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, reason))
            call.span.end()

    def in_turn(self, session_id: str, fn: Callable[..., _R]) -> Callable[..., _R]:
        """``fn`` run with the span of ``session_id``'s incoming ``session/prompt`` as the
        current span (on whichever thread it runs), so that the spans a prompt handler starts,
        and the requests it makes, belong to the turn. Call it on the loop, as the turn starts.
        """
        turn = self._in_turns.get(session_id)
        if turn is None:
            return fn
        span_context = self._trace.set_span_in_context(turn.span)
        context = self._context

        def in_span(*args: Any) -> _R:
            token = context.attach(span_context)
            try:
                return fn(*args)
            finally:
                context.detach(token)

        return in_span

    # ------------------------------------------------------------------ outgoing
    def _request_out(self, msg: dict[str, Any]) -> dict[str, Any]:
        method = msg["method"]
        params = msg.get("params")
        sid = _session_id(params)
        parent = self._context.get_current()
        if self._trace.get_current_span(parent) is self._trace.INVALID_SPAN and sid:
            turn = self._in_turns.get(sid)  # an agent's request during its turn
            if turn is not None:
                parent = self._trace.set_span_in_context(turn.span)
        span = self._tracer.start_span(
            method,
            context=parent,
            kind=self._trace.SpanKind.CLIENT,
            attributes=_attributes(method, msg["id"], sid),
        )
        call = _Call(span, sid)
        self._keep(self._out, msg["id"], call)
        if method == _SESSION_PROMPT and sid:
            self._out_turns[sid] = call
        carrier: dict[str, Any] = {}
        self._propagate.inject(carrier, context=self._trace.set_span_in_context(span))
        if not carrier:
            return msg
        if isinstance(params, dict):
            meta = params.get("_meta")
            meta = {**meta, **carrier} if isinstance(meta, dict) else carrier
            return {**msg, "params": {**params, "_meta": meta}}
        if params is None:
            return {**msg, "params": {"_meta": carrier}}
        return msg  # positional params: nowhere to put the context

    def _notification_out(self, msg: dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if method == _CANCEL_REQUEST:
            call = self._out.get(_request_id(params))
            if call is not None:
                call.span.add_event("acp.cancel_request", {"acp.direction": "sent"})
        elif method == _SESSION_CANCEL:
            turn = self._out_turns.get(_session_id(params) or "")
            if turn is not None:
                turn.span.add_event("acp.session_cancel", {"acp.direction": "sent"})

    def _answer_out(self, msg: dict[str, Any]) -> None:
        call = self._in.pop(msg["id"], None)
        if call is not None:
            self._settle(call, msg.get("result"), msg.get("error"))
            self._drop_turn(self._in_turns, call)

    # ------------------------------------------------------------------ incoming
    def _request_in(self, msg: jsonrpc.Request) -> None:
        params = msg.params
        sid = _session_id(params)
        meta = params.get("_meta") if isinstance(params, dict) else None
        parent = self._propagate.extract(meta) if isinstance(meta, dict) else None
        span = self._tracer.start_span(
            msg.method,
            context=parent,
            kind=self._trace.SpanKind.SERVER,
            attributes=_attributes(msg.method, msg.id, sid),
        )
        call = _Call(span, sid)
        self._keep(self._in, msg.id, call)
        if msg.method == _SESSION_PROMPT and sid:
            self._in_turns[sid] = call

    def _notification_in(self, msg: jsonrpc.Notification) -> None:
        method = msg.method
        if method == _SESSION_UPDATE:
            turn = self._out_turns.get(_session_id(msg.params) or "")
            if turn is not None:
                turn.updates += 1
        elif method == _CANCEL_REQUEST:
            call = self._in.get(_request_id(msg.params))
            if call is not None:
                call.span.add_event("acp.cancel_request", {"acp.direction": "received"})
        elif method == _SESSION_CANCEL:
            turn = self._in_turns.get(_session_id(msg.params) or "")
            if turn is not None:
                turn.span.add_event("acp.session_cancel", {"acp.direction": "received"})

    # ------------------------------------------------------------------ settling
    def _settle(self, call: _Call, result: Any, error: Any) -> None:
        span = call.span
        if isinstance(error, dict):
            code = error.get("code")
            if isinstance(code, int):
                span.set_attribute("rpc.jsonrpc.error_code", code)
            message = error.get("message")
            if isinstance(message, str):
                span.set_attribute("rpc.jsonrpc.error_message", message)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(message or code)))
        elif isinstance(result, dict):
            stop = result.get("stopReason")
            if isinstance(stop, str):
                span.set_attribute("acp.stop_reason", stop)
            if call.session_id is None and isinstance(result.get("sessionId"), str):
                span.set_attribute("acp.session.id", result["sessionId"])  # session/new
        if call.updates:
            span.set_attribute("acp.session.update_count", call.updates)
        span.end()

    def _keep(self, calls: dict[Any, _Call], rid: Any, call: _Call) -> None:
        ended = [calls.pop(rid)] if rid in calls else []  # an id used again: its span ends
        calls[rid] = call
        if len(calls) > MAX_OPEN_SPANS:
            ended.append(calls.pop(next(iter(calls))))
        for old in ended:
            old.span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, "never answered"))
            old.span.end()

    @staticmethod
    def _drop_turn(turns: dict[str, _Call], call: _Call) -> None:
        sid = call.session_id
        if sid is not None and turns.get(sid) is call:
            del turns[sid]


class _Call:
    __slots__ = ("session_id", "span", "updates")

    def __init__(self, span: Any, session_id: str | None) -> None:
        self.span = span
        self.session_id = session_id
        self.updates = 0


def _session_id(params: Any) -> str | None:
    if isinstance(params, dict):
        sid = params.get("sessionId")
        if isinstance(sid, str):
            return sid
    return None


def _request_id(params: Any) -> Any:
    return params.get("requestId") if isinstance(params, dict) else None


def _attributes(method: str, rid: Any, session_id: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "rpc.system": "jsonrpc",
        "rpc.method": method,
        "rpc.jsonrpc.version": "2.0",
        "rpc.jsonrpc.request_id": str(rid),
    }
    if session_id is not None:
        attributes["acp.session.id"] = session_id
    return attributes
