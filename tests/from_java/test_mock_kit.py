"""``MockAcpClientTest`` (4 tests) and ``MockAcpAgentTest`` (3 tests) of the Java SDK's test kit
(``acp-test``, 0.16.0-SNAPSHOT) ported line by line, over the in-memory pair as in Java. Java
lines are in comments above their port; where the port must differ, the comment says why.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops

from rxacp import AcpAgent, AcpAsyncAgent, AcpClient
from rxacp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    CancelNotification,
    ClientCapabilities,
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PermissionOptionKind,
    PermissionSelected,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    StopReason,
    TextContent,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)
from rxacp.testing import InMemoryTransportPair, MockAcpAgent, MockAcpClient

pytestmark = pytest.mark.timeout(60)

TIMEOUT = timedelta(seconds=5)  # private static final Duration TIMEOUT = Duration.ofSeconds(5);


@pytest.fixture
def pair() -> Iterator[InMemoryTransportPair]:
    # InMemoryTransportPair pair = InMemoryTransportPair.create(); try { ... }
    pair = InMemoryTransportPair.create()
    try:
        yield pair
    finally:
        pair.close_gracefully().block(TIMEOUT)  # finally { pair.closeGracefully().block(TIMEOUT); }


def _async_agent(pair: InMemoryTransportPair, session_id: str, prompt: Any) -> AcpAsyncAgent:
    # AcpAsyncAgent agent = AcpAgent.async(pair.agentTransport())
    #     .initializeHandler(request -> Mono
    #         .just(new AcpSchema.InitializeResponse(1, new AcpSchema.AgentCapabilities(),
    #             List.of())))
    #     .newSessionHandler(request -> Mono.just(
    #         new AcpSchema.NewSessionResponse("...", null, null)))
    #     .promptHandler(...)
    #     .build();
    return (
        AcpAgent.async_(pair.agent_transport)
        .initialize_handler(
            lambda request: reactivex.just(
                InitializeResponse(
                    protocol_version=1, agent_capabilities=AgentCapabilities(), auth_methods=[]
                )
            )
        )
        .new_session_handler(
            lambda request: reactivex.just(NewSessionResponse(session_id=session_id))
        )
        .prompt_handler(prompt)
        .build()
    )


# ------------------------------------------------------------------------- MockAcpClientTest
def test_default_mock_client_initializes_and_creates_session(pair: InMemoryTransportPair) -> None:
    agent = _async_agent(
        pair,
        "test-session",
        # (request, updater) -> Mono.just(
        #     new AcpSchema.PromptResponse(AcpSchema.StopReason.END_TURN))
        lambda request, updater: reactivex.just(PromptResponse(stop_reason=StopReason.END_TURN)),
    )
    agent.start().subscribe()  # agent.start().subscribe();  (no Thread.sleep(100) needed)
    # MockAcpClient mockClient = MockAcpClient.createDefault(pair.clientTransport());
    mock_client = MockAcpClient.create_default(pair.client_transport)
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
    agent.close_gracefully().block(TIMEOUT)  # agent.closeGracefully().block(TIMEOUT);


def test_mock_client_receives_session_updates(pair: InMemoryTransportPair) -> None:
    # .promptHandler((request, updater) -> updater.sendUpdate("update-session",
    #         new AcpSchema.AgentMessageChunk("agent_message_chunk",
    #             new AcpSchema.TextContent("Processing...")))
    #     .then(Mono.just(new AcpSchema.PromptResponse(AcpSchema.StopReason.END_TURN))))
    # -- send_update is fire-and-forget (returns None, takes the update or a whole notification)
    def prompt(request: PromptRequest, updater: Any) -> Any:
        updater.send_update(AgentMessageChunk(content=TextContent(text="Processing...")))
        return reactivex.just(PromptResponse(stop_reason=StopReason.END_TURN))

    agent = _async_agent(pair, "update-session", prompt)
    agent.start().subscribe()
    mock_client = MockAcpClient.create_default(pair.client_transport)
    mock_client.initialize()
    mock_client.new_session("/workspace")
    # mockClient.expectUpdates(1);  -- rxacp's expect_updates(n) *is* the wait: called here, before
    # the prompt, it would wait for an update nobody sends yet; it moves to awaitUpdates' place
    # mockClient.prompt("update-session", "Do something");  -- (text, session_id=...) in rxacp
    mock_client.prompt("Do something", session_id="update-session")
    # assertThat(mockClient.awaitUpdates(TIMEOUT)).isTrue();
    assert len(mock_client.expect_updates(1, TIMEOUT)) == 1
    assert len(mock_client.get_received_updates()) == 1
    # assertThat(mockClient.getReceivedUpdates().get(0).update())
    #     .isInstanceOf(AgentMessageChunk.class);
    assert isinstance(mock_client.get_received_updates()[0].update, AgentMessageChunk)
    mock_client.close_gracefully()
    agent.close_gracefully().block(TIMEOUT)


def test_mock_client_handles_permission_requests(pair: InMemoryTransportPair) -> None:
    agent_ref: list[AcpAsyncAgent] = []  # AtomicReference<AcpAsyncAgent> agentRef

    def prompt(request: PromptRequest, updater: Any) -> Any:
        # AcpSchema.ToolCallUpdate toolCall = new AcpSchema.ToolCallUpdate("tool-1", "Edit File",
        #     AcpSchema.ToolKind.EDIT, AcpSchema.ToolCallStatus.PENDING, null, null, null, null);
        tool_call = ToolCallUpdate(
            tool_call_id="tool-1",
            title="Edit File",
            kind=ToolKind.EDIT,
            status=ToolCallStatus.PENDING,
        )
        # List<AcpSchema.PermissionOption> options = List.of(new AcpSchema.PermissionOption(
        #     "allow", "Allow", AcpSchema.PermissionOptionKind.ALLOW_ONCE));
        options = [
            PermissionOption(option_id="allow", name="Allow", kind=PermissionOptionKind.ALLOW_ONCE)
        ]
        # return agentRef.get().requestPermission(new AcpSchema.RequestPermissionRequest(
        #         "perm-session", toolCall, options))
        #     .then(Mono.just(new AcpSchema.PromptResponse(AcpSchema.StopReason.END_TURN)));
        return (
            agent_ref[0]
            .request_permission(
                RequestPermissionRequest(
                    session_id="perm-session", tool_call=tool_call, options=options
                )
            )
            .pipe(
                ops.ignore_elements(),  # .then(next): ignore_elements + concat
                ops.concat(reactivex.just(PromptResponse(stop_reason=StopReason.END_TURN))),
            )
        )

    agent = _async_agent(pair, "perm-session", prompt)
    agent_ref.append(agent)  # agentRef.set(agent);
    agent.start().subscribe()
    # MockAcpClient mockClient = MockAcpClient.builder(pair.clientTransport())
    #     .permissionResponse(request -> new AcpSchema.RequestPermissionResponse(
    #         new AcpSchema.PermissionSelected("allow")))
    #     .build();
    mock_client = (
        MockAcpClient.builder(pair.client_transport)
        .permission_response(
            lambda request: RequestPermissionResponse(outcome=PermissionSelected(option_id="allow"))
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
    agent.close_gracefully().block(TIMEOUT)


def test_mock_client_handles_file_read_requests(pair: InMemoryTransportPair) -> None:
    agent_ref: list[AcpAsyncAgent] = []

    def prompt(request: PromptRequest, updater: Any) -> Any:
        # return agentRef.get().readTextFile(new AcpSchema.ReadTextFileRequest("file-session",
        #         "/src/Main.java", null, null))
        #     .then(Mono.just(new AcpSchema.PromptResponse(AcpSchema.StopReason.END_TURN)));
        return (
            agent_ref[0]
            .read_text_file(ReadTextFileRequest(session_id="file-session", path="/src/Main.java"))
            .pipe(
                ops.ignore_elements(),
                ops.concat(reactivex.just(PromptResponse(stop_reason=StopReason.END_TURN))),
            )
        )

    agent = _async_agent(pair, "file-session", prompt)
    agent_ref.append(agent)
    agent.start().subscribe()
    # MockAcpClient mockClient = MockAcpClient.builder(pair.clientTransport())
    #     .fileContent("/src/Main.java", "public class Main {}").build();
    mock_client = (
        MockAcpClient.builder(pair.client_transport)
        .file_content("/src/Main.java", "public class Main {}")
        .build()
    )
    mock_client.initialize()
    mock_client.new_session("/workspace")
    mock_client.prompt("Read file", session_id="file-session")
    assert len(mock_client.get_received_file_read_requests()) == 1
    assert mock_client.get_received_file_read_requests()[0].path == "/src/Main.java"
    mock_client.close_gracefully()
    agent.close_gracefully().block(TIMEOUT)


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
