"""``MockAcpClientTest`` (4 tests) and ``MockAcpAgentTest`` (3 tests) of the Java SDK's test kit
(``acp-test``, 0.16.0-SNAPSHOT) ported line by line: the mock client's tests in memory (as in
Java) and over stdio, the agent halves in ``kit_agents.py``; the mock agent's in memory. Java
lines are in comments above their port; where the port must differ, the comment says why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta

import pytest

from rxacp import AcpClient
from rxacp.schema import (
    AgentMessageChunk,
    CancelNotification,
    ClientCapabilities,
    InitializeRequest,
    NewSessionRequest,
    NewSessionResponse,
    PermissionSelected,
    PromptRequest,
    RequestPermissionResponse,
    TextContent,
)
from rxacp.testing import InMemoryTransportPair, MockAcpAgent, MockAcpClient
from rxacp.transport import AcpTransport

from .conftest import stdio_transport
from .kit_agents import AGENTS

pytestmark = pytest.mark.timeout(60)

TIMEOUT = timedelta(seconds=5)  # private static final Duration TIMEOUT = Duration.ofSeconds(5);


@pytest.fixture(params=["memory", "stdio"])
def over(request: pytest.FixtureRequest) -> str:
    """MockAcpClientTest runs over both (the agent half in ``kit_agents.py``). MockAcpAgentTest
    runs in memory only, as in Java: the mock agent it inspects lives in the test process, and
    its start waits for a client, which the Java order creates after it."""
    return str(request.param)


@pytest.fixture
def pair() -> Iterator[InMemoryTransportPair]:
    # InMemoryTransportPair pair = InMemoryTransportPair.create(); try { ... }
    pair = InMemoryTransportPair.create()
    try:
        yield pair
    finally:
        pair.close_gracefully().block(TIMEOUT)  # finally { pair.closeGracefully().block(TIMEOUT); }


@contextlib.contextmanager
def _agent(over: str, pair: InMemoryTransportPair, name: str) -> Iterator[AcpTransport]:
    """The client transport to the agent ``name`` of ``kit_agents.py``: built on the pair's
    agent end and started (``agent.start().subscribe()``), or served over stdio."""
    if over == "stdio":
        yield stdio_transport("tests.from_java.kit_agents", name)
        return
    agent = AGENTS[name](pair.agent_transport)
    agent.start().subscribe()  # agent.start().subscribe();  (no Thread.sleep(100) needed)
    try:
        yield pair.client_transport
    finally:
        agent.close_gracefully().block(TIMEOUT)  # agent.closeGracefully().block(TIMEOUT);


# ------------------------------------------------------------------------- MockAcpClientTest
def test_default_mock_client_initializes_and_creates_session(
    over: str, pair: InMemoryTransportPair
) -> None:
    with _agent(over, pair, "end_turn") as client_transport:
        # MockAcpClient mockClient = MockAcpClient.createDefault(pair.clientTransport());
        mock_client = MockAcpClient.create_default(client_transport)
        # AcpSchema.InitializeResponse initResponse = mockClient.initialize();
        init_response = mock_client.initialize()
        assert init_response is not None
        assert init_response.protocol_version == 1  # initResponse.protocolVersion()
        # AcpSchema.NewSessionResponse sessionResponse = mockClient.newSession("/workspace");
        # -- rxacp's new_session returns the session id itself, not the NewSessionResponse
        session_id = mock_client.new_session("/workspace")
        assert session_id == "test-session"
        assert mock_client.get_current_session_id() == "test-session"
        mock_client.close_gracefully()  # mockClient.closeGracefully();


def test_mock_client_receives_session_updates(over: str, pair: InMemoryTransportPair) -> None:
    with _agent(over, pair, "one_update") as client_transport:
        mock_client = MockAcpClient.create_default(client_transport)
        mock_client.initialize()
        mock_client.new_session("/workspace")
        # mockClient.expectUpdates(1);  -- rxacp's expect_updates(n) *is* the wait: called here,
        # before the prompt, it would wait for an update nobody sends yet; it moves to
        # awaitUpdates' place
        # mockClient.prompt("update-session", "Do something");  -- (text, session_id=...)
        mock_client.prompt("Do something", session_id="update-session")
        # assertThat(mockClient.awaitUpdates(TIMEOUT)).isTrue();
        assert len(mock_client.expect_updates(1, TIMEOUT)) == 1
        assert len(mock_client.get_received_updates()) == 1
        # assertThat(mockClient.getReceivedUpdates().get(0).update())
        #     .isInstanceOf(AgentMessageChunk.class);
        assert isinstance(mock_client.get_received_updates()[0].update, AgentMessageChunk)
        mock_client.close_gracefully()


def test_mock_client_handles_permission_requests(over: str, pair: InMemoryTransportPair) -> None:
    with _agent(over, pair, "permission") as client_transport:
        # MockAcpClient mockClient = MockAcpClient.builder(pair.clientTransport())
        #     .permissionResponse(request -> new AcpSchema.RequestPermissionResponse(
        #         new AcpSchema.PermissionSelected("allow")))
        #     .build();
        mock_client = (
            MockAcpClient.builder(client_transport)
            .permission_response(
                lambda request: RequestPermissionResponse(
                    outcome=PermissionSelected(option_id="allow")
                )
            )
            .build()
        )
        mock_client.initialize()
        mock_client.new_session("/workspace")
        mock_client.prompt("Need permission", session_id="perm-session")
        assert len(mock_client.get_received_permission_requests()) == 1
        # ...getReceivedPermissionRequests().get(0).toolCall().title()).isEqualTo("Edit File");
        assert mock_client.get_received_permission_requests()[0].tool_call.title == "Edit File"
        mock_client.close_gracefully()


def test_mock_client_handles_file_read_requests(over: str, pair: InMemoryTransportPair) -> None:
    with _agent(over, pair, "file_read") as client_transport:
        # MockAcpClient mockClient = MockAcpClient.builder(pair.clientTransport())
        #     .fileContent("/src/Main.java", "public class Main {}").build();
        mock_client = (
            MockAcpClient.builder(client_transport)
            .file_content("/src/Main.java", "public class Main {}")
            .build()
        )
        mock_client.initialize()
        mock_client.new_session("/workspace")
        mock_client.prompt("Read file", session_id="file-session")
        assert len(mock_client.get_received_file_read_requests()) == 1
        assert mock_client.get_received_file_read_requests()[0].path == "/src/Main.java"
        mock_client.close_gracefully()


# ------------------------------------------------------------------------- MockAcpAgentTest
def test_default_mock_agent_accepts_initialize(pair: InMemoryTransportPair) -> None:
    # MockAcpAgent mockAgent = MockAcpAgent.createDefault(pair.agentTransport());
    mock_agent = MockAcpAgent.create_default(pair.agent_transport)
    mock_agent.start()  # mockAgent.start();
    # AcpAsyncClient client = AcpClient.async(pair.clientTransport()).build();
    client = AcpClient.async_(pair.client_transport).build()
    # AcpSchema.InitializeResponse response = client
    #     .initialize(new AcpSchema.InitializeRequest(1, new AcpSchema.ClientCapabilities()))
    #     .block(TIMEOUT);
    response = client.initialize(
        InitializeRequest(protocol_version=1, client_capabilities=ClientCapabilities())
    ).block(TIMEOUT)
    assert response is not None
    assert response.protocol_version == 1
    assert len(mock_agent.get_received_init_requests()) == 1
    client.close_gracefully().block(TIMEOUT)  # client.closeGracefully().block(TIMEOUT);
    mock_agent.close_gracefully()  # mockAgent.closeGracefully();


def test_mock_agent_records_prompts(pair: InMemoryTransportPair) -> None:
    # MockAcpAgent mockAgent = MockAcpAgent.builder(pair.agentTransport())
    #     .newSessionResponse(new AcpSchema.NewSessionResponse("test-session", null, null)).build();
    mock_agent = (
        MockAcpAgent.builder(pair.agent_transport)
        .new_session_response(NewSessionResponse(session_id="test-session"))
        .build()
    )
    mock_agent.start()
    client = AcpClient.async_(pair.client_transport).build()
    client.initialize(
        InitializeRequest(protocol_version=1, client_capabilities=ClientCapabilities())
    ).block(TIMEOUT)
    client.new_session(NewSessionRequest(cwd="/workspace", mcp_servers=[])).block(TIMEOUT)
    # mockAgent.expectPrompts(1);  -- the wait itself in rxacp: it moves to awaitPrompts' place
    # client.prompt(new AcpSchema.PromptRequest("test-session",
    #     List.of(new AcpSchema.TextContent("Hello agent")))).block(TIMEOUT);
    client.prompt(
        PromptRequest(session_id="test-session", prompt=[TextContent(text="Hello agent")])
    ).block(TIMEOUT)
    # assertThat(mockAgent.awaitPrompts(TIMEOUT)).isTrue();
    assert len(mock_agent.expect_prompts(1, TIMEOUT)) == 1
    assert len(mock_agent.get_received_prompts()) == 1
    # ((AcpSchema.TextContent) mockAgent.getReceivedPrompts().get(0).prompt().get(0)).text()
    first = mock_agent.get_received_prompts()[0].prompt[0]
    assert isinstance(first, TextContent) and first.text == "Hello agent"
    client.close_gracefully().block(TIMEOUT)
    mock_agent.close_gracefully()


def test_mock_agent_records_cancellations(pair: InMemoryTransportPair) -> None:
    mock_agent = (
        MockAcpAgent.builder(pair.agent_transport)
        .new_session_response(NewSessionResponse(session_id="cancel-session"))
        .build()
    )
    mock_agent.start()
    client = AcpClient.async_(pair.client_transport).build()
    client.initialize(
        InitializeRequest(protocol_version=1, client_capabilities=ClientCapabilities())
    ).block(TIMEOUT)
    client.new_session(NewSessionRequest(cwd="/workspace", mcp_servers=[])).block(TIMEOUT)
    # client.cancel(new AcpSchema.CancelNotification("cancel-session")).block(TIMEOUT);
    client.cancel(CancelNotification(session_id="cancel-session")).block(TIMEOUT)
    # Thread.sleep(100); // Give time for notification to arrive  -- a bounded wait instead
    mock_agent.expect_received("session/cancel", 1, TIMEOUT)
    assert len(mock_agent.get_received_cancellations()) == 1
    assert mock_agent.get_received_cancellations()[0].session_id == "cancel-session"
    client.close_gracefully().block(TIMEOUT)
    mock_agent.close_gracefully()
