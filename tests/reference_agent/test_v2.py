"""The reference agent with ``--protocol-versions 1,2``: v2 clients get v2, v1 clients v1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from reactivex import operators as ops

from rxacp.client import AcpAsyncClient, AcpClient, CancellationSignal
from rxacp.schema import PromptResponse, RequestPermissionResponse, v2
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .conftest import WAIT, agent_command, agent_env

V2_APIS = ("sync", "async")


def _client(*flags: str, v2_client: bool = True) -> AcpAsyncClient:
    cmd = agent_command(*flags)
    params = AgentParameters.builder(cmd[0]).args(*cmd[1:]).env(agent_env()).build()
    builder = AcpClient.async_(StdioAcpClientTransport(params)).request_permission_handler(
        lambda _r: RequestPermissionResponse.selected("allow")
    )
    if v2_client:
        builder.protocol_v2()
    return builder.build()


@pytest.fixture(params=V2_APIS)
def dual(request: pytest.FixtureRequest) -> Iterator[AcpAsyncClient]:
    client = _client("--api", request.param, "--protocol-versions", "1,2", "--cancel-grace", "5")
    yield client
    client.close()


def _turn(client: AcpAsyncClient, sid: str, text: str, stop: Any = None) -> list[Any]:
    request = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    items: list[Any] = client.prompt_turn(request, stop).pipe(ops.to_list()).block(WAIT)
    return items


def _session(client: AcpAsyncClient) -> str:
    init = client.initialize().block(WAIT)
    assert isinstance(init, v2.InitializeResponse) and init.info.name == "rxacp-reference"
    return str(client.new_session({"cwd": "/tmp"}).block(WAIT).session_id)


def test_a_v2_turn_streams_chunks_with_one_message_id_and_ends_idle(dual: AcpAsyncClient) -> None:
    sid = _session(dual)
    items = _turn(dual, sid, "stream 3")
    assert [u.session_update for u in items[:2]] == ["user_message", "state_update"]
    chunks = [u for u in items if u.session_update == "agent_message_chunk"]
    assert len(chunks) == 3 and len({c.message_id for c in chunks}) == 1
    assert (items[-1].state, items[-1].stop_reason) == ("idle", "end_turn")


def test_v2_permission_plan_and_tool_calls_are_sent_in_v2_form(dual: AcpAsyncClient) -> None:
    sid = _session(dual)
    states = [u.state for u in _turn(dual, sid, "permission") if u.session_update == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    kinds = {u.session_update for u in _turn(dual, sid, "plan") + _turn(dual, sid, "tool")}
    assert {"plan_update", "tool_call_update"} <= kinds
    assert not kinds & {"plan", "tool_call"}


def test_cancel_ends_a_slow_v2_turn_with_idle_cancelled(dual: AcpAsyncClient) -> None:
    sid = _session(dual)
    stop = CancellationSignal()
    first_chunk = threading.Event()

    def on_note(note: Any) -> None:
        if note.update.session_update == "agent_message_chunk":
            first_chunk.set()

    dual.updates(sid).subscribe(on_note)
    out: list[Any] = []
    done = threading.Event()
    dual.prompt_turn(v2.PromptRequest.text(sid, "slow 20"), stop).pipe(ops.to_list()).subscribe(
        out.extend, on_completed=done.set
    )
    assert first_chunk.wait(WAIT)
    stop.cancel()
    assert done.wait(WAIT)
    assert (out[-1].state, out[-1].stop_reason) == ("idle", "cancelled")


def test_resume_with_replay_from_start_replays_the_history_then_an_idle_snapshot(
    dual: AcpAsyncClient,
) -> None:
    sid = _session(dual)
    _turn(dual, sid, "echo hello")
    seen: list[Any] = []
    dual.updates(sid).subscribe(lambda n: seen.append(n.update))
    answer = dual.resume_session(
        {"sessionId": sid, "cwd": "/tmp", "replayFrom": {"type": "start"}}
    ).block(WAIT)
    assert answer.config_options is not None
    replayed = [(u.session_update, u.content[0].text) for u in seen[:2]]
    assert replayed == [("user_message", "echo hello"), ("agent_message", "hello")]
    assert seen[-1].session_update == "state_update" and seen[-1].state == "idle"
    changed = dual.set_session_config_option(
        {"sessionId": sid, "configId": "mode", "type": "id", "value": "fast"}
    ).block(WAIT)
    assert changed.config_options[0].current_value == "fast"


@pytest.mark.parametrize("api", V2_APIS)
def test_a_v1_client_gets_the_unchanged_v1_agent_from_a_dual_reference_agent(api: str) -> None:
    client = _client("--api", api, "--protocol-versions", "1,2", v2_client=False)
    try:
        assert client.initialize().block(WAIT).protocol_version == 1
        sid = client.new_session({"cwd": "/tmp", "mcpServers": []}).block(WAIT).session_id
        items = _turn(client, sid, "echo hi")
        assert isinstance(items[-1], PromptResponse) and items[-1].stop_reason == "end_turn"
    finally:
        client.close()


def test_a_v2_client_falls_back_to_v1_against_the_default_reference_agent() -> None:
    client = _client("--api", "sync")
    try:
        assert client.initialize().block(WAIT).protocol_version == 1
        assert client.protocol_version == 1
    finally:
        client.close()
