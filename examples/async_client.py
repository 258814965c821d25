"""Example: a ReactiveX/asyncio ACP client (``AcpClient.async_``) talking to an agent over stdio.

Spawns ``examples/echo_agent_raw.py`` (or the agent command given on the command line). Shows
composing calls as Observables (``flat_map``), awaiting them from asyncio, a permission handler
that returns an Observable, and stopping a prompt with a ``CancellationSignal``.

Run: ``python examples/async_client.py [agent-command args...]``
"""

from __future__ import annotations

import asyncio
import os
import sys

import reactivex
from reactivex import operators as ops

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


def approve(request: RequestPermissionRequest) -> reactivex.Observable[RequestPermissionResponse]:
    """Async handlers return Observables (a real UI would complete it when the user clicks)."""
    print(f"\n[permission asked: {request.tool_call.title}] -> allow")
    return reactivex.just(RequestPermissionResponse.selected("yes"))


async def main(argv: list[str]) -> None:
    """Run the demo against the agent command in ``argv`` (default: the raw echo agent)."""
    command = argv or [sys.executable, os.path.join(HERE, "echo_agent_raw.py")]
    transport = StdioAcpClientTransport(AgentParameters(command[0], command[1:]))
    client = (
        AcpClient.async_(transport)
        .session_update_consumer(print_update)
        .request_permission_handler(approve)
        .build()
    )
    async with client:
        # Compose: initialize, then a session, then a first prompt, as one cold pipeline.
        first_turn = client.initialize().pipe(
            ops.flat_map(lambda _: client.new_session(NewSessionRequest.of(os.getcwd()))),
            ops.flat_map(
                lambda s: client.prompt(PromptRequest.text(s.session_id, "hello reactive world"))
            ),
        )
        answer = await first_turn
        print(f"\n-> {answer.stop_reason}")

        session = await client.new_session(NewSessionRequest.of(os.getcwd()))
        answer = await client.prompt(PromptRequest.text(session.session_id, "!permission please"))
        print(f"\n-> {answer.stop_reason}")

        stop = CancellationSignal()
        asyncio.get_running_loop().call_later(0.12, stop.cancel)  # a Stop button
        long_text = " ".join(f"word{i}" for i in range(100))
        answer = await client.prompt(PromptRequest.text(session.session_id, long_text), stop)
        print(f"\n-> {answer.stop_reason} (stopped with a CancellationSignal)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
