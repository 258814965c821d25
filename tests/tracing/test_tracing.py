"""OpenTelemetry tracing (issue 31 item 5): spans per request on both sides, W3C trace context
in ``params._meta`` so one trace spans client and agent, cancellation as span events."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from rxacp.agent import AcpAgent, AcpSyncAgent, SyncPromptContext
from rxacp.client import AcpClient, AcpSyncClient, CancellationSignal
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileResponse,
)
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import WireTapTransport

WAIT = 10.0


class _Signalling(SimpleSpanProcessor):
    """Exports each span at its end and wakes whoever waits for one (a bounded wait)."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        super().__init__(exporter)
        self.ended = threading.Condition()

    def on_end(self, span: ReadableSpan) -> None:
        super().on_end(span)
        with self.ended:
            self.ended.notify_all()


_PROCESSORS: dict[int, _Signalling] = {}


def _exporting() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = _Signalling(exporter)
    _PROCESSORS[id(exporter)] = processor
    provider.add_span_processor(processor)
    return provider, exporter


@dataclass
class Pair:
    """A traced agent and client in memory, each with its own provider (two 'processes')."""

    client: AcpSyncClient
    agent: AcpSyncAgent
    tap: WireTapTransport
    client_spans: InMemorySpanExporter
    agent_spans: InMemorySpanExporter
    provider: TracerProvider
    agent_provider: TracerProvider
    cancelled: threading.Event = field(default_factory=threading.Event)
    waiting: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def spans(self, exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
        return [s for s in exporter.get_finished_spans() if s.name == name]

    def one(self, exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
        """The one finished span named ``name`` (waits, bounded, for it to end)."""
        ended = _PROCESSORS[id(exporter)].ended
        with ended:
            assert ended.wait_for(lambda: self.spans(exporter, name), WAIT), name
        [span] = self.spans(exporter, name)
        return span


def _prompt(pair_holder: list[Pair]) -> Any:
    def handle(request: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        pair = pair_holder[0]
        text = request.prompt_text()
        if text == "read":
            content = ctx.read_file("/tmp/x.txt")
            ctx.send_message(content)
        elif text == "wait":
            ctx.on_cancel(pair.cancelled.set)
            pair.waiting.set()
            assert pair.cancelled.wait(WAIT)
        elif text == "stubborn":  # ignores cancellation: the SDK answers for it
            pair.waiting.set()
            assert pair.released.wait(WAIT)
        elif text == "nested":
            tracer = pair.agent_provider.get_tracer("agent app")
            with tracer.start_as_current_span("model call"):
                ctx.send_message("thought about it")
        elif text == "fail":
            raise AcpProtocolException(-32042, "no such thing")
        else:
            ctx.send_message("hi")
            ctx.send_message(" there")
        return PromptResponse.end_turn()

    return handle


@pytest.fixture
def pair() -> Iterator[Pair]:
    client_provider, client_spans = _exporting()
    agent_provider, agent_spans = _exporting()
    memory = InMemoryTransportPair.create()
    holder: list[Pair] = []
    agent = (
        AcpAgent.sync(memory.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(_prompt(holder))
        .tracing(tracer_provider=agent_provider)
        .build()
    )
    agent.start()
    tap = WireTapTransport(memory.client_transport, record=True)
    client = (
        AcpClient.sync(tap)
        .read_text_file_handler(lambda req: ReadTextFileResponse(content="file text"))
        .tracing(tracer_provider=client_provider)
        .build()
    )
    result = Pair(client, agent, tap, client_spans, agent_spans, client_provider, agent_provider)
    holder.append(result)
    client.initialize()
    try:
        yield result
    finally:
        client.close()
        agent.close()


def test_one_prompt_is_one_trace_across_client_and_agent(pair: Pair) -> None:
    pair.client.prompt(PromptRequest.text("s1", "read"))
    client_turn = pair.one(pair.client_spans, "session/prompt")
    agent_turn = pair.one(pair.agent_spans, "session/prompt")
    agent_read = pair.one(pair.agent_spans, "fs/read_text_file")
    client_read = pair.one(pair.client_spans, "fs/read_text_file")
    assert client_turn.context is not None and agent_turn.context is not None
    trace_id = client_turn.context.trace_id
    for span in (agent_turn, agent_read, client_read):
        assert span.context is not None and span.context.trace_id == trace_id
    # parents: client prompt <- agent prompt <- agent's read request <- client's handling of it
    assert client_turn.parent is None
    assert (
        agent_turn.parent is not None and agent_turn.parent.span_id == client_turn.context.span_id
    )
    assert agent_turn.parent.is_remote
    assert agent_read.parent is not None and agent_read.parent.span_id == agent_turn.context.span_id
    assert agent_read.context is not None
    assert (
        client_read.parent is not None and client_read.parent.span_id == agent_read.context.span_id
    )
    assert (client_turn.kind, agent_turn.kind) == (SpanKind.CLIENT, SpanKind.SERVER)
    assert (agent_read.kind, client_read.kind) == (SpanKind.CLIENT, SpanKind.SERVER)


def test_spans_carry_the_rpc_semantic_convention_and_acp_attributes(pair: Pair) -> None:
    pair.client.prompt(PromptRequest.text("s1", "hello"))
    for exporter in (pair.client_spans, pair.agent_spans):
        turn = pair.one(exporter, "session/prompt")
        attributes = dict(turn.attributes or {})
        assert attributes["rpc.system"] == "jsonrpc"
        assert attributes["rpc.method"] == "session/prompt"
        assert attributes["rpc.jsonrpc.version"] == "2.0"
        assert attributes["rpc.jsonrpc.request_id"] == "2"  # after initialize (id 1)
        assert attributes["acp.session.id"] == "s1"
        assert attributes["acp.stop_reason"] == "end_turn"
    client_turn = pair.one(pair.client_spans, "session/prompt")
    assert dict(client_turn.attributes or {})["acp.session.update_count"] == 2
    init = pair.one(pair.client_spans, "initialize")
    assert init.status.status_code == StatusCode.UNSET


def test_the_client_puts_w3c_trace_context_in_params_meta(pair: Pair) -> None:
    pair.client.new_session(NewSessionRequest.of("/tmp"))
    [sent] = [
        f.message for f in pair.tap.frames if f.direction == "out" and f.method == "session/new"
    ]
    traceparent = sent["params"]["_meta"]["traceparent"]
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}", traceparent)
    span = pair.one(pair.client_spans, "session/new")
    assert span.context is not None
    assert traceparent.split("-")[1:3] == [
        format(span.context.trace_id, "032x"),
        format(span.context.span_id, "016x"),
    ]
    assert dict(span.attributes or {})["acp.session.id"] == "s1"  # from the answer


def test_an_error_answer_records_its_code_and_an_error_status_on_both_sides(pair: Pair) -> None:
    with pytest.raises(AcpProtocolException):
        pair.client.prompt(PromptRequest.text("s1", "fail"))
    for exporter in (pair.client_spans, pair.agent_spans):
        turn = pair.one(exporter, "session/prompt")
        assert dict(turn.attributes or {})["rpc.jsonrpc.error_code"] == -32042
        assert dict(turn.attributes or {})["rpc.jsonrpc.error_message"] == "no such thing"
        assert turn.status.status_code == StatusCode.ERROR


def test_session_cancel_is_an_event_on_the_turn_of_both_sides(pair: Pair) -> None:
    stop = CancellationSignal()
    result: list[PromptResponse] = []
    thread = threading.Thread(
        target=lambda: result.append(pair.client.prompt(PromptRequest.text("s1", "wait"), stop))
    )
    thread.start()
    assert pair.waiting.wait(WAIT)
    stop.cancel()
    thread.join(WAIT)
    assert result and result[0].stop_reason == "cancelled"
    for exporter, direction in ((pair.client_spans, "sent"), (pair.agent_spans, "received")):
        turn = pair.one(exporter, "session/prompt")
        events = [(e.name, dict(e.attributes or {})) for e in turn.events]
        assert ("acp.session_cancel", {"acp.direction": direction}) in events
        assert dict(turn.attributes or {})["acp.stop_reason"] == "cancelled"


def test_disposing_a_request_records_cancel_request_events(pair: Pair) -> None:
    source = pair.client.async_client.prompt(PromptRequest.text("s1", "stubborn"))
    subscription = source.subscribe(lambda _: None, lambda _e: None)
    assert pair.waiting.wait(WAIT)
    subscription.dispose()  # session/cancel, then $/cancel_request: the SDK answers the turn
    try:
        agent_turn = pair.one(pair.agent_spans, "session/prompt")
        client_turn = pair.one(pair.client_spans, "session/prompt")  # ends at the late answer
    finally:
        pair.released.set()
    for span, direction in ((client_turn, "sent"), (agent_turn, "received")):
        names = [(e.name, dict(e.attributes or {}).get("acp.direction")) for e in span.events]
        assert ("acp.session_cancel", direction) in names
        assert ("acp.cancel_request", direction) in names


def test_a_request_made_inside_a_span_is_its_child(pair: Pair) -> None:
    tracer = pair.provider.get_tracer("app")
    with tracer.start_as_current_span("user action") as outer:
        pair.client.prompt(PromptRequest.text("s1", "hello"))
    turn = pair.one(pair.client_spans, "session/prompt")
    assert turn.parent is not None and turn.parent.span_id == outer.get_span_context().span_id


def test_open_spans_end_with_an_error_when_the_connection_closes(pair: Pair) -> None:
    source = pair.client.async_client.prompt(PromptRequest.text("s1", "wait"))
    errors: list[Exception] = []
    source.subscribe(lambda _: None, errors.append)
    assert pair.waiting.wait(WAIT)
    pair.client.close()
    assert pair.client.session.wait_closed(WAIT)
    turn = pair.one(pair.client_spans, "session/prompt")
    assert turn.status.status_code == StatusCode.ERROR
    pair.cancelled.set()


# ---------------------------------------------------------------------------- switched off
def test_tracing_false_makes_no_spans_and_installs_no_hook() -> None:
    provider, exporter = _exporting()
    memory = InMemoryTransportPair.create()
    agent = (
        AcpAgent.sync(memory.agent_transport)
        .tracing(False, tracer_provider=provider)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .build()
    )
    agent.start()
    client = AcpClient.sync(memory.client_transport).tracing(False).build()
    try:
        client.initialize()
        client.new_session(NewSessionRequest.of("/tmp"))
        assert exporter.get_finished_spans() == ()
        assert client.session._wire.observer is None and agent.session._wire.observer is None
    finally:
        client.close()
        agent.close()


def test_without_a_global_tracer_provider_nothing_is_installed() -> None:
    from opentelemetry import trace

    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    memory = InMemoryTransportPair.create()
    client = AcpClient.sync(memory.client_transport).build()
    explicit = AcpClient.sync(InMemoryTransportPair.create().client_transport).tracing().build()
    try:
        assert client.session._wire.observer is None
        assert explicit.session._wire.observer is None  # asked for, but no provider to use
    finally:
        client.close()
        explicit.close()


def test_without_opentelemetry_importable_even_an_explicit_switch_installs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rxacp.tracing import tracing_available

    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import opentelemetry fails
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    assert not tracing_available()
    provider, _exporter = _exporting()
    client = (
        AcpClient.sync(InMemoryTransportPair.create().client_transport)
        .tracing(tracer_provider=provider)
        .build()
    )
    try:
        assert client.session._wire.observer is None
    finally:
        client.close()


def test_spans_a_prompt_handler_starts_are_children_of_its_turn(pair: Pair) -> None:
    pair.client.prompt(PromptRequest.text("s1", "nested"))
    turn = pair.one(pair.agent_spans, "session/prompt")
    inner = pair.one(pair.agent_spans, "model call")
    assert turn.context is not None and inner.parent is not None
    assert inner.parent.span_id == turn.context.span_id


def test_requests_never_answered_cannot_keep_more_than_the_bound_of_spans_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rxacp.tracing as tracing

    monkeypatch.setattr(tracing, "MAX_OPEN_SPANS", 3)
    provider, exporter = _exporting()
    tracer = tracing.WireTracer(provider.get_tracer("t"), "client")
    for rid in range(5):
        tracer.outgoing({"jsonrpc": "2.0", "id": rid, "method": "session/new", "params": {}})
    ended = exporter.get_finished_spans()
    assert [dict(s.attributes or {})["rpc.jsonrpc.request_id"] for s in ended] == ["0", "1"]
    assert all(s.status.status_code == StatusCode.ERROR for s in ended)
    tracer.close("done")
    assert len(exporter.get_finished_spans()) == 5
