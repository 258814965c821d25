"""Interop peer: the OFFICIAL Python SDK 1.0.0rc3's remote transport (``acp.http``).

Runs ONLY inside ``.venv-interop-py1/`` as ``python -I`` (see ``scripts/setup_interop_py1.sh``);
it must not import rxacp. Two modes:

* ``client URL``: the SDK's Streamable HTTP client (``acp.http.create_http_stream`` +
  ``acp.connect_to_agent``) drives the rxacp reference agent served at URL and prints one JSON
  line of facts per scenario: ``stream`` (``stream 200``: updates counted when the answer
  came), ``cancel`` (``slow 5`` then ``session/cancel``), ``permission`` (the reference agent
  asks; this client picks the allow option; the agent echoes the option id).
* ``serve PORT``: the SDK's ASGI app (``acp.http.asgi.create_asgi_app``) with :class:`Agent`
  (one per connection; prompts ``stream N``: N chunks ``0``..; ``slow S``: a chunk every 0.1 s
  until ``session/cancel``; ``permission``: asks, then says ``permission:<optionId>``) under
  uvicorn on 127.0.0.1:PORT until killed; prints ``ready``.

It is NOT responsible for verdicts: ``tests/interop/test_remote_transport.py`` asserts on them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from typing import Any

from acp import PROTOCOL_VERSION, connect_to_agent
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)


def text_block(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


STREAM_N = 200
STEP_S = 20.0


class Recorder:
    """The client side: records updates per session, allows every permission request."""

    def __init__(self) -> None:
        self.updates: dict[str, list[Any]] = {}
        self.event = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)
        self.event.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        option = next(o for o in options if str(o.kind).startswith("allow"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    def texts(self, sid: str) -> list[str]:
        out = []
        for update in self.updates.get(sid, []):
            content = getattr(update, "content", None)
            if update.session_update == "agent_message_chunk" and content is not None:
                out.append(getattr(content, "text", ""))
        return out


async def client(url: str) -> None:
    from acp.http import create_http_stream

    recorder = Recorder()
    conn = connect_to_agent(recorder, create_http_stream(url))
    init = await asyncio.wait_for(
        conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        ),
        STEP_S,
    )
    print(json.dumps({"scenario": "initialize", "agent": init.agent_info.name}), flush=True)

    async def session() -> str:
        new = await asyncio.wait_for(conn.new_session(cwd="/tmp", mcp_servers=[]), STEP_S)
        return str(new.session_id)

    sid = await session()
    answer = await asyncio.wait_for(
        conn.prompt(session_id=sid, prompt=[text_block(f"stream {STREAM_N}")]), STEP_S
    )
    texts = recorder.texts(sid)  # what had arrived when the answer did
    print(
        json.dumps(
            {"scenario": "stream", "stopReason": answer.stop_reason, "atAnswer": len(texts)}
        ),
        flush=True,
    )

    sid = await session()
    turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("slow 5")]))
    deadline = time.monotonic() + STEP_S
    while len(recorder.texts(sid)) < 2 and time.monotonic() < deadline:
        recorder.event.clear()
        await asyncio.wait_for(recorder.event.wait(), STEP_S)
    started = time.monotonic()
    await conn.cancel(session_id=sid)
    answer = await asyncio.wait_for(turn, STEP_S)
    print(
        json.dumps(
            {
                "scenario": "cancel",
                "stopReason": answer.stop_reason,
                "cancelToAnswerMs": round((time.monotonic() - started) * 1000),
                "updatesBefore": len(recorder.texts(sid)),
            }
        ),
        flush=True,
    )

    sid = await session()
    answer = await asyncio.wait_for(
        conn.prompt(session_id=sid, prompt=[text_block("permission")]), STEP_S
    )
    print(
        json.dumps(
            {
                "scenario": "permission",
                "stopReason": answer.stop_reason,
                "texts": recorder.texts(sid),
            }
        ),
        flush=True,
    )
    await conn.close()


class Agent:
    """The scripted agent of ``serve`` (the ``acp.Agent`` methods it needs)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._cancelled: dict[str, asyncio.Event] = {}
        self._sessions = 0

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="python-sdk-1-remote-agent", version="1.0.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"py1-sess-{self._sessions}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.setdefault(session_id, asyncio.Event()).set()

    async def _say(self, session_id: str, text: str) -> None:
        update = AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))
        await self._conn.session_update(session_id=session_id, update=update)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        command, _, arg = "".join(getattr(b, "text", "") for b in prompt).partition(" ")
        if command == "stream":
            for i in range(int(arg)):
                await self._say(session_id, str(i))
        elif command == "slow":
            cancelled = self._cancelled.setdefault(session_id, asyncio.Event())
            cancelled.clear()
            for tick in range(round(float(arg) / 0.1)):
                await self._say(session_id, f"tick {tick}")
                try:
                    await asyncio.wait_for(cancelled.wait(), 0.1)
                except TimeoutError:
                    continue
                return PromptResponse(stop_reason="cancelled")
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
            label = getattr(outcome, "option_id", None) or outcome.outcome
            await self._say(session_id, f"permission:{label}")
        return PromptResponse(stop_reason="end_turn")


def serve(port: int) -> None:
    import uvicorn
    from acp.http.asgi import create_asgi_app

    app = create_asgi_app(Agent)
    sock = socket.create_server(("127.0.0.1", port))  # listening (and queueing) from now on
    print("ready", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    if sys.argv[1] == "client":
        asyncio.run(client(sys.argv[2]))
    else:
        serve(int(sys.argv[2]))
