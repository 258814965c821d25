"""The bare floor client, and the raw cancel-latency driver for every agent.

``python floor_client.py BENCH N AGENT_CMD_JSON`` spawns the agent, writes and parses the same
JSON-RPC lines with no SDK and prints one ``RESULT {...}`` line. BENCH: ``rt``, ``stream``,
``fanout``, ``idle``, ``cancel_session`` (``session/cancel`` → ``cancelled``) and
``cancel_request`` (``$/cancel_request`` → ``-32800``); the cancel benches measure the *agent's*
latency, so the runner uses this driver against every agent. Not an ACP implementation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Meter, emit, parse_args, proc_kib, self_kib

__all__ = ["main"]


class Peer:
    """The agent process and its pipes."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.w = self.proc.stdin
        self.r = self.proc.stdout
        self.next_id = 0

    def send(self, msg: dict[str, Any], flush: bool = True) -> None:
        self.w.write(json.dumps(msg).encode() + b"\n")
        if flush:
            self.w.flush()

    def request(self, method: str, params: dict[str, Any], flush: bool = True) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, flush)
        return self.next_id

    def read(self) -> dict[str, Any]:
        line = self.r.readline()
        if not line:
            raise EOFError("agent closed its stdout")
        return json.loads(line)  # type: ignore[no-any-return]

    def call(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Send a request; read until its answer; returns (answer, notifications seen)."""
        rid = self.request(method, params)
        seen = 0
        while True:
            msg = self.read()
            if msg.get("id") == rid and "method" not in msg:
                return msg, seen
            seen += 1

    def new_session(self) -> str:
        answer, _ = self.call("session/new", {"cwd": "/", "mcpServers": []})
        return str(answer["result"]["sessionId"])

    def close(self) -> None:
        self.w.close()
        self.proc.wait(10)


def prompt_params(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


def main() -> None:
    """Run one benchmark and print its result."""
    args = parse_args()
    peer = Peer(args.agent_cmd)
    pid = peer.proc.pid
    peer.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    sid = peer.new_session()
    n = args.n
    if args.bench == "rt":
        for _ in range(200):
            peer.call("session/prompt", prompt_params(sid, "echo hi"))
        meter = Meter(pid)
        for _ in range(n):
            peer.call("session/prompt", prompt_params(sid, "echo hi"))
        result = meter.done(n)
    elif args.bench == "stream":
        peer.call("session/prompt", prompt_params(sid, "stream 100"))
        meter = Meter(pid)
        rid = peer.request("session/prompt", prompt_params(sid, f"stream {n}"))
        seen = 0
        marks = max(1, n // 8)
        rss: list[tuple[int, int]] = []
        while True:
            msg = peer.read()
            if msg.get("id") == rid and "method" not in msg:
                break
            seen += 1
            if seen % marks == 0:
                rss.append((self_kib(), proc_kib(pid)))
        assert seen == n, (seen, n)
        result = meter.done(n, rss=rss)
    elif args.bench == "fanout":
        sids = [peer.new_session() for _ in range(50)]
        per = max(1, n // 50)
        left = {s: per for s in sids}
        owner: dict[int, str] = {}
        meter = Meter(pid)
        for s in sids:
            owner[peer.request("session/prompt", prompt_params(s, "echo hi"), flush=False)] = s
        peer.w.flush()
        done = 0
        while done < per * 50:
            msg = peer.read()
            if "method" in msg:
                continue
            s = owner.pop(msg["id"])
            done += 1
            left[s] -= 1
            if left[s]:
                owner[peer.request("session/prompt", prompt_params(s, "echo hi"))] = s
        result = meter.done(per * 50)
    elif args.bench == "idle":
        before = (self_kib(), proc_kib(pid))
        meter = Meter(pid)
        for _ in range(n):
            peer.new_session()
        after = (self_kib(), proc_kib(pid))
        result = meter.done(n, client_extra_kib=after[0] - before[0])
        result["agent_extra_kib"] = after[1] - before[1]
    elif args.bench in ("cancel_session", "cancel_request"):
        lat: list[float] = []
        for trial in range(n + 20):
            rid = peer.request("session/prompt", prompt_params(sid, "wait"))
            while "method" not in peer.read():  # the "waiting" update: the handler is in
                pass
            t0 = time.perf_counter()
            if args.bench == "cancel_session":
                peer.send(
                    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
                )
            else:
                peer.send(
                    {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}
                )
            while True:
                msg = peer.read()
                if msg.get("id") == rid and "method" not in msg:
                    break
            dt = time.perf_counter() - t0
            if args.bench == "cancel_session":
                assert msg.get("result", {}).get("stopReason") == "cancelled", msg
            else:
                assert msg.get("error", {}).get("code") == -32800, msg
            if trial >= 20:
                lat.append(dt)
        lat.sort()
        result = {
            "count": n,
            "p50_ms": lat[len(lat) // 2] * 1e3,
            "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3,
        }
    else:
        raise SystemExit(f"unknown bench {args.bench!r}")
    peer.close()
    emit(result)


if __name__ == "__main__":
    main()
