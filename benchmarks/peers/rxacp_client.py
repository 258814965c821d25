"""Benchmark client written with rxacp: ``python rxacp_client.py API BENCH N AGENT_CMD_JSON``.

API is ``sync`` (``AcpClient.sync``, blocking calls; fan-out uses 50 threads), ``async``
(``AcpClient.async_`` awaited from asyncio, its loop given with ``event_loop``; fan-out uses
``asyncio.gather``), ``plain`` (the same with every builder default), ``uvloop`` (the
async client on a uvloop event loop) or ``rx``: the async client written the Java way, the way
a team migrating from the Java SDK writes it — the update
consumer returns ``reactivex.empty()`` (``Mono.empty()``) and the ``fs/read_text_file`` handler
returns ``reactivex.defer(...)`` of the answer, where ``async`` returns ``None`` and the plain
response. BENCH: ``rt``, ``stream``, ``fanout``, ``idle``, ``rt_fs`` (``rt`` where each prompt
makes the agent read a file through the client's handler) and ``slow`` (N sessions, one
``slow 0.3`` prompt each, all at once). Prints one ``RESULT {...}`` line. Not a behaviour test.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import reactivex
from _common import Meter, agent_child, emit, proc_kib, self_kib

from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, PromptRequest, ReadTextFileRequest, ReadTextFileResponse
from rxacp.transport import AgentParameters, StdioAcpClientTransport

__all__ = ["main"]


class Counter:
    """Counts updates; samples RSS of both processes at eight points of a stream."""

    def __init__(self) -> None:
        self.count = 0
        self.marks = 0
        self.pid = 0
        self.rss: list[tuple[int, int]] = []

    def __call__(self, _note: Any) -> None:
        self.count += 1
        if self.marks and self.count % self.marks == 0:
            self.rss.append((self_kib(), proc_kib(self.pid)))


FS_PATH = "/bench/notes.txt"
FS_TEXT = "hello from the client"


def read_plain(_request: ReadTextFileRequest) -> ReadTextFileResponse:
    """A plain handler: returns the answer."""
    return ReadTextFileResponse(content=FS_TEXT)


def read_rx(_request: ReadTextFileRequest) -> reactivex.Observable[ReadTextFileResponse]:
    """The Java way: ``Mono.defer(() -> Mono.just(answer))``."""
    return reactivex.defer(lambda _scheduler: reactivex.just(ReadTextFileResponse(content=FS_TEXT)))


def transport(cmd: list[str]) -> StdioAcpClientTransport:
    return StdioAcpClientTransport(AgentParameters.builder(cmd[0]).args(*cmd[1:]).build())


def run_sync(bench: str, n: int, cmd: list[str]) -> dict[str, Any]:
    counter = Counter()
    builder = AcpClient.sync(transport(cmd)).session_update_consumer(counter)
    with builder.read_text_file_handler(read_plain).build() as client:
        client.initialize()
        pid = counter.pid = agent_child()
        new = NewSessionRequest(cwd="/", mcp_servers=[])
        sid = client.new_session(new).session_id
        if bench in ("rt", "rt_fs"):
            text = "echo hi" if bench == "rt" else f"read {FS_PATH}"
            for _ in range(200):
                client.prompt(PromptRequest.text(sid, text))
            meter = Meter(pid)
            for _ in range(n):
                client.prompt(PromptRequest.text(sid, text))
            return meter.done(n)
        if bench == "stream":
            client.prompt(PromptRequest.text(sid, "stream 100"))
            counter.count, counter.marks = 0, max(1, n // 8)
            meter = Meter(pid)
            client.prompt(PromptRequest.text(sid, f"stream {n}"))
            assert counter.count == n, (counter.count, n)
            return meter.done(n, rss=counter.rss)
        if bench == "fanout":
            sids = [client.new_session(new).session_id for _ in range(50)]
            per = max(1, n // 50)

            def worker(s: str) -> None:
                for _ in range(per):
                    client.prompt(PromptRequest.text(s, "echo hi"))

            threads = [threading.Thread(target=worker, args=(s,)) for s in sids]
            meter = Meter(pid)
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return meter.done(per * 50)
        if bench == "idle":
            before = (self_kib(), proc_kib(pid))
            meter = Meter(pid)
            for _ in range(n):
                client.new_session(new)
            result = meter.done(n, client_extra_kib=self_kib() - before[0])
            result["agent_extra_kib"] = proc_kib(pid) - before[1]
            return result
    raise SystemExit(f"unknown bench {bench!r}")


async def run_async(
    bench: str, n: int, cmd: list[str], rx: bool = False, plain: bool = False
) -> dict[str, Any]:
    counter = Counter()
    builder = AcpClient.async_(transport(cmd))
    if rx:

        def consume(note: Any) -> reactivex.Observable[Any]:
            counter(note)
            return reactivex.empty()

        builder.session_update_consumer(consume).read_text_file_handler(read_rx)
    else:
        builder.session_update_consumer(counter).read_text_file_handler(read_plain)
    if not plain and os.environ.get("RXACP_BENCH_OWN_LOOP") != "1":  # the connection on our loop
        builder.event_loop(asyncio.get_running_loop())
    client = builder.build()
    async with client:
        await client.initialize()
        pid = counter.pid = agent_child()
        new = NewSessionRequest(cwd="/", mcp_servers=[])
        sid = (await client.new_session(new)).session_id
        if bench in ("rt", "rt_fs"):
            text = "echo hi" if bench == "rt" else f"read {FS_PATH}"
            for _ in range(200):
                await client.prompt(PromptRequest.text(sid, text))
            meter = Meter(pid)
            for _ in range(n):
                await client.prompt(PromptRequest.text(sid, text))
            return meter.done(n)
        if bench == "slow":
            sids = [(await client.new_session(new)).session_id for _ in range(n)]
            meter = Meter(pid)
            answers = await asyncio.gather(
                *(client.prompt(PromptRequest.text(s, "slow 0.3")) for s in sids)
            )
            assert all(a.stop_reason == "end_turn" for a in answers)
            return meter.done(n, updates=counter.count)
        if bench == "stream":
            await client.prompt(PromptRequest.text(sid, "stream 100"))
            counter.count, counter.marks = 0, max(1, n // 8)
            meter = Meter(pid)
            await client.prompt(PromptRequest.text(sid, f"stream {n}"))
            assert counter.count == n, (counter.count, n)
            return meter.done(n, rss=counter.rss)
        if bench == "fanout":
            sids = [(await client.new_session(new)).session_id for _ in range(50)]
            per = max(1, n // 50)

            async def worker(s: str) -> None:
                for _ in range(per):
                    await client.prompt(PromptRequest.text(s, "echo hi"))

            meter = Meter(pid)
            await asyncio.gather(*(worker(s) for s in sids))
            return meter.done(per * 50)
        if bench == "idle":
            before = (self_kib(), proc_kib(pid))
            meter = Meter(pid)
            for _ in range(n):
                await client.new_session(new)
            result = meter.done(n, client_extra_kib=self_kib() - before[0])
            result["agent_extra_kib"] = proc_kib(pid) - before[1]
            return result
    raise SystemExit(f"unknown bench {bench!r}")


def main() -> None:
    """Run one benchmark and print its result."""
    import json

    api, bench, n, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
    if api == "sync":
        emit(run_sync(bench, n, cmd))
    elif api == "uvloop":  # the async client on a uvloop event loop
        import uvloop

        emit(uvloop.run(run_async(bench, n, cmd)))
    else:
        emit(asyncio.run(run_async(bench, n, cmd, rx=api == "rx", plain=api == "plain")))


if __name__ == "__main__":
    main()
