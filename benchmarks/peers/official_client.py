"""Benchmark client written with the OFFICIAL Python ACP SDK (its ``ClientSideConnection``).

Runs only inside ``.venv-interop-py/`` (``python -I``) and never imports rxacp:
``python -I official_client.py BENCH N AGENT_CMD_JSON``. BENCH: ``rt``, ``stream``, ``fanout``,
``idle``. Prints one ``RESULT {...}`` line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Meter, agent_child, emit, proc_kib, self_kib
from acp import text_block
from acp.stdio import spawn_agent_process

__all__ = ["main"]


class BenchClient:
    """Counts ``session/update``s; samples RSS of both processes at eight points of a stream."""

    def __init__(self) -> None:
        self.count = 0
        self.marks = 0
        self.pid = 0
        self.rss: list[tuple[int, int]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.count += 1
        if self.marks and self.count % self.marks == 0:
            self.rss.append((self_kib(), proc_kib(self.pid)))


async def run(bench: str, n: int, cmd: list[str]) -> dict[str, Any]:
    client = BenchClient()
    async with spawn_agent_process(lambda _agent: client, cmd[0], *cmd[1:]) as (conn, proc):
        await conn.initialize(protocol_version=1)
        pid = client.pid = proc.pid or agent_child()
        sid = (await conn.new_session(cwd="/", mcp_servers=[])).session_id

        async def prompt(s: str, text: str) -> Any:
            return await conn.prompt(session_id=s, prompt=[text_block(text)])

        if bench == "rt":
            for _ in range(200):
                await prompt(sid, "echo hi")
            meter = Meter(pid)
            for _ in range(n):
                await prompt(sid, "echo hi")
            return meter.done(n)
        if bench == "stream":
            await prompt(sid, "stream 100")
            client.count, client.marks = 0, max(1, n // 8)
            meter = Meter(pid)
            await prompt(sid, f"stream {n}")
            assert client.count == n, (client.count, n)
            return meter.done(n, rss=client.rss)
        if bench == "fanout":
            sids = [(await conn.new_session(cwd="/", mcp_servers=[])).session_id for _ in range(50)]
            per = max(1, n // 50)

            async def worker(s: str) -> None:
                for _ in range(per):
                    await prompt(s, "echo hi")

            meter = Meter(pid)
            await asyncio.gather(*(worker(s) for s in sids))
            return meter.done(per * 50)
        if bench == "idle":
            before = (self_kib(), proc_kib(pid))
            meter = Meter(pid)
            for _ in range(n):
                await conn.new_session(cwd="/", mcp_servers=[])
            result = meter.done(n, client_extra_kib=self_kib() - before[0])
            result["agent_extra_kib"] = proc_kib(pid) - before[1]
            return result
    raise SystemExit(f"unknown bench {bench!r}")


def main() -> None:
    """Run one benchmark and print its result."""
    bench, n, cmd = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    emit(asyncio.run(run(bench, n, cmd)))


if __name__ == "__main__":
    main()
