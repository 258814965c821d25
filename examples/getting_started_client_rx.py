"""Getting started, client side, the Rx way: a prompt turn is one stream (``prompt_turn``), the
connection's updates are a hot stream (``updates``), giving up is disposal, and stopping is a
``CancellationSignal``.

Run from the repository root: ``python examples/getting_started_client_rx.py``. It spawns the
reference agent (``python -m rxacp.testing.reference_agent``).
"""

from __future__ import annotations

import asyncio
import sys

import reactivex
from reactivex import operators as ops

from rxacp import AcpClient, AgentParameters, CancellationSignal, StdioAcpClientTransport
from rxacp.schema import (
    AgentMessageChunk,
    NewSessionRequest,
    PromptRequest,
    PromptResponse,
    TextContent,
)

agent = AgentParameters.builder(sys.executable).args("-m", "rxacp.testing.reference_agent").build()


def words(items: list[object]) -> str:
    """The text of a turn's agent_message_chunk updates."""
    chunks = [i.content for i in items if isinstance(i, AgentMessageChunk)]
    return "".join(c.text for c in chunks if isinstance(c, TextContent)).strip()


async def main() -> None:
    """One turn as a stream, the hot update stream, and giving up on a turn."""
    # --8<-- [start:turn]
    client = AcpClient.async_(StdioAcpClientTransport(agent)).build()  # no callbacks needed
    async with client:  # closes gracefully on exit
        await client.initialize()
        session = await client.new_session(NewSessionRequest(cwd="/", mcp_servers=[]))
        sid = session.session_id

        # A turn is one cold stream: each SessionUpdate of the turn, then its PromptResponse.
        *updates, answer = await client.prompt_turn(PromptRequest.text(sid, "stream 3")).pipe(
            ops.to_list()
        )
        print(f"{words(updates)} [{answer.stop_reason}]")
        # --8<-- [end:turn]

        # --8<-- [start:updates]
        # Every update this client receives, hot: subscribe before the turns you want to see.
        kinds: list[str] = []
        watching = client.updates(sid).subscribe(lambda n: kinds.append(n.update.session_update))
        await client.prompt(PromptRequest.text(sid, "echo hi"))
        watching.dispose()
        print(f"updates seen: {kinds}")
        # --8<-- [end:updates]

        # --8<-- [start:dispose]
        # Giving up is disposal: take_until disposes the turn, and rxacp sends session/cancel
        # (what every agent implements) and $/cancel_request, once each.
        last = await client.prompt_turn(PromptRequest.text(sid, "slow 10")).pipe(
            ops.take_until(reactivex.timer(0.3)),
            ops.last_or_default(None),
        )
        print("gave up" if not isinstance(last, PromptResponse) else "finished")
        # The session stays usable: the next prompt is sent once the agent ended the old turn.
        *updates, answer = await client.prompt_turn(
            PromptRequest.text(sid, "echo still here")
        ).pipe(ops.to_list())
        print(f"{words(updates)} [{answer.stop_reason}]")
        # --8<-- [end:dispose]

        # --8<-- [start:stop]
        # Stopping instead of giving up: a CancellationSignal sends session/cancel and keeps
        # the turn, so its last updates and the agent's answer (`cancelled`) still arrive.
        stop = CancellationSignal()
        asyncio.get_running_loop().call_later(0.3, stop.cancel)  # the user presses Stop
        *updates, answer = await client.prompt_turn(PromptRequest.text(sid, "slow 10"), stop).pipe(
            ops.to_list()
        )
        print(f"stopped [{answer.stop_reason}]")
        # --8<-- [end:stop]


if __name__ == "__main__":
    asyncio.run(main())
