"""Interop peer: an ACP v2 (Draft) client written with the OFFICIAL Python SDK 1.0.0rc3
(``acp.experimental.v2``: ``connect_to_agent``, ``initialize``, ``new_session``, ``prompt``,
``cancel_session``; ``acp.transports.spawn_stdio_transport`` to spawn the agent).

Runs ONLY inside ``.venv-interop-py1/`` as ``python -I``; it must not import rxacp. Spawns the
agent given after ``--``, runs one scenario and prints one JSON line of facts; the verdict is
``tests/interop/test_v2_interop.py``'s.

Usage: ``python -I python_v2_client.py <stream|permission|cancel|negotiate> -- CMD ...``
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from acp.experimental import v2
from acp.experimental.v2 import schema
from acp.transports import spawn_stdio_transport

WAIT = 30.0


class Recorder:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.permission_title: str | None = None

    async def request_permission(self, session_id: str, title: str, options: Any, **kw: Any) -> Any:
        self.permission_title = title
        return schema.RequestPermissionResponse.model_validate(
            {"outcome": {"outcome": "selected", "optionId": "allow"}}
        )

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        self.changed.set()

    async def until(self, pred: Any) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while True:
            for u in self.updates:
                if pred(u):
                    return u
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(0.01, deadline - time.monotonic()))


def idle_end(u: dict[str, Any]) -> bool:
    return (
        u.get("sessionUpdate") == "state_update"
        and u.get("state") == "idle"
        and bool(u.get("stopReason"))
    )


def text(sid: str, t: str) -> list[Any]:
    return [schema.TextContentBlock.model_validate({"type": "text", "text": t})]


async def run(scenario: str, cmd: list[str]) -> dict[str, Any]:
    facts: dict[str, Any] = {"scenario": scenario}
    rec = Recorder()
    async with spawn_stdio_transport(cmd[0], *cmd[1:], stderr=None) as (reader, writer, _proc):
        conn = v2.connect_to_agent(rec, writer, reader)
        try:
            init = await conn.initialize(
                protocol_version=2,
                info=schema.Implementation.model_validate(
                    {"name": "python-v2-interop-client", "version": "1.0.0rc3"}
                ),
                capabilities=schema.ClientCapabilities.model_validate({}),
            )
        except Exception as exc:  # the SDK's v2 client has no v1 fallback
            facts["initializeError"] = f"{type(exc).__name__}: {exc}"
            return facts
        facts["protocolVersion"] = init.protocol_version
        facts["agentName"] = init.info.name
        sid = (await conn.new_session(cwd="/tmp")).session_id
        if scenario == "stream":
            accepted = await conn.prompt(session_id=sid, prompt=text(sid, "stream 5"))
            facts["messageId"] = accepted.message_id
            facts["stopReason"] = (await rec.until(idle_end))["stopReason"]
            chunks = [u for u in rec.updates if u["sessionUpdate"] == "agent_message_chunk"]
            facts["chunks"] = [c["content"]["text"] for c in chunks]
            facts["chunkMessageIds"] = len({c["messageId"] for c in chunks})
            facts["userMessageId"] = next(
                (u["messageId"] for u in rec.updates if u["sessionUpdate"] == "user_message"), None
            )
        elif scenario == "permission":
            await conn.prompt(session_id=sid, prompt=text(sid, "permission"))
            facts["stopReason"] = (await rec.until(idle_end))["stopReason"]
            facts["states"] = [
                u["state"] for u in rec.updates if u["sessionUpdate"] == "state_update"
            ]
            facts["permissionTitle"] = rec.permission_title
            facts["text"] = "".join(
                u["content"]["text"]
                for u in rec.updates
                if u["sessionUpdate"] == "agent_message_chunk"
            )
        elif scenario == "cancel":
            await conn.prompt(session_id=sid, prompt=text(sid, "slow 20"))
            await rec.until(lambda u: u["sessionUpdate"] == "agent_message_chunk")
            started = time.monotonic()
            await conn.cancel_session(session_id=sid)
            facts["stopReason"] = (await rec.until(idle_end))["stopReason"]
            facts["cancelMs"] = int((time.monotonic() - started) * 1000)
            facts["idleCount"] = sum(1 for u in rec.updates if idle_end(u))
        await conn.close()
    return facts


def main() -> None:
    scenario = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1 :]
    try:
        facts = asyncio.run(run(scenario, cmd))
    except Exception as exc:
        facts = {"scenario": scenario, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(facts), flush=True)


if __name__ == "__main__":
    main()
