"""Benchmark agent written with the OFFICIAL Python ACP SDK (``agent-client-protocol``).

Runs only inside ``.venv-interop-py/`` and never imports rxacp. Prompts: ``echo x`` (one
chunk), ``stream n`` (n chunks), ``wait`` (sends "waiting", then waits for ``session/cancel``
and answers ``cancelled``). The SDK has no ``$/cancel_request`` support.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    update_agent_message_text,
)

__all__ = ["BenchAgent"]


class BenchAgent:
    """The scripted agent (the ``acp.Agent`` protocol methods it needs)."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._cancelled: dict[str, asyncio.Event] = {}
        self._sessions = 0

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        self._sessions += 1
        return NewSessionResponse(session_id=f"py-sess-{self._sessions}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self._cancelled.get(session_id)
        if event is not None:
            event.set()

    async def _say(self, session_id: str, text: str) -> None:
        await self._conn.session_update(
            session_id=session_id, update=update_agent_message_text(text)
        )

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        command, _, arg = text.partition(" ")
        if command == "echo":
            await self._say(session_id, arg)
        elif command == "stream":
            for i in range(int(arg)):
                await self._say(session_id, str(i))
        elif command == "wait":
            event = self._cancelled[session_id] = asyncio.Event()
            await self._say(session_id, "waiting")
            await event.wait()
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(BenchAgent()))  # type: ignore[arg-type]
