"""Interop peer: an ACP v2 (Draft) agent written with the OFFICIAL Python SDK 1.0.0rc3
(``acp.experimental.v2``; with ``--dual`` routed by ``acp.experimental.negotiation``).

Runs ONLY inside ``.venv-interop-py1/`` as ``python -I`` (``scripts/setup_interop_py1.sh``); it
must not import rxacp. The SDK's v2 agent API does not emit the prompt lifecycle: this agent
answers ``session/prompt`` with ``{messageId}`` and then sends ``user_message``, ``running``,
the behaviour's updates and one ``idle`` with the stop reason. NOT responsible for any verdict
(``tests/interop/test_v2_interop.py``).

Prompts: ``stream <N>``, ``permission`` (title + allow/reject between ``requires_action`` and
``running``), ``slow <s>`` (``session/cancel`` ends it: idle ``cancelled``), else echoed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from itertools import count
from typing import Any

from acp.experimental import v2
from acp.experimental.v2 import schema

_ids = count(1)


def _update(wire: dict[str, Any]) -> Any:
    kind = wire["sessionUpdate"]
    if kind == "state_update":
        model = {
            "running": schema.RunningSessionStateUpdate,
            "idle": schema.IdleSessionStateUpdate,
            "requires_action": schema.RequiresActionSessionStateUpdate,
        }[wire["state"]]
    else:
        model = {
            "user_message": schema.UserMessageUpdate,
            "agent_message_chunk": schema.AgentMessageChunk,
        }[kind]
    return model.model_validate(wire)


class V2Agent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.turns: dict[str, asyncio.Event] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, info: Any, **kwargs: Any) -> Any:
        return schema.InitializeResponse.model_validate(
            {
                "protocolVersion": 2,
                "info": {"name": "python-v2-interop-agent", "version": "1.0.0rc3"},
                "capabilities": {"session": {}},
            }
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        return schema.NewSessionResponse.model_validate({"sessionId": f"py-v2-{next(_ids)}"})

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        cancelled = asyncio.Event()
        self.turns[session_id] = cancelled
        user_id = f"py_user_{next(_ids)}"
        text = "".join(getattr(b, "text", "") for b in prompt)
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in prompt]
        task = asyncio.ensure_future(self._turn(session_id, user_id, text, blocks, cancelled))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return schema.PromptResponse.model_validate({"messageId": user_id})

    async def cancel_session(self, session_id: str, **kwargs: Any) -> None:
        event = self.turns.get(session_id)
        if event is not None:
            event.set()

    async def _send(self, session_id: str, wire: dict[str, Any]) -> None:
        await self.conn.session_update(session_id=session_id, update=_update(wire))

    async def _turn(
        self, sid: str, user_id: str, text: str, blocks: list[Any], cancelled: asyncio.Event
    ) -> None:
        await asyncio.sleep(0)  # the acceptance goes out first
        agent_id = f"py_agent_{next(_ids)}"

        async def say(t: str) -> None:
            await self._send(
                sid,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": agent_id,
                    "content": {"type": "text", "text": t},
                },
            )

        await self._send(
            sid, {"sessionUpdate": "user_message", "messageId": user_id, "content": blocks}
        )
        await self._send(sid, {"sessionUpdate": "state_update", "state": "running"})
        word, _, arg = text.partition(" ")
        if word == "stream":
            for i in range(int(arg)):
                await say(str(i))
        elif word == "permission":
            await self._send(sid, {"sessionUpdate": "state_update", "state": "requires_action"})
            answer = await self.conn.request_permission(
                session_id=sid,
                title="Allow the interop test?",
                options=[
                    schema.PermissionOption.model_validate(
                        {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
                    ),
                    schema.PermissionOption.model_validate(
                        {"optionId": "reject", "name": "Reject", "kind": "reject_once"}
                    ),
                ],
            )
            await self._send(sid, {"sessionUpdate": "state_update", "state": "running"})
            outcome = answer.outcome.model_dump(mode="json", by_alias=True)
            await say(outcome.get("optionId") or "cancelled")
        elif word == "slow":
            loop = asyncio.get_running_loop()
            deadline = loop.time() + float(arg)
            tick = 0
            while loop.time() < deadline and not cancelled.is_set():
                await say(f"tick {tick}")
                tick += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(cancelled.wait(), 0.1)
        else:
            await say(text)
        stop = "cancelled" if cancelled.is_set() else "end_turn"
        self.turns.pop(sid, None)
        await self._send(
            sid, {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}
        )


async def main() -> None:
    agent = V2Agent()
    if "--dual" in sys.argv:
        import acp
        from acp.experimental.negotiation import AgentProtocolRouter
        from acp.schema import AgentMessageChunk as V1Chunk  # noqa: F401 - v1 models exist

        class V1Agent:
            def on_connect(self, conn: Any) -> None:
                self.conn = conn

            async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
                return acp.InitializeResponse(protocol_version=1)

            async def new_session(self, cwd: str, **kwargs: Any) -> Any:
                return acp.NewSessionResponse(session_id="py-v1")

            async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
                await self.conn.session_update(
                    session_id=session_id, update=acp.update_agent_message(acp.text_block("v1"))
                )
                return acp.PromptResponse(stop_reason="end_turn")

        def v1_factory(conn: Any) -> Any:
            v1_agent = V1Agent()
            v1_agent.on_connect(conn)
            return v1_agent

        def v2_factory(conn: Any) -> Any:
            agent.on_connect(conn)
            return agent

        await AgentProtocolRouter(v1=v1_factory, v2=v2_factory).run()
        return
    await v2.run_agent(agent)


if __name__ == "__main__":
    asyncio.run(main())
