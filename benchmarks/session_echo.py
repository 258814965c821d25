"""Baseline: engine requests/s with an echo handler, over the in-memory pair and over stdio.

    python benchmarks/session_echo.py [--n 5000]

Sequential: one request in flight at a time (latency bound). Pipelined: 64 in flight.
Not a unit test; figures vary with the machine. Run from the repository root.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests.session.peers.echo_session import serve

PEER = str(Path(__file__).resolve().parents[1] / "tests" / "session" / "peers" / "echo_session.py")


def sequential(session: AcpSession, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        wait_for(session.send_request("echo", {"i": i}), 10)
    return n / (time.perf_counter() - start)


def pipelined(session: AcpSession, n: int, window: int = 64) -> float:
    sem = threading.Semaphore(window)
    done = threading.Event()
    left = [n]
    lock = threading.Lock()

    def finished(_: Any = None) -> None:
        sem.release()
        with lock:
            left[0] -= 1
            if left[0] == 0:
                done.set()

    start = time.perf_counter()
    for i in range(n):
        sem.acquire()
        session.send_request("echo", {"i": i}).subscribe(finished, lambda e: finished())
    done.wait(60)
    return n / (time.perf_counter() - start)


def run(kind: str, n: int, serialize: bool = True) -> tuple[float, float]:
    peer = None
    if kind == "memory":
        pair = InMemoryTransportPair.create(serialize=serialize)
        peer = serve(pair.agent_transport)
        transport: Any = pair.client_transport
    else:
        env = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        transport = StdioAcpClientTransport(
            AgentParameters.builder(sys.executable).args(PEER).env(env).build()
        )
    session = AcpSession(transport, role="bench")
    session.start()
    try:
        sequential(session, 200)  # warm up
        return sequential(session, n), pipelined(session, n)
    finally:
        session.close()
        if peer is not None:
            peer.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=5000)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    for label, kind, ser in (
        ("in-memory (serialized)", "memory", True),
        ("in-memory (objects)", "memory", False),
        ("stdio subprocess", "stdio", True),
    ):
        seq, pipe = run(kind, args.n, ser)
        print(f"{label:24} sequential {seq:8.0f} req/s   pipelined(64) {pipe:8.0f} req/s")


if __name__ == "__main__":
    main()
