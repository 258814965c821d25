"""MockAcpClient: drives a real agent in memory with canned fs / permission / terminal answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rxacp.agent import AcpAgent, AcpSyncAgent, SyncAgentBuilder
from rxacp.agent.support import AcpAgentSupport, acp_agent, prompt
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    PromptRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
)
from rxacp.testing import InMemoryTransportPair, MockAcpClient
from rxacp.transport.base import AcpTransport

from .._notes import chunk_text
from .agents import builder


@pytest.fixture
def client() -> Iterator[MockAcpClient]:
    with MockAcpClient.connect(builder) as c:
        yield c


def test_prompt_auto_initializes_creates_a_session_and_returns_the_answer(
    client: MockAcpClient,
) -> None:
    response = client.prompt("hello there")
    assert response.stop_reason == "end_turn"
    assert client.text() == "hello there"
    sent = [f.method for f in client.frames if f.direction == "out" and f.method]
    assert sent == ["initialize", "session/new", "session/prompt"]
    init = next(f.message for f in client.frames if f.method == "initialize")
    assert init["params"]["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
    }


def test_without_auto_initialize_the_first_message_is_the_call_itself() -> None:
    with MockAcpClient.connect(builder, auto_initialize=False) as c:
        c.new_session()
        assert [f.method for f in c.frames if f.direction == "out"] == ["session/new"]


def test_configured_capabilities_reach_the_agent_and_gate_its_calls() -> None:
    with MockAcpClient.connect(builder, client_capabilities={"terminal": True}) as c:
        c.file("/a.txt", "content")
        c.prompt("read /a.txt")
        assert isinstance(c.agent, AcpSyncAgent)
        capabilities = c.agent.client_capabilities
        assert capabilities is not None and capabilities.supports("terminal")
        assert "fs.readTextFile" in c.text()  # the agent was refused locally, nothing sent
        assert c.calls("fs/read_text_file") == []


def test_files_are_served_with_line_and_limit_and_missing_ones_are_resource_not_found(
    client: MockAcpClient,
) -> None:
    client.file("/p/notes.txt", "one\ntwo\nthree\n")
    client.prompt("read /p/notes.txt")
    client.prompt("read /p/notes.txt 2 1")
    client.prompt("read /p/missing.txt")
    texts = [chunk_text(u) for u in client.updates]
    assert texts[0] == "one\ntwo\nthree\n"
    assert texts[1] == "two\n"
    assert "no file /p/missing.txt" in texts[2] and "-32002" in texts[2]


def test_writes_are_recorded_and_readable_afterwards(client: MockAcpClient) -> None:
    client.prompt("write /out.txt hello world")
    assert client.written == {"/out.txt": "hello world"}
    client.prompt("read /out.txt")
    assert chunk_text(client.updates[-1]) == "hello world"


def test_relative_file_paths_are_refused_with_a_clear_error(client: MockAcpClient) -> None:
    with pytest.raises(ValueError, match="absolute"):
        client.file("notes.txt", "x")


def test_permission_requests_are_rejected_by_default_and_recorded(client: MockAcpClient) -> None:
    client.prompt("permission")
    assert client.text() == "no"
    assert [o.option_id for o in client.permission_requests[0].options] == ["yes", "no"]


@pytest.mark.parametrize(
    ("answer", "shown"),
    [("allow", "yes"), ("reject", "no"), ("cancel", "cancelled"), ("no", "no")],
)
def test_permission_policy_words_and_option_ids_pick_the_option(
    client: MockAcpClient,
    answer: str,
    shown: str,
) -> None:
    client.permission(answer)
    client.prompt("permission")
    assert client.text() == shown


def test_permission_callable_sees_the_request_and_decides(client: MockAcpClient) -> None:
    seen: list[str] = []

    def decide(req: RequestPermissionRequest) -> RequestPermissionResponse:
        seen.append(req.session_id)
        return RequestPermissionResponse.selected(req.options[0].option_id)

    client.permission(decide)
    client.prompt("permission")
    assert client.text() == "yes" and seen == [client.session_id]


def test_permission_option_that_was_not_offered_is_an_error_for_the_agent(
    client: MockAcpClient,
) -> None:
    client.permission("maybe")
    client.prompt("permission")
    assert "option 'maybe' was not offered (offered: ['yes', 'no'])" in client.text()


def test_permission_word_without_a_matching_option_kind_is_an_error_for_the_agent(
    client: MockAcpClient,
) -> None:
    client.permission("reject")
    client.prompt("choice")
    assert "offered no reject_* option" in client.text()
    client.permission("allow")
    client.prompt("choice")
    assert chunk_text(client.updates[-1]) == "red"


def test_terminals_answer_by_command_line_then_command_then_default(client: MockAcpClient) -> None:
    client.terminal("ls -la", output="full", exit_code=0)
    client.terminal("ls", output="bare", exit_code=2)
    client.terminal(output="any", exit_code=7)
    for command in ("ls -la", "ls -l", "make"):
        client.prompt(f"terminal {command}")
    texts = [chunk_text(u) for u in client.updates]
    assert texts == ["full|0", "bare|2", "any|7"]
    assert client.commands == ["ls -la", "ls -l", "make"]


def test_an_unscripted_terminal_tells_the_agent_how_to_script_it(client: MockAcpClient) -> None:
    client.prompt("terminal make all")
    assert "no terminal scripted for 'make all'" in client.text()
    assert "mock.terminal('make'" in client.text()


def test_on_overrides_a_canned_answer_with_a_callable(client: MockAcpClient) -> None:
    client.on("fs/read_text_file", lambda req: ReadTextFileResponse(content=f"<{req.path}>"))
    client.prompt("read /x")
    assert client.text() == "</x>"


def test_on_answers_with_an_exception_keeping_its_code(client: MockAcpClient) -> None:
    client.on("fs/read_text_file", AcpProtocolException(-32042, "nope"))
    client.prompt("read /x")
    assert "nope" in client.text() and "-32042" in client.text()


def test_on_refuses_methods_the_client_does_not_answer(client: MockAcpClient) -> None:
    with pytest.raises(ValueError, match="not a client request"):
        client.on("session/prompt", {})


def test_extension_requests_can_be_scripted() -> None:
    pair = InMemoryTransportPair.create()
    with MockAcpClient(pair.client_transport) as c:
        c.on("_acme/ping", lambda params: {"pong": params["n"]})
        with AcpAgent.sync(pair.agent_transport).build() as agent:
            assert agent.ext_method("_acme/ping", {"n": 3}) == {"pong": 3}
    assert c.calls("_acme/ping") == [{"n": 3}]


def test_updates_and_text_are_kept_per_session(client: MockAcpClient) -> None:
    first = client.new_session()
    client.prompt("alpha")
    second = client.new_session()
    client.prompt("beta")
    assert client.text(first) == "alpha" and client.text(second) == "beta"
    assert client.text() == "beta"  # the current session
    assert [u.session_id for u in client.updates] == [first, second]
    assert len(client.updates_for(first)) == 1


def test_prompt_accepts_a_request_or_content_blocks(client: MockAcpClient) -> None:
    sid = client.new_session()
    client.prompt(PromptRequest.text(sid, "model"))
    client.prompt([{"type": "text", "text": "blocks"}])
    assert client.text() == "modelblocks"


def test_expect_updates_returns_once_enough_arrived(client: MockAcpClient) -> None:
    client.prompt("stream 3")
    assert len(client.expect_updates(3, timeout=1)) == 3


def test_expect_updates_timeout_says_what_arrived(client: MockAcpClient) -> None:
    client.prompt("hi")
    with pytest.raises(AssertionError) as caught:
        client.expect_updates(5, timeout=0.05)
    message = str(caught.value)
    assert "expected 5 session/update(s) within 0.05 s but got 1 (agent_message_chunk)" in message
    assert "received: session/update" in message


def test_a_prompt_without_answer_fails_bounded_and_is_disposed(client: MockAcpClient) -> None:
    with pytest.raises(AssertionError, match="no answer to session/prompt"):
        client.prompt("hang", timeout=0.1)
    assert client.agent is not None
    # disposal told the agent: its turn was cancelled by $/cancel_request and ended
    client.prompt("after")
    assert client.text() == "after"
    assert any(f.method == "$/cancel_request" for f in client.frames if f.direction == "out")


def test_prompt_and_cancel_after_sends_one_cancel_and_returns_cancelled(
    client: MockAcpClient,
) -> None:
    response = client.prompt_and_cancel_after(2, "stream 500")
    assert response.stop_reason == "cancelled"
    assert 2 <= len(client.updates) < 500
    cancels = [f for f in client.frames if f.direction == "out" and f.method == "session/cancel"]
    assert len(cancels) == 1


def test_prompt_and_cancel_after_fails_when_the_turn_ends_too_early(client: MockAcpClient) -> None:
    with pytest.raises(AssertionError, match=r"answered .*end_turn.* after 1 update"):
        client.prompt_and_cancel_after(3, "short")


def test_prompt_and_cancel_after_times_out_with_a_description(client: MockAcpClient) -> None:
    with pytest.raises(AssertionError, match="no 1 update"):
        client.prompt_and_cancel_after(1, "hang", timeout=0.1)


def test_cancel_without_a_session_is_a_clear_error() -> None:
    with MockAcpClient() as c, pytest.raises(ValueError, match="no session"):
        c.cancel()


def test_agent_errors_propagate_from_prompt() -> None:
    def failing(transport: AcpTransport) -> SyncAgentBuilder:
        return builder(transport).prompt_handler(
            lambda req, ctx: (_ for _ in ()).throw(AcpProtocolException(-32099, "boom"))
        )

    with MockAcpClient.connect(failing) as c, pytest.raises(AcpProtocolException, match="boom"):
        c.prompt("x")


@acp_agent(name="deco", version="1")
class DecoratedAgent:
    @prompt
    def answer(self, req: PromptRequest) -> str:
        return "deco:" + req.prompt_text()


@pytest.mark.parametrize(
    "target",
    [
        DecoratedAgent(),
        DecoratedAgent,
        AcpAgentSupport.create(DecoratedAgent()),
        lambda t: AcpAgentSupport.create(DecoratedAgent()).transport(t),
        lambda t: builder(t).build(),
    ],
    ids=["instance", "class", "support-builder", "support-factory", "built-agent"],
)
def test_connect_accepts_every_form_of_agent(target: object) -> None:
    with MockAcpClient.connect(target) as c:
        c.prompt("x")
        assert c.text() in ("deco:x", "x")


@pytest.mark.parametrize(
    "target", [42, AcpAgent.sync(InMemoryTransportPair.create().agent_transport)]
)
def test_connect_refuses_things_that_are_not_agents(target: object, no_thread_left: None) -> None:
    with pytest.raises(TypeError, match="factory taking the transport"):
        MockAcpClient.connect(target)


def test_connect_refuses_a_factory_returning_something_else(no_thread_left: None) -> None:
    with pytest.raises(TypeError, match="it returned int"):
        MockAcpClient.connect(lambda t: 42)


def test_close_closes_the_agent_it_started_and_leaves_no_thread(no_thread_left: None) -> None:
    c = MockAcpClient.connect(builder)
    c.prompt("x")
    c.close()
    c.close()  # idempotent
    assert not c.agent.session.is_open
    assert not c.client.session.is_open


def test_a_client_given_a_transport_has_no_agent_end() -> None:
    pair = InMemoryTransportPair.create()
    with MockAcpClient(pair.client_transport) as c, pytest.raises(RuntimeError, match="no agent"):
        _ = c.agent_transport
