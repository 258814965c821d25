"""Peak memory of an rxacp agent server under many connections each sending one large prompt.

Starts a server in a child process (``--server ws``: ``WebSocketAcpAgentServer``; ``--server
http``: ``AcpAsgiApp`` under uvicorn, over Streamable HTTP; ``--server asgi-ws``: the same app
over WebSocket), opens ``--connections`` raw
clients at once, each sending ``initialize``, ``session/new`` and one ``session/prompt`` whose
text is ``--size`` MiB (``--compression``: WebSocket permessage-deflate, so a few KiB on the
wire), and prints the server's peak resident memory (``VmHWM``) before and after.

Run: ``python benchmarks/remote_memory.py --server ws --connections 6 --size 16``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SERVER = r"""
import sys, threading
sys.path.insert(0, {root!r})
from rxacp.agent import AcpAgent
from rxacp.schema import NewSessionResponse, PromptResponse
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
kind, compression, agent = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
def minimal(t):  # keeps nothing of a prompt: what stays is the server's own
    return (AcpAgent.sync(t).new_session_handler(lambda r: NewSessionResponse(session_id="s"))
            .prompt_handler(lambda r, ctx: PromptResponse.end_turn()).build())
import asyncio, json
raw_loop = asyncio.new_event_loop()
threading.Thread(target=raw_loop.run_forever, daemon=True).start()
class Parse:  # parses each message and answers it, no engine: the transport's memory alone
    def __init__(self, t):
        self.t = t
        asyncio.run_coroutine_threadsafe(t.start(raw_loop, self), raw_loop).result()
    def on_frame(self, frame):
        rid = (json.loads(frame) if isinstance(frame, (bytes, str)) else frame).get("id")
        result = (dict(protocolVersion=1) if rid == 0 else dict(sessionId="s") if rid == 1
                  else dict(stopReason="end_turn"))
        self.t.send(json.dumps(dict(jsonrpc="2.0", id=rid, result=result)).encode())
    def on_frame_too_large(self, size): pass
    def on_closed(self, info): pass
    def on_write_paused(self): pass
    def on_write_resumed(self): pass
factories = dict(minimal=minimal, parse=Parse,
                 reference=lambda t: build_agent("sync", t, ReferenceOptions()))
factory = factories[agent]
if kind == "ws":
    from rxacp.transport.websocket import WebSocketAcpAgentServer
    server = WebSocketAcpAgentServer(factory, port=0, compression=compression).start()
    print(server.url, flush=True)
else:
    from rxacp.transport.http import AcpAsgiApp
    from rxacp.transport.http._serve import UvicornThread
    server = UvicornThread(AcpAsgiApp(factory)).start()
    print(server.url, flush=True)
sys.stdin.read()
"""


def peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def messages(size_mib: int) -> list[dict[str, Any]]:
    padding = "x" * (size_mib * 1024 * 1024 - 300)  # a second text block: "stream 1" acts
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {
                "sessionId": "?",
                "prompt": [{"type": "text", "text": "stream 1"}, {"type": "text", "text": padding}],
            },
        },
    ]


async def ws_client(url: str, size: int, compression: bool, burst: int = 1) -> None:
    from websockets.asyncio.client import connect

    init, new, prompt = messages(size)
    async with connect(url, max_size=None, compression="deflate" if compression else None) as ws:
        await ws.send(json.dumps(init))
        await ws.recv()
        await ws.send(json.dumps(new))
        sid = json.loads(await ws.recv())["result"]["sessionId"]
        prompt["params"]["sessionId"] = sid
        for n in range(burst):  # sent back to back, answered in turn (or refused)
            prompt["id"] = 2 + n
            await ws.send(json.dumps(prompt))
        answers = 0
        while answers < burst:
            if "id" in json.loads(await ws.recv()):
                answers += 1


async def http_client(url: str, size: int) -> None:
    import httpx

    init, new, prompt = messages(size)
    async with httpx.AsyncClient(timeout=120) as client:
        first = await client.post(url, json=init)
        cid = first.headers["acp-connection-id"]
        headers = {"acp-connection-id": cid}
        async with client.stream(
            "GET", url, headers={**headers, "accept": "text/event-stream"}
        ) as conn:
            lines = conn.aiter_lines()
            await client.post(url, json=new, headers=headers)
            async for line in lines:
                if line.startswith("data: "):
                    sid = json.loads(line[6:])["result"]["sessionId"]
                    break
            sheaders = {**headers, "acp-session-id": sid, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=sheaders) as stream:
                prompt["params"]["sessionId"] = sid
                status = (
                    await client.post(url, json=prompt, headers={**headers, "acp-session-id": sid})
                ).status_code
                if status != 202:
                    raise RuntimeError(f"prompt POST answered HTTP {status}")
                async for line in stream.aiter_lines():
                    if line.startswith('data: {"jsonrpc":"2.0","id":2,'):
                        return


async def run(
    kind: str, url: str, connections: int, size: int, compression: bool, burst: int
) -> None:
    if kind in ("ws", "asgi-ws"):
        url = "ws" + url.removeprefix("http") if kind == "asgi-ws" else url
        jobs = [ws_client(url, size, compression, burst) for _ in range(connections)]
    else:
        jobs = [http_client(url, size) for _ in range(connections)]
    results = await asyncio.gather(*jobs, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        print(f"{len(errors)} clients failed, e.g. {errors[0]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", choices=("ws", "http", "asgi-ws"), default="ws")
    parser.add_argument("--connections", type=int, default=6)
    parser.add_argument("--size", type=int, default=16, help="prompt size in MiB")
    parser.add_argument("--compression", action="store_true")
    parser.add_argument("--burst", type=int, default=1, help="prompts sent back to back (ws)")
    parser.add_argument(
        "--agent",
        choices=("minimal", "reference", "parse"),
        default="minimal",
        help="minimal: answers end_turn, keeps nothing; reference: records the prompt history;"
        " parse: no agent engine, each message parsed and answered (the transport alone)",
    )
    parser.add_argument("--root", default=ROOT, help="the rxacp checkout to import (compare)")
    args = parser.parse_args()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVER.format(root=args.root),
            args.server,
            "1" if args.compression else "0",
            args.agent,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = child.stdout.readline().strip() if child.stdout else ""
        before = peak_kib(child.pid)
        started = time.monotonic()
        asyncio.run(
            run(args.server, url, args.connections, args.size, args.compression, args.burst)
        )
        took = time.monotonic() - started
        after = peak_kib(child.pid)
        deflate = " +deflate" if args.compression else ""
        print(
            f"{args.server}{deflate} ({args.agent} agent): {args.connections} connections x"
            f" {args.burst} x {args.size} MiB prompt: server peak RSS {before / 1024:.0f} MiB"
            f" idle -> {after / 1024:.0f} MiB ({took:.1f} s)"
        )
    finally:
        child.kill()
        child.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
