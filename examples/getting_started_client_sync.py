"""Getting started, client side, blocking API: spawn an agent over stdio, stream a prompt turn,
serve the agent's file and permission requests, and stop a turn with a ``CancellationSignal``.

Run from the repository root: ``python examples/getting_started_client_sync.py``. It spawns the
reference agent (``python -m rxacp.testing.reference_agent``), which picks a behaviour from the
prompt text (``echo``, ``read``, ``permission``, ``slow`` ...).
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from rxacp import AcpClient, AgentParameters, CancellationSignal, StdioAcpClientTransport
from rxacp.schema import (
    NewSessionRequest,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
)

# --8<-- [start:handlers]
agent = AgentParameters.builder(sys.executable).args("-m", "rxacp.testing.reference_agent").build()


def show(note: SessionNotification) -> None:
    """Every session/update, in order. Runs on the connection's loop: never block here."""
    if note.update.session_update == "agent_message_chunk":
        print(note.update.content.text, end="", flush=True)


def read_text_file(req: ReadTextFileRequest) -> ReadTextFileResponse:
    """fs/read_text_file from the agent (sync handlers run on a worker pool: may block)."""
    return ReadTextFileResponse(content=Path(req.path).read_text(encoding="utf-8"))


def ask_user(req: RequestPermissionRequest) -> RequestPermissionResponse:
    """session/request_permission: rxacp never approves anything on its own."""
    print(f"[agent asks: {req.tool_call.title}] -> allow")
    return RequestPermissionResponse.selected("allow")


# --8<-- [end:handlers]


def main() -> None:
    """Run four prompt turns against the reference agent."""
    notes = Path(tempfile.mkdtemp()) / "notes.txt"
    notes.write_text("a file the client served", encoding="utf-8")
    # --8<-- [start:session]
    client = (
        AcpClient.sync(StdioAcpClientTransport(agent))
        .request_timeout(30)  # seconds or a timedelta; session/prompt is exempt
        .session_update_consumer(show)
        .read_text_file_handler(read_text_file)  # advertises fs.readTextFile
        .request_permission_handler(ask_user)
        .build()
    )
    with client:  # leaving the block closes gracefully (the agent process exits)
        init = client.initialize()  # protocol 1 + the capabilities the handlers imply
        print(f"agent: {init.agent_info.name if init.agent_info else '?'}")
        session = client.new_session(NewSessionRequest(cwd="/", mcp_servers=[]))
        sid = session.session_id

        answer = client.prompt(PromptRequest.text(sid, "echo hello"))
        print(f" [{answer.stop_reason}]")
        answer = client.prompt(PromptRequest.text(sid, f"read {notes}"))
        print(f" [{answer.stop_reason}]")
        answer = client.prompt(PromptRequest.text(sid, "permission deploy"))
        print(f" [{answer.stop_reason}]")

        stop = CancellationSignal()  # a Stop button: cancel() from any thread
        threading.Timer(0.3, stop.cancel).start()
        answer = client.prompt(PromptRequest.text(sid, "slow 10"), stop)
        print(f" [{answer.stop_reason}]")  # the agent's own answer: cancelled
    # --8<-- [end:session]


if __name__ == "__main__":
    main()
