"""The reference agent as a process: exact wire answers, flags, EOF exit and the wire log."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rxacp.errors import AcpProtocolException
from rxacp.schema import PromptRequest
from rxacp.testing import reference_agent
from rxacp.testing._reference_script import BEHAVIOURS
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import APIS, WAIT, Conversation, spawn_raw


class RawPeer:
    """Speaks JSON lines to a reference agent process."""

    def __init__(self, *flags: str) -> None:
        self.proc = spawn_raw(*flags)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, id_: int, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

    def until(self, id_: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Read messages until the answer to ``id_``; returns (messages before, answer)."""
        assert self.proc.stdout is not None
        before: list[dict[str, Any]] = []
        while True:
            line = self.proc.stdout.readline()
            assert line, "the agent closed its stdout"
            message = json.loads(line)
            if message.get("id") == id_ and "method" not in message:
                return before, message
            before.append(message)

    def start_session(self) -> str:
        self.request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        self.until(1)
        self.request(2, "session/new", {"cwd": "/tmp", "mcpServers": []})
        return str(self.until(2)[1]["result"]["sessionId"])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def raw_peer() -> Any:
    peers: list[RawPeer] = []

    def make(*flags: str) -> RawPeer:
        peers.append(RawPeer(*flags))
        return peers[-1]

    yield make
    for peer in peers:
        peer.close()


def _turn_under_way(peer: Any, text: str) -> str:
    """Open a session and prompt ``text`` (request id 3) until its first update arrived;
    returns the session id."""
    sid: str = peer.start_session()
    prompt = [{"type": "text", "text": text}]
    peer.request(3, "session/prompt", {"sessionId": sid, "prompt": prompt})
    assert peer.proc.stdout.readline()
    return sid


@pytest.mark.parametrize("api", APIS)
def test_wire_answers_cancel_with_stop_reason_cancelled_after_the_updates(
    raw_peer: Any, api: str
) -> None:
    peer = raw_peer("--api", api)
    sid = _turn_under_way(peer, "slow 5")  # the first chunk arrived: the turn is running
    peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    before, answer = peer.until(3)
    assert answer == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}
    assert all(m["method"] == "session/update" for m in before)


def test_async_stream_is_stopped_mid_stream_when_the_grace_period_disposes_the_turn(
    raw_peer: Any,
) -> None:
    # the stream script ignores cancellation; the async run yields to the loop between slices,
    # so the cancel is read, the grace period disposes the run and the stream stops there
    peer = raw_peer("--api", "async", "--cancel-grace", "0.2")
    count = 5_000_000
    sid = _turn_under_way(peer, f"stream {count}")  # streaming
    peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    before, answer = peer.until(3)
    assert answer["result"] == {"stopReason": "cancelled"}
    assert len(before) < count // 10


@pytest.mark.parametrize("api", APIS)
def test_wire_fail_is_an_internal_error_without_a_stack_trace(raw_peer: Any, api: str) -> None:
    peer = raw_peer("--api", api)
    sid = peer.start_session()
    peer.request(
        3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "fail"}]}
    )
    _, answer = peer.until(3)
    assert answer["error"]["code"] == -32603
    assert "Traceback" not in answer["error"]["message"]


@pytest.mark.parametrize("api", APIS)
def test_exits_within_one_second_of_stdin_eof_even_with_a_stubborn_turn(
    raw_peer: Any, api: str
) -> None:
    peer = raw_peer("--api", api)
    _turn_under_way(peer, "stubborn 30")  # the stubborn handler is running
    closed = time.monotonic()
    peer.proc.stdin.close()
    assert peer.proc.wait(WAIT) == 0
    assert time.monotonic() - closed < 15.0  # not after the 30 s stubborn turn (loaded box)


@pytest.mark.parametrize("api", ["sync", "async"])
def test_max_prompt_duration_answers_request_cancelled_with_the_duration(api: str) -> None:
    conv = Conversation("--api", api, "--max-prompt-duration", "0.3")
    try:
        sid = conv.new_session()
        with pytest.raises(AcpProtocolException) as info:
            conv.client.prompt(PromptRequest.text(sid, "slow 5"))
        assert info.value.code == -32800
        assert info.value.data == {"maxPromptDuration": "PT0.3S"}
    finally:
        conv.close()


def test_log_wire_records_both_directions_as_json_lines(tmp_path: Path) -> None:
    log = tmp_path / "agent-wire.jsonl"
    conv = Conversation("--log-wire", str(log))
    try:
        sid = conv.new_session()
        conv.client.prompt(PromptRequest.text(sid, "echo logged"))
    finally:
        conv.close()
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert {e["direction"] for e in entries} == {"in", "out"}
    assert all("timestamp" in e for e in entries)
    methods = [(e["direction"], e["message"].get("method")) for e in entries]
    assert ("in", "session/prompt") in methods
    assert ("out", "session/update") in methods


def test_bad_flags_are_rejected_with_a_usage_error_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        reference_agent.main(["--cancel-grace", "soon"])
    assert info.value.code == 2
    assert "--cancel-grace" in capsys.readouterr().err


def test_decorators_without_agent_support_fail_with_a_message_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "rxacp.testing._reference_decorated", None)
    transport = InMemoryTransportPair.create().agent_transport
    with pytest.raises(RuntimeError, match=r"rxacp\.agent\.support"):
        reference_agent.build_agent("decorators", transport, reference_agent.ReferenceOptions())


def test_help_lists_the_whole_prompt_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        reference_agent.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "prompt vocabulary" in out
    for word in BEHAVIOURS:
        assert f"\n  {word}" in out, f"--help does not list {word!r}"
    for usage in ("stream N", "slow SECONDS", "read PATH", "stubborn SECONDS", "permission"):
        assert usage in out
