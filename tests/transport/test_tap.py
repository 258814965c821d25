"""WireTapTransport: every frame both ways, logged, recorded or reported, never changed."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rxacp.agent import AcpAgent, AcpSyncAgent, SyncPromptContext
from rxacp.client import AcpClient
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.schema.strict import validate_message
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import (
    AcpTransport,
    AgentParameters,
    FrameReceiver,
    StdioAcpClientTransport,
    TransportClosed,
    WireFrame,
    WireTapTransport,
)
from rxacp.transport.base import Frame


def _say(text: str) -> Callable[[PromptRequest, SyncPromptContext], PromptResponse]:
    """A sync prompt handler that sends ``text`` and ends the turn."""

    def prompt(_req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.send_message(text)
        return PromptResponse.end_turn()

    return prompt


ROOT = Path(__file__).resolve().parents[2]


def _agent(pair: InMemoryTransportPair) -> AcpSyncAgent:
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s-1"))
        .prompt_handler(_say("hi"))
        .build()
    )
    agent.start()
    return agent


def test_a_recording_tap_sees_every_message_both_ways_in_order() -> None:
    pair = InMemoryTransportPair.create()
    agent = _agent(pair)
    seen: list[WireFrame] = []
    stream = io.StringIO()
    tap = WireTapTransport(pair.client_transport, stream, record=True, on_frame=seen.append)
    client = AcpClient.sync(tap).build()
    try:
        client.initialize()
        sid = client.new_session({"cwd": "/", "mcpServers": []}).session_id
        assert client.prompt({"sessionId": sid, "prompt": [{"type": "text", "text": "x"}]})
    finally:
        client.close()
        agent.close()
    frames = tap.frames
    assert frames == seen
    flow = [(f.direction, f.method or "answer") for f in frames]
    assert flow == [
        ("out", "initialize"),
        ("in", "answer"),
        ("out", "session/new"),
        ("in", "answer"),
        ("out", "session/prompt"),
        ("in", "session/update"),
        ("in", "answer"),
    ]
    assert (tap.sent, tap.received) == (3, 4)
    logged = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [entry["direction"] for entry in logged] == [f.direction for f in frames]
    assert [entry["message"] for entry in logged] == [f.message for f in frames]
    assert not stream.closed  # a stream we were given is never closed
    assert all(validate_message(f.message) == [] for f in frames if f.method)


def test_a_tap_over_stdio_logs_the_real_bytes_and_passes_the_stderr_tail_through(
    tmp_path: Path,
) -> None:
    log = tmp_path / "wire.jsonl"
    params = AgentParameters(
        sys.executable,
        ["-m", "rxacp.testing.reference_agent"],
        env={"PYTHONPATH": str(ROOT)},
    )
    tap = WireTapTransport(StdioAcpClientTransport(params), log, record=True)
    client = AcpClient.sync(tap).build()
    try:
        init = client.initialize()
        assert init.protocol_version == 1
    finally:
        client.close()
    first = tap.frames[0]
    assert first.direction == "out" and isinstance(first.raw, bytes)
    assert json.loads(first.raw) == first.message and first.method == "initialize"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries[0]["message"]["method"] == "initialize"
    assert entries[1]["direction"] == "in" and entries[1]["message"]["id"] == first.message["id"]
    assert tap.stderr_tail is None or isinstance(tap.stderr_tail, str)


def test_frames_needs_record_true() -> None:
    tap = WireTapTransport(InMemoryTransportPair.create().client_transport)
    with pytest.raises(RuntimeError, match="record=True"):
        _ = tap.frames


class _Hooks(AcpTransport):
    """An inner transport that records which optional hooks reached it."""

    batches_writes = True

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.receiver: FrameReceiver | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self.receiver = receiver

    def send(self, frame: Frame) -> None:
        self.calls.append("send")

    async def close(self) -> None:
        self.calls.append("close")

    def cork(self) -> None:
        self.calls.append("cork")

    def uncork(self) -> None:
        self.calls.append("uncork")

    def pause_reading(self) -> None:
        self.calls.append("pause_reading")

    def resume_reading(self) -> None:
        self.calls.append("resume_reading")


class _FlowReceiver(FrameReceiver):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_frame(self, frame: Frame) -> None:
        self.calls.append("frame")

    def on_frame_too_large(self, size: int) -> None:
        self.calls.append("too_large")

    def on_closed(self, info: TransportClosed) -> None:
        self.calls.append("closed")

    def on_write_paused(self) -> None:
        self.calls.append("paused")

    def on_write_resumed(self) -> None:
        self.calls.append("resumed")


def test_a_tap_passes_back_pressure_corking_and_read_pausing_through() -> None:
    inner = _Hooks()
    tap = WireTapTransport(inner)
    receiver = _FlowReceiver()

    async def start() -> None:
        await tap.start(asyncio.get_running_loop(), receiver)

    asyncio.run(start())
    assert tap.batches_writes  # the engine corks the tap as it would the inner transport
    tap.cork()
    tap.send(b"{}")
    tap.uncork()
    tap.pause_reading()
    tap.resume_reading()
    assert inner.calls == ["cork", "send", "uncork", "pause_reading", "resume_reading"]
    assert inner.receiver is not None
    inner.receiver.on_write_paused()  # the inner transport's buffer filled up ...
    inner.receiver.on_write_resumed()  # ... and drained
    assert receiver.calls == ["paused", "resumed"]


def test_a_receiver_that_subclasses_frame_receiver_ignores_flow_control_by_default() -> None:
    class Minimal(FrameReceiver):
        def on_frame(self, frame: Frame) -> None: ...
        def on_frame_too_large(self, size: int) -> None: ...
        def on_closed(self, info: TransportClosed) -> None: ...

    receiver = Minimal()
    receiver.on_write_paused()  # defined (no AttributeError), and does nothing
    receiver.on_write_resumed()
    assert type(receiver).on_write_paused is FrameReceiver.on_write_paused
