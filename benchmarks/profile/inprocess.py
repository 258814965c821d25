"""In-process cost of one ``echo`` round trip through rxacp, without I/O or another process.

    python benchmarks/profile/inprocess.py agent|rx-agent|client|rx-client|sync-client|
        client-stream|rx-client-stream [N] [--profile]

``agent``: the async benchmark agent (``peers/rxacp_agent.py``) fed prompt lines directly on its
loop (``rx-agent``: its Java-style handler, returning ``reactivex.defer(...)``); ``client`` /
``sync-client``: the async (awaited) or sync client against a fake agent transport that answers
each prompt with one update and ``end_turn`` (``rx-client``: the async client whose update
consumer returns ``reactivex.empty()``); ``client-stream`` / ``rx-client-stream``: the same
clients, one prompt streaming N updates (CPU µs per update). Prints CPU µs per round
trip (``time.process_time``: all threads); ``--profile`` adds the cProfile top 30 by self time.
Hot caches and no pipes: a lower bound of the stdio figures, for before/after comparisons of a
change to the engine or the client/agent layers.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))
sys.path.insert(0, str(ROOT))

import reactivex  # noqa: E402
from pydantic_core import from_json, to_json  # noqa: E402

from rxacp import AcpAgent  # noqa: E402
from rxacp.client import AcpClient  # noqa: E402
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest  # noqa: E402
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver  # noqa: E402

WARM = 300


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode()


class _Timed:
    """Times (and optionally profiles) the measured phase."""

    def __init__(self, profile: bool) -> None:
        self.profiler = cProfile.Profile() if profile else None
        self.start = 0.0

    def __enter__(self) -> _Timed:
        self.start = time.process_time()
        if self.profiler:
            self.profiler.enable()
        return self

    def __exit__(self, *_: object) -> None:
        if self.profiler:
            self.profiler.disable()
        self.elapsed = time.process_time() - self.start


class _AgentSide(AcpTransport):
    """Captures the agent's receiver; counts what it sends."""

    def __init__(self) -> None:
        self.sent = 0
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.receiver: FrameReceiver | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self.loop, self.receiver = loop, receiver
        self.ready.set()

    def send(self, frame: Frame) -> None:
        self.sent += 1

    async def close(self) -> None:
        pass


class _FakeAgent(AcpTransport):
    """Answers initialize, session/new and each prompt (one update, then end_turn)."""

    loop: asyncio.AbstractEventLoop
    receiver: FrameReceiver

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self.loop, self.receiver = loop, receiver

    def send(self, frame: Frame) -> None:
        msg = from_json(frame)
        method, rid = msg.get("method"), msg.get("id")
        out: list[dict[str, Any]] = []
        if method == "initialize":
            out.append({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            out.append({"id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            chunk = {"type": "text", "text": "hi"}
            update = {"sessionUpdate": "agent_message_chunk", "content": chunk}
            params = {"sessionId": "s1", "update": update}
            text = msg["params"]["prompt"][0]["text"]
            count = int(text.split()[1]) if text.startswith("stream ") else 1
            out.extend({"method": "session/update", "params": params} for _ in range(count))
            out.append({"id": rid, "result": {"stopReason": "end_turn"}})
        lines = [to_json({"jsonrpc": "2.0", **o}) for o in out]
        receiver = self.receiver
        # send() runs on the connection's loop: the answer arrives one loop turn later, a
        # stream in batches of 64 lines per loop turn (as a pipe read delivers them)
        for start in range(0, len(lines), 64):
            batch = lines[start : start + 64]
            self.loop.call_soon(lambda b=batch: [receiver.on_frame(line) for line in b])

    async def close(self) -> None:
        pass


def run_agent(n: int, profile: bool, rx: bool = False) -> tuple[float, _Timed]:
    import rxacp_agent

    transport = _AgentSide()
    builder = AcpAgent.async_(transport)
    builder.new_session_handler(lambda _r: NewSessionResponse(session_id="s1"))
    builder.prompt_handler(rxacp_agent.prompt_rx if rx else rxacp_agent.prompt_async)
    agent = builder.build()
    threading.Thread(target=agent.run, daemon=True).start()
    transport.ready.wait(10)
    init = {"protocolVersion": 1, "clientCapabilities": {}}
    new = {"cwd": "/", "mcpServers": []}
    head = [
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        _line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}),
    ]
    prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "echo hi"}]}
    lines = [
        _line({"jsonrpc": "2.0", "id": i + 2, "method": "session/prompt", "params": prompt})
        for i in range(n + WARM)
    ]
    timed = _Timed(profile)
    done = threading.Event()

    def drive() -> None:
        assert transport.receiver is not None
        on_frame = transport.receiver.on_frame
        for line in head + lines[:WARM]:
            on_frame(line)
        with timed:
            for line in lines[WARM:]:
                on_frame(line)
        done.set()

    assert transport.loop is not None
    transport.loop.call_soon_threadsafe(drive)
    done.wait(120)
    return timed.elapsed / n * 1e6, timed


async def run_async_client(
    n: int, profile: bool, rx: bool = False, stream: bool = False
) -> tuple[float, _Timed]:
    loop = asyncio.get_running_loop()
    consumer: Any = (lambda _n: reactivex.empty()) if rx else (lambda _n: None)
    builder = AcpClient.async_(_FakeAgent()).session_update_consumer(consumer)
    client = builder.event_loop(loop).build()
    async with client:
        await client.initialize()
        sid = (await client.new_session(NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
        if stream:  # one prompt streaming n updates: CPU per update
            await client.prompt(PromptRequest.text(sid, f"stream {WARM}"))
            with _Timed(profile) as timed:
                await client.prompt(PromptRequest.text(sid, f"stream {n}"))
            return timed.elapsed / n * 1e6, timed
        for _ in range(WARM):
            await client.prompt(PromptRequest.text(sid, "echo hi"))
        with _Timed(profile) as timed:
            for _ in range(n):
                await client.prompt(PromptRequest.text(sid, "echo hi"))
    return timed.elapsed / n * 1e6, timed


def run_sync_client(n: int, profile: bool) -> tuple[float, _Timed]:
    with AcpClient.sync(_FakeAgent()).session_update_consumer(lambda _n: None).build() as client:
        client.initialize()
        sid = client.new_session(NewSessionRequest(cwd="/", mcp_servers=[])).session_id
        for _ in range(WARM):
            client.prompt(PromptRequest.text(sid, "echo hi"))
        with _Timed(profile) as timed:
            for _ in range(n):
                client.prompt(PromptRequest.text(sid, "echo hi"))
    return timed.elapsed / n * 1e6, timed


def main() -> None:
    """Run the chosen side and print its CPU per round trip."""
    args = [a for a in sys.argv[1:] if a != "--profile"]
    profile = "--profile" in sys.argv
    side = args[0] if args else "agent"
    n = int(args[1]) if len(args) > 1 else 20_000
    if side in ("agent", "rx-agent"):
        us, timed = run_agent(n, profile, rx=side == "rx-agent")
    elif side in ("client", "rx-client", "client-stream", "rx-client-stream"):
        rx, stream = side.startswith("rx-"), side.endswith("-stream")
        us, timed = asyncio.run(run_async_client(n, profile, rx=rx, stream=stream))
    elif side == "sync-client":
        us, timed = run_sync_client(n, profile)
    else:
        raise SystemExit(f"unknown side {side!r}: agent, client or sync-client")
    per = "update" if side.endswith("-stream") else "round trip"
    print(f"{side}: {us:.1f} µs CPU per in-process {per} (n={n})")
    if timed.profiler is not None:
        pstats.Stats(timed.profiler).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
