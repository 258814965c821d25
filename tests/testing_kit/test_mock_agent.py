"""MockAcpAgent: a scripted fake agent for testing clients; records traffic, bounded waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rxacp.agent import SyncPromptContext
from rxacp.client import AcpClient, AcpSyncClient, CancellationSignal
from rxacp.errors import AcpCapabilityException, AcpProtocolException
from rxacp.schema import (
    AgentMessageChunk,
    ListSessionsResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    ReadTextFileResponse,
    SessionNotification,
    TextContent,
)
from rxacp.session.blocking import wait_for
from rxacp.testing import InMemoryTransportPair, MockAcpAgent

from .._notes import chunk_text


@pytest.fixture
def agent() -> Iterator[MockAcpAgent]:
    with MockAcpAgent(timeout=2.0) as a:
        yield a


def connect(agent: MockAcpAgent, updates: list[SessionNotification] | None = None) -> AcpSyncClient:
    builder = AcpClient.sync(agent.client_transport)
    if updates is not None:
        builder.session_update_consumer(updates.append)
    client = builder.build()
    client.initialize()
    return client


def new_session(client: AcpSyncClient) -> str:
    return client.new_session(NewSessionRequest.of("/tmp")).session_id


def test_canned_updates_and_stop_reason_reach_the_client_in_order(agent: MockAcpAgent) -> None:
    agent.on_prompt(
        updates=[
            "Hel",
            {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}},
            AgentMessageChunk(content=TextContent(text="lo")),
        ],
        stop_reason="max_tokens",
    )
    updates: list[SessionNotification] = []
    with connect(agent, updates) as client:
        sid = new_session(client)
        response = client.prompt(PromptRequest.text(sid, "hi"))
    assert response.stop_reason == "max_tokens"
    kinds = [u.update.session_update for u in updates]
    assert kinds == ["agent_message_chunk", "agent_thought_chunk", "agent_message_chunk"]
    [prompt] = agent.expect_prompts(1)
    assert prompt.prompt_text() == "hi" and prompt.session_id == sid


def test_unscripted_prompts_end_the_turn_and_new_sessions_get_fresh_ids(
    agent: MockAcpAgent,
) -> None:
    with connect(agent) as client:
        first, second = new_session(client), new_session(client)
        assert client.prompt(PromptRequest.text(first, "x")).stop_reason == "end_turn"
    assert first == "mock-session-1" and second == "mock-session-2"


def test_on_answers_with_a_model_a_callable_or_an_exception(agent: MockAcpAgent) -> None:
    agent.on("session/new", NewSessionResponse(session_id="fixed"))
    with connect(agent) as client:
        assert new_session(client) == "fixed"
        agent.on("session/new", lambda req: NewSessionResponse(session_id="cwd:" + req.cwd))
        assert new_session(client) == "cwd:/tmp"
        agent.on("session/new", AcpProtocolException(-32050, "no sessions today"))
        with pytest.raises(AcpProtocolException, match="no sessions today") as caught:
            new_session(client)
        assert caught.value.code == -32050


def test_a_canned_wire_dict_is_sent_as_is(agent: MockAcpAgent) -> None:
    agent.on("session/new", {"sessionId": "raw", "_meta": {"x": 1}})
    with connect(agent) as client:
        assert new_session(client) == "raw"
    answer = [f.message for f in agent.frames if f.direction == "out" and "result" in f.message]
    assert {"sessionId": "raw", "_meta": {"x": 1}} in [a["result"] for a in answer]


def test_initialize_advertises_what_was_scripted(agent: MockAcpAgent) -> None:
    agent.on("session/load", {}).on("session/list", ListSessionsResponse(sessions=[]))
    with connect(agent) as client:
        caps = client.agent_capabilities
        assert caps is not None
        assert caps.supports("loadSession") and caps.supports("sessionCapabilities.list")
        assert not caps.supports("sessionCapabilities.delete")
        assert client.list_sessions().sessions == []


def test_explicit_capabilities_are_advertised_exactly_and_gate_the_client() -> None:
    with MockAcpAgent(agent_capabilities={"loadSession": False}) as mock:
        mock.on("session/list", ListSessionsResponse(sessions=[]))
        with connect(mock) as client:
            with pytest.raises(AcpCapabilityException):
                client.list_sessions()
            response = client.initialize_response
            assert response is not None and response.agent_capabilities is not None
            assert response.agent_capabilities.prompt_capabilities is None
        assert mock.calls("session/list") == []


def test_a_scripted_initialize_answer_is_used(agent: MockAcpAgent) -> None:
    agent.on("initialize", {"protocolVersion": 1, "agentInfo": {"name": "x", "version": "9"}})
    with connect(agent) as client:
        response = client.initialize_response
        assert response is not None and response.agent_info is not None
        assert response.agent_info.version == "9"


def test_an_unscripted_method_with_a_required_answer_says_how_to_script_it(
    agent: MockAcpAgent,
) -> None:
    with connect(agent) as client, pytest.raises(AcpProtocolException) as caught:
        wait_for(client.session.send_request("session/fork", {"sessionId": "s", "cwd": "/"}), 2.0)
    assert caught.value.code == -32601
    assert "mock.on('session/fork', ...)" in str(caught.value)


@pytest.mark.parametrize(
    ("method", "why"),
    [
        ("bogus/method", "unknown ACP method"),
        ("fs/read_text_file", "answered by the client"),
        ("session/cancel", "is a notification"),
        ("session/prompt", "on_prompt"),
    ],
)
def test_on_refuses_what_an_agent_cannot_answer(agent: MockAcpAgent, method: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        agent.on(method, {})


def test_on_prompt_refuses_a_script_mixed_with_canned_updates(agent: MockAcpAgent) -> None:
    with pytest.raises(ValueError, match="not both"):
        agent.on_prompt(lambda req, ctx: None, updates=["x"])
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="callable"):
        agent.on_prompt("not callable")  # type: ignore[arg-type]


def test_a_prompt_script_uses_the_real_context_and_may_return_a_stop_reason(
    agent: MockAcpAgent,
) -> None:
    def script(req: PromptRequest, ctx: SyncPromptContext) -> str:
        content = ctx.read_file("/etc/motd")
        ctx.send_message(content.upper())
        return "refusal"

    updates: list[SessionNotification] = []
    client = (
        AcpClient.sync(agent.client_transport)
        .read_text_file_handler(lambda req: ReadTextFileResponse(content="hi " + req.path))
        .session_update_consumer(updates.append)
        .build()
    )
    agent.on_prompt(script)
    with client:
        client.initialize()
        response = client.prompt(PromptRequest.text(new_session(client), "go"))
    assert response.stop_reason == "refusal"
    assert chunk_text(updates[0]) == "HI /ETC/MOTD"
    sent = [f.method for f in agent.frames if f.direction == "out" and f.method]
    assert sent == ["fs/read_text_file", "session/update"]


def test_wait_for_cancel_holds_the_turn_until_session_cancel(agent: MockAcpAgent) -> None:
    agent.on_prompt(updates=["working"], wait_for_cancel=True)
    stop = CancellationSignal()
    client = (
        AcpClient.sync(agent.client_transport)
        .session_update_consumer(lambda _n: stop.cancel())
        .build()
    )
    with client:
        client.initialize()
        response = client.prompt(PromptRequest.text(new_session(client), "go"), stop)
    assert response.stop_reason == "cancelled"
    assert len(agent.expect_received("session/cancel")) == 1


def test_wait_for_cancel_without_a_cancel_errors_after_the_timeout() -> None:
    with MockAcpAgent(timeout=0.05) as mock:
        mock.on_prompt(wait_for_cancel=True)
        with (
            connect(mock) as client,
            pytest.raises(AcpProtocolException, match="no session/cancel"),
        ):
            client.prompt(PromptRequest.text(new_session(client), "go"))


def test_frames_record_both_directions_including_cancel_request(agent: MockAcpAgent) -> None:
    agent.on_prompt(wait_for_cancel=True)
    with connect(agent) as client:
        sid = new_session(client)
        subscription = client.async_client.prompt(PromptRequest.text(sid, "x")).subscribe()
        agent.expect_prompts(1)
        subscription.dispose()
        [params] = agent.expect_received("$/cancel_request")
    prompt_frame = next(f for f in agent.frames if f.method == "session/prompt")
    assert params == {"requestId": prompt_frame.message["id"]}
    assert isinstance(prompt_frame.raw, bytes) and prompt_frame.direction == "in"
    assert {f.direction for f in agent.frames} == {"in", "out"}


def test_expect_prompts_timeout_says_what_was_received(agent: MockAcpAgent) -> None:
    with connect(agent) as client:
        client.prompt(PromptRequest.text(new_session(client), "x"))
        with pytest.raises(AssertionError) as caught:
            agent.expect_prompts(2, timeout=0.05)
    assert str(caught.value) == (
        "MockAcpAgent expected 2 session/prompt message(s) within 0.05 s but got 1; "
        "received: initialize, session/new, session/prompt"
    )


def test_expect_received_with_nothing_received_says_nothing() -> None:
    with MockAcpAgent() as mock, pytest.raises(AssertionError, match="received: nothing"):
        mock.expect_received("initialize", timeout=0)


def test_extension_methods_can_be_scripted_and_get_raw_params(agent: MockAcpAgent) -> None:
    agent.on("_acme/echo", lambda params: {"got": params})
    with connect(agent) as client:
        assert client.ext_method("_acme/echo", {"a": 1}) == {"got": {"a": 1}}


def test_runs_on_a_transport_it_is_given() -> None:
    pair = InMemoryTransportPair.create()
    with MockAcpAgent(pair.agent_transport) as mock:
        with pytest.raises(RuntimeError, match="no client end"):
            _ = mock.client_transport
        with AcpClient.sync(pair.client_transport).build() as client:
            info = client.initialize().agent_info
            assert info is not None and info.name == "mock-agent"


def test_close_stops_a_held_turn_and_leaves_no_thread(no_thread_left: None) -> None:
    mock = MockAcpAgent()
    mock.on_prompt(wait_for_cancel=True)
    client = connect(mock)
    subscription = client.async_client.prompt(
        PromptRequest.text(new_session(client), "x")
    ).subscribe(on_error=lambda e: None)
    mock.expect_prompts(1)
    mock.close()
    mock.close()  # idempotent
    assert not mock.agent.session.is_open
    subscription.dispose()
    client.close()


def test_unstable_methods_without_a_builder_setter_can_be_scripted(agent: MockAcpAgent) -> None:
    with connect(agent) as client:
        session = client.session
        with pytest.raises(AcpProtocolException, match=r"mock.on\('session/status'"):
            wait_for(session.send_request("session/status", {"sessionId": "s1"}), 2.0)
        agent.on("session/status", lambda req: {"status": f"_{type(req).__name__}"})
        assert wait_for(session.send_request("session/status", {"sessionId": "s1"}), 2.0) == {
            "status": "_SessionStatusRequest"
        }
