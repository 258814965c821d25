"""Getting started, client side, Rx API: every call is a cold Observable you can compose,
await from asyncio, or dispose (which sends ``$/cancel_request``).

Run from the repository root: ``python examples/getting_started_client_async.py``. It spawns the
reference agent (``python -m rxacp.testing.reference_agent``).
"""

from __future__ import annotations

import asyncio
import sys

import reactivex
from reactivex import operators as ops

from rxacp import AcpClient, AgentParameters, CancellationSignal, StdioAcpClientTransport
from rxacp.schema import NewSessionRequest, PromptRequest, SessionNotification

agent = AgentParameters.builder(sys.executable).args("-m", "rxacp.testing.reference_agent").build()


def show(note: SessionNotification) -> None:
    """Consumers run on the connection's loop thread: print and return."""
    if note.update.session_update == "agent_message_chunk":
        print(note.update.content.text, end="", flush=True)


async def main() -> None:
    """Compose, await, stop and dispose prompt turns."""
    # --8<-- [start:compose]
    client = AcpClient.async_(StdioAcpClientTransport(agent)).session_update_consumer(show).build()
    async with client:  # closes gracefully on exit
        # Nothing is sent until subscription: this pipeline is just a description ...
        first_turn = client.initialize().pipe(
            ops.flat_map(lambda _: client.new_session(NewSessionRequest(cwd="/", mcp_servers=[]))),
            ops.flat_map(lambda s: client.prompt(PromptRequest.text(s.session_id, "stream 3"))),
        )
        answer = await first_turn  # ... and awaiting subscribes to it
        print(f" [{answer.stop_reason}]")
        # --8<-- [end:compose]

        # --8<-- [start:stop]
        session = await client.new_session(NewSessionRequest(cwd="/", mcp_servers=[]))
        stop = CancellationSignal()
        asyncio.get_running_loop().call_later(0.3, stop.cancel)  # the user presses Stop
        answer = await client.prompt(PromptRequest.text(session.session_id, "slow 10"), stop)
        print(f" [{answer.stop_reason}]")  # session/cancel was sent; the agent answered
        # --8<-- [end:stop]

        # --8<-- [start:dispose]
        # Giving up is disposal: take_until disposes the prompt, rxacp sends session/cancel and
        # $/cancel_request.
        gave_up = await client.prompt(PromptRequest.text(session.session_id, "slow 10")).pipe(
            ops.take_until(reactivex.timer(0.3)),
            ops.map(lambda response: response.stop_reason),
            ops.default_if_empty("gave up: $/cancel_request sent"),
        )
        print(f" [{gave_up}]")
        # --8<-- [end:dispose]


if __name__ == "__main__":
    asyncio.run(main())
