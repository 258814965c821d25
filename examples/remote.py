"""A remote agent and its client: ``AcpAsgiApp`` served by uvicorn on loopback, then an rxacp
client over Streamable HTTP and one over the WebSocket upgrade of the same ``/acp`` path.

Needs the extra: ``pip install "rxacp[http]"``. Run: ``python examples/remote.py``; it prints
each turn's updates and stop reason. To serve an app like this for real, run it under an ASGI
server (``uvicorn examples.remote:app``) or see ``python -m rxacp.testing.reference_agent
--listen http://127.0.0.1:8000``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse
from rxacp.transport.http import AcpAsgiApp, HttpAcpClientTransport
from rxacp.transport.http._serve import UvicornThread
from rxacp.transport.websocket import WebSocketAcpClientTransport

__all__ = ["agent_factory", "app", "main"]


def agent_factory(transport: Any) -> Any:
    """One agent per connection (HTTP or WebSocket); the app starts and closes it."""

    def prompt(request: PromptRequest, ctx: Any) -> PromptResponse:
        for word in ("hello", "from", "a", "remote", "agent"):
            ctx.send_message(word + " ")
        return PromptResponse.end_turn()

    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda request: NewSessionResponse(session_id="s-1"))
        .prompt_handler(prompt)
        .build()
    )


app = AcpAsgiApp(agent_factory, token="s3cret")


def talk(transport: Any, label: str) -> None:
    """One session, one prompt; prints what streamed and how the turn ended."""
    words: list[str] = []

    def consume(note: Any) -> None:
        words.append(getattr(getattr(note.update, "content", None), "text", ""))

    with AcpClient.sync(transport).session_update_consumer(consume).build() as client:
        client.initialize()
        sid = client.new_session(NewSessionRequest.of(os.getcwd())).session_id
        answer = client.prompt(PromptRequest.text(sid, "hi"))
    print(f"{label}: {''.join(words).strip()!r} -> {answer.stop_reason}")


def main() -> int:
    """Serve ``app`` on a free loopback port, talk to it over both profiles, stop."""
    with UvicornThread(app) as server:
        print(f"serving {server.url}")
        talk(HttpAcpClientTransport(server.url, token="s3cret"), "streamable http")
        ws_url = "ws" + server.url.removeprefix("http")
        talk(WebSocketAcpClientTransport(ws_url, token="s3cret"), "websocket")
    return 0


if __name__ == "__main__":
    sys.exit(main())
