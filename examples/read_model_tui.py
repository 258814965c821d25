"""A minimal terminal UI over the read model: ``client.session_state(sid).subscribe(render)``.

Spawns the reference agent over stdio, runs its ``tool``, ``plan`` and ``stream`` turns in one
session and renders every :class:`~rxacp.client.SessionState` snapshot: redrawn in place on a
terminal, the last screen printed once otherwise (as under the test that runs this file).

    python examples/read_model_tui.py
"""

from __future__ import annotations

import asyncio
import os
import sys

from rxacp.client import AcpClient, SessionState
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.transport import AgentParameters, StdioAcpClientTransport

MARKS = {"completed": "x", "in_progress": ">", "pending": " "}


def render(state: SessionState) -> str:
    """One screen: header, plan, tool calls, thoughts, then the conversation."""
    lines = [f"session {state.session_id}  mode={state.mode}  updates={state.update_count}"]
    for entry in state.plan:
        lines.append(f"  [{MARKS.get(str(entry.status), '?')}] {entry.content}")
    for call in state.tool_calls.values():
        lines.append(f"  tool {call.title!r} ({call.kind}): {call.status}")
    for thought in state.thoughts:
        lines.append(f"  (thinking) {thought.text}")
    for message in state.messages:
        lines.append(f"{message.role}> {message.text}")
    return "\n".join(lines)


class Screen:
    """Draws each snapshot (on the connection's loop: rendering is cheap, it never blocks)."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
        self.last = ""

    def show(self, state: SessionState) -> None:
        self.last = render(state)
        if self.live:
            sys.stdout.write("\x1b[H\x1b[J" + self.last + "\n")  # home, clear, draw
            sys.stdout.flush()

    def close(self) -> None:
        if not self.live:
            print(self.last)


async def main() -> None:
    agent = AgentParameters(sys.executable, ["-m", "rxacp.testing.reference_agent"])
    builder = AcpClient.async_(StdioAcpClientTransport(agent)).track_session_states()
    async with builder.build() as client:
        await client.initialize()
        session = await client.new_session(NewSessionRequest.of(os.getcwd()))
        screen = Screen()
        client.session_state(session.session_id).subscribe(screen.show)
        for text in ("tool", "plan", "stream 30"):
            await client.prompt(PromptRequest.text(session.session_id, text))
        screen.close()


if __name__ == "__main__":
    asyncio.run(main())
