"""WireTapTransport: every frame both ways, logged, recorded or reported, never changed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.schema import NewSessionResponse, PromptResponse
from rxacp.schema.strict import validate_message
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import AgentParameters, StdioAcpClientTransport, WireFrame, WireTapTransport

ROOT = Path(__file__).resolve().parents[2]


def _agent(pair: InMemoryTransportPair) -> object:
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s-1"))
        .prompt_handler(lambda req, ctx: (ctx.send_message("hi"), PromptResponse.end_turn())[1])
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
        agent.close()  # type: ignore[attr-defined]
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
