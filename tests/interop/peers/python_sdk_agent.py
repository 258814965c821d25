"""Interop peer: an ACP agent written with the OFFICIAL Python SDK (``agent-client-protocol``).

Runs ONLY inside ``.venv-interop-py/`` (see ``scripts/setup_interop.sh``); it must not import
rxacp. It uses the SDK's public API only (``acp.run_agent``, ``acp.Agent`` methods, schema
models and helpers). Prompts are scripted by their text:

  ``echo <text>``    one agent message chunk <text>, then end_turn
  ``stream <n>``     n chunks "0".."n-1", then end_turn
  ``permission``     session/request_permission; reports "permission:<outcome>[:<optionId>]"
  ``read <path>``    fs/read_text_file; reports "read:<content>"
  ``wait``           waits for session/cancel, sends "after-cancel", answers cancelled
  ``slow <seconds>`` a chunk "tick <i>" every 0.1 s until session/cancel (→ cancelled) or the
                     time is up (→ end_turn); the SDK has no ``$/cancel_request``, so that does
                     not stop it
  ``fail``           error FAIL_CODE with data {"behaviour": "fail"}

Extension request ``_interop/stats`` returns what the agent observed (session/cancel count and
the outcome of every ``slow`` turn); any other extension request is "method not found".
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    update_agent_message_text,
)
from acp.schema import (
    AgentCapabilities,
    Implementation,
    PermissionOption,
    PromptCapabilities,
    ToolCallUpdate,
)

FAIL_CODE = -32042
TICK_S = 0.1


class InteropAgent:
    """The scripted agent (implements the ``acp.Agent`` protocol methods it needs)."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._cancelled: dict[str, asyncio.Event] = {}
        self._sessions = 0
        self._stats: dict[str, Any] = {"sessionCancels": 0, "slowOutcomes": []}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(image=False, audio=False),
            ),
            agent_info=Implementation(name="python-sdk-interop-agent", version="1.0.0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"py-sess-{self._sessions}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._stats["sessionCancels"] += 1
        self._event(session_id).set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "interop/stats":
            return dict(self._stats)
        raise RequestError.method_not_found(f"_{method}")

    async def _slow(self, session_id: str, seconds: float) -> PromptResponse:
        cancelled = self._event(session_id)
        cancelled.clear()
        for tick in range(round(seconds / TICK_S)):
            await self._say(session_id, f"tick {tick}")
            try:
                await asyncio.wait_for(cancelled.wait(), TICK_S)
            except TimeoutError:
                continue
            self._stats["slowOutcomes"].append("cancelled")
            return PromptResponse(stop_reason="cancelled")
        self._stats["slowOutcomes"].append("end_turn")
        return PromptResponse(stop_reason="end_turn")

    def _event(self, session_id: str) -> asyncio.Event:
        return self._cancelled.setdefault(session_id, asyncio.Event())

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
        elif command == "permission":
            response = await self._conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="call-1", title="Run the tool"),
                options=[
                    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
            outcome = response.outcome
            label = outcome.outcome
            if label == "selected":
                label += f":{outcome.option_id}"
            await self._say(session_id, f"permission:{label}")
        elif command == "read":
            result = await self._conn.read_text_file(session_id=session_id, path=arg)
            await self._say(session_id, f"read:{result.content}")
        elif command == "slow":
            return await self._slow(session_id, float(arg))
        elif command == "fail":
            message = "the interop agent was asked to fail"
            raise RequestError(FAIL_CODE, message, {"behaviour": "fail"})
        elif command == "wait":
            await self._event(session_id).wait()
            await self._say(session_id, "after-cancel")
            return PromptResponse(stop_reason="cancelled")
        else:
            await self._say(session_id, f"unknown command {command!r}")
            return PromptResponse(stop_reason="refusal")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(InteropAgent()))
