"""Round trips and streaming over Streamable HTTP: rxacp's ``AcpAsgiApp`` against the official
Python SDK 1.0.0rc3's server (``acp.http`` ``create_asgi_app``), same run, same client.

Both servers run under uvicorn on loopback in their own process (the official one from
``.venv-interop-py1``, ``scripts/setup_interop_py1.sh``), each with its scripted agent; one
rxacp ``HttpAcpClientTransport`` client drives each: ``--round-trips`` prompts ``stream 0``
(one POST, the answer on the session stream) and one prompt ``stream --updates`` (every
update counted before the answer). Prints a markdown table.

Run: ``python benchmarks/remote_http.py [--round-trips 300] [--updates 5000]``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rxacp.client import AcpClient  # noqa: E402
from rxacp.schema import NewSessionRequest, PromptRequest  # noqa: E402
from rxacp.transport.http import HttpAcpClientTransport  # noqa: E402

PY1 = os.path.join(ROOT, ".venv-interop-py1", "bin", "python")
PEER = os.path.join(ROOT, "tests", "interop", "peers", "python1_remote.py")
RXACP_SERVER = (
    "import sys; sys.path.insert(0, {root!r})\n"
    "from rxacp.testing.reference_agent import asgi_app\n"
    "from rxacp.transport.http._serve import serve\n"
    "print('ready', flush=True)\n"
    "serve(asgi_app('sync'), '127.0.0.1', {port})\n"
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(kind: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    if kind == "rxacp":
        command = [sys.executable, "-c", RXACP_SERVER.format(root=ROOT, port=port)]
    else:
        command = [PY1, "-I", PEER, "serve", str(port)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    url = f"http://127.0.0.1:{port}/acp"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # uvicorn binds right after "ready"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return child, url


def measure(url: str, round_trips: int, updates: int) -> dict[str, float]:
    seen: list[object] = []
    with (
        AcpClient.sync(HttpAcpClientTransport(url))
        .session_update_consumer(seen.append)
        .build() as client
    ):
        client.initialize()
        sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
        for _ in range(20):  # warm-up
            client.prompt(PromptRequest.text(sid, "stream 0"))
        times = []
        for _ in range(round_trips):
            started = time.perf_counter()
            client.prompt(PromptRequest.text(sid, "stream 0"))
            times.append(time.perf_counter() - started)
        seen.clear()
        started = time.perf_counter()
        client.prompt(PromptRequest.text(sid, f"stream {updates}"))
        took = time.perf_counter() - started
        assert len(seen) == updates, (len(seen), updates)  # all of them before the answer
    return {
        "rt_median_ms": statistics.median(times) * 1000,
        "rt_per_s": round_trips / sum(times),
        "updates_per_s": updates / took,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--round-trips", type=int, default=300)
    parser.add_argument("--updates", type=int, default=5000)
    args = parser.parse_args()
    results = {}
    for kind in ("rxacp", "official-python"):
        child, url = start(kind)
        try:
            results[kind] = measure(url, args.round_trips, args.updates)
        finally:
            child.kill()
            child.wait()
    print(f"load {os.getloadavg()[0]:.1f}; client: rxacp HttpAcpClientTransport (sync)")
    print("| server (Streamable HTTP, uvicorn) | round trip median | round trips/s | updates/s |")
    print("|---|---:|---:|---:|")
    for kind, r in results.items():
        print(
            f"| {kind} | {r['rt_median_ms']:.2f} ms | {r['rt_per_s']:.0f} |"
            f" {r['updates_per_s']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
