"""Example: a blocking ACP client (``AcpClient.sync``) talking to an agent over stdio.

Spawns ``examples/echo_agent_raw.py`` (or the agent command given on the command line), then:
initialize, new session, a prompt whose updates are printed as they stream, a prompt that asks
for permission, and a prompt stopped half-way with a ``CancellationSignal`` from a timer thread.

Run: ``python examples/sync_client.py [agent-command args...]``
"""

from __future__ import annotations

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rxacp.client import AcpClient, CancellationSignal
from rxacp.schema import (
    NewSessionRequest,
    PromptRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
)
from rxacp.transport import AgentParameters, StdioAcpClientTransport

__all__ = ["main"]

HERE = os.path.dirname(os.path.abspath(__file__))


def print_update(note: SessionNotification) -> None:
    """Consumers run on the connection's loop: print and return, never block."""
    update = note.update
    if getattr(update, "session_update", None) == "agent_message_chunk":
        print(update.content.text, end="", flush=True)  # type: ignore[union-attr]


def approve(request: RequestPermissionRequest) -> RequestPermissionResponse:
    """Permission handlers of the sync client run on a worker thread and may block (a dialog)."""
    print(f"\n[permission asked: {request.tool_call.title}] -> allow")
    return RequestPermissionResponse.selected("yes")


def main(argv: list[str]) -> None:
    """Run the demo against the agent command in ``argv`` (default: the raw echo agent)."""
    command = argv or [sys.executable, os.path.join(HERE, "echo_agent_raw.py")]
    transport = StdioAcpClientTransport(AgentParameters(command[0], command[1:]))
    client = (
        AcpClient.sync(transport)
        .request_timeout(30)
        .client_info({"name": "rxacp-sync-example", "version": "1.0.0"})
        .session_update_consumer(print_update)
        .request_permission_handler(approve)
        .build()
    )
    with client:
        init = client.initialize()
        name = init.agent_info.name if init.agent_info else "?"
        print(f"agent: {name}, protocol {init.protocol_version}")
        session_id = client.new_session(NewSessionRequest.of(os.getcwd())).session_id

        answer = client.prompt(PromptRequest.text(session_id, "hello from the sync client"))
        print(f"\n-> {answer.stop_reason}")

        answer = client.prompt(PromptRequest.text(session_id, "!this one needs permission"))
        print(f"\n-> {answer.stop_reason}")

        stop = CancellationSignal()
        threading.Timer(0.12, stop.cancel).start()  # e.g. a Stop button, from another thread
        long_text = " ".join(f"word{i}" for i in range(100))
        answer = client.prompt(PromptRequest.text(session_id, long_text), stop)
        print(f"\n-> {answer.stop_reason} (stopped with a CancellationSignal)")


if __name__ == "__main__":
    main(sys.argv[1:])
