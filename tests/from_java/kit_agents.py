"""The agent halves of the four ``MockAcpClientTest`` tests (Java SDK 0.16.0-SNAPSHOT,
``acp-test``), ported line by line: async agents that answer at once, send an update, ask for a
permission or read a file. In-process tests build them on the pair's agent end;
``python -m tests.from_java.kit_agents NAME`` serves one over stdio.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import operators as ops

from rxacp import AcpAgent, AcpAsyncAgent, StdioAcpAgentTransport
from rxacp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PermissionOptionKind,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    RequestPermissionRequest,
    StopReason,
    TextContent,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)
from rxacp.transport import AcpTransport


def _async_agent(transport: AcpTransport, session_id: str, prompt: Any) -> AcpAsyncAgent:
    # AcpAsyncAgent agent = AcpAgent.async(pair.agentTransport())
    #     .initializeHandler(request -> Mono
    #         .just(new AcpSchema.InitializeResponse(1, new AcpSchema.AgentCapabilities(),
    #             List.of())))
    #     .newSessionHandler(request -> Mono.just(
    #         new AcpSchema.NewSessionResponse("...", null, null)))
    #     .promptHandler(...)
    #     .build();
    return (
        AcpAgent.async_(transport)
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


def end_turn(transport: AcpTransport) -> AcpAsyncAgent:
    """``defaultMockClientInitializesAndCreatesSession``"""
    return _async_agent(
        transport,
        "test-session",
        # (request, updater) -> Mono.just(
        #     new AcpSchema.PromptResponse(AcpSchema.StopReason.END_TURN))
        lambda request, updater: reactivex.just(PromptResponse(stop_reason=StopReason.END_TURN)),
    )


def one_update(transport: AcpTransport) -> AcpAsyncAgent:
    """``mockClientReceivesSessionUpdates``"""

    # .promptHandler((request, updater) -> updater.sendUpdate("update-session",
    #         new AcpSchema.AgentMessageChunk("agent_message_chunk",
    #             new AcpSchema.TextContent("Processing...")))
    #     .then(Mono.just(new AcpSchema.PromptResponse(AcpSchema.StopReason.END_TURN))))
    # -- send_update is fire-and-forget (returns None, takes the update or a whole notification)
    def prompt(request: PromptRequest, updater: Any) -> Any:
        updater.send_update(AgentMessageChunk(content=TextContent(text="Processing...")))
        return reactivex.just(PromptResponse(stop_reason=StopReason.END_TURN))

    return _async_agent(transport, "update-session", prompt)


def permission(transport: AcpTransport) -> AcpAsyncAgent:
    """``mockClientHandlesPermissionRequests``"""
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

    agent = _async_agent(transport, "perm-session", prompt)
    agent_ref.append(agent)  # agentRef.set(agent);
    return agent


def file_read(transport: AcpTransport) -> AcpAsyncAgent:
    """``mockClientHandlesFileReadRequests``"""
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

    agent = _async_agent(transport, "file-session", prompt)
    agent_ref.append(agent)
    return agent


AGENTS: dict[str, Callable[[AcpTransport], AcpAsyncAgent]] = {
    "end_turn": end_turn,
    "one_update": one_update,
    "permission": permission,
    "file_read": file_read,
}


if __name__ == "__main__":
    served = AGENTS[sys.argv[1]](StdioAcpAgentTransport())
    served.start().subscribe()  # agent.start().subscribe();
    served.run()  # until the client closes stdin
