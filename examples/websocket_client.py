"""An rxacp client talking to an ACP agent over WebSocket.

Connects to the URL given on the command line; without one it first starts the reference agent
in-process on a free port (a ``WebSocketAcpAgentServer``), so the example runs on its own.
Streams a prompt, then stops a slow one with a ``CancellationSignal`` (the agent answers
``cancelled`` after the updates it already sent).

Needs the extra: ``pip install "rxacp[websocket]"``.

Run: ``python examples/websocket_client.py [ws://127.0.0.1:8765/acp]``
"""

from __future__ import annotations

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rxacp.client import AcpClient, CancellationSignal
from rxacp.errors import AcpConnectionException
from rxacp.schema import NewSessionRequest, PromptRequest, SessionNotification
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport.websocket import WebSocketAcpAgentServer, WebSocketAcpClientTransport

__all__ = ["main"]


def print_update(note: SessionNotification) -> None:
    """Update consumers run on the connection's loop: print and return, never block."""
    update = note.update
    if getattr(update, "session_update", None) == "agent_message_chunk":
        print(update.content.text, end="", flush=True)  # type: ignore[union-attr]


def converse(url: str) -> None:
    """Initialize, open a session, stream one prompt and stop another one."""
    transport = WebSocketAcpClientTransport(url, connect_timeout=5)
    with AcpClient.sync(transport).session_update_consumer(print_update).build() as client:
        init = client.initialize()
        name = init.agent_info.name if init.agent_info else "?"
        print(f"connected to {name} at {url}")
        session_id = client.new_session(NewSessionRequest.of(os.getcwd())).session_id

        answer = client.prompt(PromptRequest.text(session_id, "stream 8"))
        print(f"\n-> {answer.stop_reason}")

        stop = CancellationSignal()
        threading.Timer(0.35, stop.cancel).start()  # e.g. a Stop button, from another thread
        answer = client.prompt(PromptRequest.text(session_id, "slow 5"), stop)
        print(f"\n-> {answer.stop_reason} (stopped with a CancellationSignal)")


def main(argv: list[str]) -> int:
    """Talk to ``argv[0]``, or to an in-process reference agent; returns the exit code."""
    if argv:
        try:
            converse(argv[0])
        except AcpConnectionException as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    factory = lambda transport: build_agent("sync", transport, ReferenceOptions())  # noqa: E731
    with WebSocketAcpAgentServer(factory, port=0) as server:
        converse(server.url)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
