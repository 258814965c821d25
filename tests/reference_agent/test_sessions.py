"""The reference agent's session methods (new, list, set_mode, load, close), once per API."""

from __future__ import annotations

import re

import pytest

from rxacp.client import AcpClient
from rxacp.errors import AcpProtocolException
from rxacp.schema import PromptRequest
from rxacp.testing import reference_agent
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import APIS, Conversation


def test_new_session_offers_the_default_and_fast_modes(conv: Conversation) -> None:
    response = conv.client.new_session({"cwd": "/srv/project", "mcpServers": []})
    assert response.modes is not None
    assert response.modes.current_mode_id == "default"
    assert [m.id for m in response.modes.available_modes] == ["default", "fast"]


def test_list_sessions_filters_by_cwd_and_titles_by_first_prompt(conv: Conversation) -> None:
    sid = conv.new_session("/srv/listed")
    conv.client.prompt(PromptRequest.text(sid, "echo first words"))
    listed = conv.client.list_sessions({"cwd": "/srv/listed"}).sessions
    assert [(s.session_id, s.cwd) for s in listed] == [(sid, "/srv/listed")]
    assert listed[0].title == "echo first words"


def test_set_mode_accepts_known_modes_and_rejects_unknown_ones(conv: Conversation) -> None:
    sid = conv.new_session()
    conv.client.set_session_mode({"sessionId": sid, "modeId": "fast"})
    with pytest.raises(AcpProtocolException) as info:
        conv.client.set_session_mode({"sessionId": sid, "modeId": "turbo"})
    assert info.value.code == -32602
    assert "turbo" in str(info.value)


def test_load_session_replays_the_history_before_answering(conv: Conversation) -> None:
    sid = conv.new_session("/srv/load")
    conv.client.prompt(PromptRequest.text(sid, "echo remembered"))
    conv.client.set_session_mode({"sessionId": sid, "modeId": "fast"})
    before = len(conv.of(sid))
    response = conv.client.load_session({"sessionId": sid, "cwd": "/srv/load", "mcpServers": []})
    replay = conv.of(sid)[before:]
    assert [u.session_update for u in replay] == ["user_message_chunk", "agent_message_chunk"]
    assert replay[0].content.text == "echo remembered"
    assert replay[1].content.text == "remembered"
    assert response.modes is not None and response.modes.current_mode_id == "fast"


def test_load_session_replays_a_long_streamed_answer_as_one_whole_chunk(
    conv: Conversation,
) -> None:
    sid = conv.new_session("/srv/load-stream")
    conv.client.prompt(PromptRequest.text(sid, "stream 600"))
    streamed = conv.text(sid)
    before = len(conv.of(sid))
    conv.client.load_session({"sessionId": sid, "cwd": "/srv/load-stream", "mcpServers": []})
    replay = conv.of(sid)[before:]
    assert [u.session_update for u in replay] == ["user_message_chunk", "agent_message_chunk"]
    assert replay[1].content.text == streamed
    assert streamed.count(" ") == 600


def test_close_session_forgets_it_and_later_prompts_are_resource_not_found(
    conv: Conversation,
) -> None:
    sid = conv.new_session("/srv/closed")
    conv.client.close_session({"sessionId": sid})
    assert conv.client.list_sessions({"cwd": "/srv/closed"}).sessions == []
    with pytest.raises(AcpProtocolException) as info:
        conv.client.prompt(PromptRequest.text(sid, "echo hi"))
    assert info.value.code == -32002


@pytest.mark.parametrize("api", APIS)
def test_session_ids_are_unique_across_agent_processes(api: str) -> None:
    # Clients persist session ids across runs (Toad, acp-client): a counter restarting at 1
    # in every process would collide with the previous run's sessions.
    ids = set()
    for _ in range(2):
        pair = InMemoryTransportPair.create()
        options = reference_agent.ReferenceOptions()
        agent = reference_agent.build_agent(api, pair.agent_transport, options)
        agent.start()
        client = AcpClient.sync(pair.client_transport).build()
        try:
            client.initialize()
            for _ in range(2):
                ids.add(client.new_session({"cwd": "/tmp", "mcpServers": []}).session_id)
        finally:
            client.close()
            agent.close()
    assert len(ids) == 4
    assert all(re.fullmatch(r"ref-[0-9a-f-]{36}", sid) for sid in ids), ids
