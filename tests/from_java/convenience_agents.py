"""The agent halves of six ``ConvenienceApiTest`` tests (Java SDK 0.16.0-SNAPSHOT, ``acp-core``),
ported line by line: sync agents whose prompt handler reads and writes files and asks for
permission through ``SyncPromptContext``.

Each agent records what its handler saw in an :class:`AtomicReference` (Java's). In-process
tests read it directly; ``python -m tests.from_java.convenience_agents NAME`` serves the agent
over stdio and prints every ``set`` to stderr (``captured <json>``), which the test reads from
the agent's stderr lines.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from rxacp import AcpAgent, AcpSyncAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.errors import AcpException
from rxacp.schema import InitializeResponse, NewSessionResponse, PromptRequest, PromptResponse
from rxacp.transport import AcpTransport

TIMEOUT = timedelta(
    seconds=10
)  # Java: private static final Duration TIMEOUT = Duration.ofSeconds(10);


class AtomicReference:
    """Java's ``AtomicReference<T>``: ``set``/``get``, and a bounded wait for the first ``set``
    (the value may come from another thread, or another process)."""

    def __init__(self) -> None:
        self._value: Any = None
        self._set = threading.Event()

    def set(self, value: Any) -> None:
        self._value = value
        self._set.set()

    def get(self, timeout: float = 10.0) -> Any:
        assert self._set.wait(timeout), "nothing was set within the time limit"
        return self._value


class PrintedReference(AtomicReference):
    """An :class:`AtomicReference` in an agent process: ``set`` also prints the value to stderr."""

    def set(self, value: Any) -> None:
        super().set(value)
        print("captured " + json.dumps(value), file=sys.stderr, flush=True)


def _agent(transport: AcpTransport, session_id: str, prompt: Callable[..., Any]) -> AcpSyncAgent:
    # AcpSyncAgent agent = AcpAgent.sync(transportPair.agentTransport())
    #     .requestTimeout(TIMEOUT)
    #     .initializeHandler(req -> InitializeResponse.ok())
    #     .newSessionHandler(req -> new NewSessionResponse("file-session", null, null))
    #     .promptHandler((request, context) -> { ... })
    #     .build();
    return (
        AcpAgent.sync(transport)
        .request_timeout(TIMEOUT)
        .initialize_handler(lambda req: InitializeResponse.ok())
        .new_session_handler(lambda req: NewSessionResponse(session_id=session_id))
        .prompt_handler(prompt)
        .build()
    )


def read_file(transport: AcpTransport, read_content: AtomicReference) -> AcpSyncAgent:
    """``readFileReturnsFileContent``"""

    def prompt(request: PromptRequest, context: SyncPromptContext) -> PromptResponse:
        content = context.read_file("/path/to/file.txt")  # String content = context.readFile(...)
        read_content.set(content)  # readContent.set(content);
        return PromptResponse.end_turn()  # return PromptResponse.endTurn();

    return _agent(transport, "file-session", prompt)


def write_file(transport: AcpTransport, written: AtomicReference) -> AcpSyncAgent:
    """``writeFileWritesContent``"""

    def prompt(request: PromptRequest, context: SyncPromptContext) -> PromptResponse:
        context.write_file("/output/result.txt", "Generated content")  # context.writeFile(...)
        written.set("written")
        return PromptResponse.end_turn()

    return _agent(transport, "write-session", prompt)


def try_read_file(transport: AcpTransport, result_present: AtomicReference) -> AcpSyncAgent:
    """``tryReadFileReturnsEmptyOnError``"""

    def prompt(request: PromptRequest, context: SyncPromptContext) -> PromptResponse:
        # var result = context.tryReadFile("/nonexistent.txt");  -- no tryReadFile: try/except
        try:
            result: str | None = context.read_file("/nonexistent.txt")
        except AcpException:
            result = None
        result_present.set(result is not None)  # resultPresent.set(result.isPresent());
        return PromptResponse.end_turn()

    return _agent(transport, "try-read-session", prompt)


def _ask_permission(action: str, session_id: str) -> Callable[..., AcpSyncAgent]:
    def build(transport: AcpTransport, permission_result: AtomicReference) -> AcpSyncAgent:
        def prompt(request: PromptRequest, context: SyncPromptContext) -> PromptResponse:
            allowed = context.ask_permission(action)  # boolean allowed = context.askPermission(..)
            permission_result.set(allowed)
            return PromptResponse.end_turn()

        return _agent(transport, session_id, prompt)

    return build


ask_permission_allowed = _ask_permission("Delete file?", "perm-session")
"""``askPermissionReturnsTrueWhenAllowed``"""
ask_permission_denied = _ask_permission("Dangerous action?", "deny-session")
"""``askPermissionReturnsFalseWhenDenied``"""


def ask_choice(transport: AcpTransport, choice_result: AtomicReference) -> AcpSyncAgent:
    """``askChoiceReturnsSelectedOption``"""

    def prompt(request: PromptRequest, context: SyncPromptContext) -> PromptResponse:
        # String choice = context.askChoice("How to proceed?", "Overwrite", "Skip", "Cancel");
        choice = context.ask_choice("How to proceed?", "Overwrite", "Skip", "Cancel")
        choice_result.set(choice)
        return PromptResponse.end_turn()

    return _agent(transport, "choice-session", prompt)


AGENTS: dict[str, Callable[[AcpTransport, AtomicReference], AcpSyncAgent]] = {
    "read_file": read_file,
    "write_file": write_file,
    "try_read_file": try_read_file,
    "ask_permission_allowed": ask_permission_allowed,
    "ask_permission_denied": ask_permission_denied,
    "ask_choice": ask_choice,
}


if __name__ == "__main__":
    AGENTS[sys.argv[1]](StdioAcpAgentTransport(), PrintedReference()).run()
