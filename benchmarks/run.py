"""Run every benchmark side by side: rxacp (sync and async APIs) vs the official SDK vs a floor.

    python benchmarks/run.py [--quick] [--reps N] [--bench rt,stream20k,...] [--json out.json]

Each measurement is one fresh client process that spawns its agent over stdio; implementations
alternate within every repetition and the table shows the median of the repetitions. Creates the
official SDK's venv (``scripts/setup_interop.sh``) when it is missing. Not a unit test: figures
depend on the machine and its load (printed with the table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "benchmarks" / "peers"
VENV_PY = ROOT / ".venv-interop-py" / "bin" / "python"
PY = sys.executable

__all__ = ["main"]

IMPLS = ("rxacp-sync", "rxacp-async", "official", "floor")
# bench -> (kind, N full, N quick)
BENCHES: dict[str, tuple[str, int, int]] = {
    "rt": ("rt", 3000, 1000),
    "stream20k": ("stream", 20_000, 20_000),
    "stream200k": ("stream", 200_000, 50_000),
    "fanout": ("fanout", 2000, 1000),
    "idle": ("idle", 1000, 1000),
    "cancel_session": ("cancel_session", 1000, 200),
    "cancel_request": ("cancel_request", 1000, 200),
}


def ensure_official_venv() -> None:
    """Create ``.venv-interop-py`` with the official SDK if it is not there."""
    ok = VENV_PY.exists() and (
        subprocess.run(
            [str(VENV_PY), "-I", "-c", "import acp"], capture_output=True, check=False
        ).returncode
        == 0
    )
    if not ok:
        subprocess.run(["bash", str(ROOT / "scripts" / "setup_interop.sh")], check=True)


def agent_cmd(impl: str) -> list[str]:
    if impl == "official":
        return [str(VENV_PY), "-I", str(PEERS / "official_agent.py")]
    if impl == "floor":
        return [PY, str(PEERS / "floor_agent.py")]
    return [PY, str(PEERS / "rxacp_agent.py"), impl.split("-")[1]]


def client_cmd(impl: str, kind: str, n: int) -> list[str]:
    agent = json.dumps(agent_cmd(impl))
    if kind.startswith("cancel") or impl == "floor":  # the raw driver measures agent latency
        return [PY, str(PEERS / "floor_client.py"), kind, str(n), agent]
    if impl == "official":
        return [str(VENV_PY), "-I", str(PEERS / "official_client.py"), kind, str(n), agent]
    return [PY, str(PEERS / "rxacp_client.py"), impl.split("-")[1], kind, str(n), agent]


def run_one(impl: str, kind: str, n: int) -> dict[str, Any] | None:
    if kind == "cancel_request" and impl == "official":
        return None  # the official SDK does not implement $/cancel_request
    proc = subprocess.run(
        client_cmd(impl, kind, n), capture_output=True, text=True, timeout=900, check=False
    )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[7:])  # type: ignore[no-any-return]
    sys.stderr.write(f"{impl} {kind} failed (rc {proc.returncode}):\n{proc.stderr[-2000:]}\n")
    return None


def median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r and key in r]
    return statistics.median(values) if values else None


def summarize(runs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(runs)}
    keys = {
        "rt": ("rate", "client_cpu_us", "agent_cpu_us", "client_hwm_kib", "agent_hwm_kib"),
        "stream": ("rate", "client_cpu_us", "agent_cpu_us", "client_hwm_kib", "agent_hwm_kib"),
        "fanout": ("rate", "client_cpu_us", "agent_cpu_us"),
        "idle": ("client_extra_kib", "agent_extra_kib"),
        "cancel_session": ("p50_ms", "p99_ms"),
        "cancel_request": ("p50_ms", "p99_ms"),
    }[kind]
    for key in keys:
        out[key] = median(runs, key)
    if kind == "stream":  # growth between the first and last eighth of the stream
        growth = [
            (r["rss"][-1][0] - r["rss"][0][0], r["rss"][-1][1] - r["rss"][0][1])
            for r in runs
            if r.get("rss")
        ]
        if growth:
            out["client_growth_kib"] = statistics.median(g[0] for g in growth)
            out["agent_growth_kib"] = statistics.median(g[1] for g in growth)
    return out


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cpus, {model}, Python {platform.python_version()}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def fmt(value: Any, spec: str = ".0f") -> str:
    return "-" if value is None else format(value, spec)


def ratio(a: Any, b: Any) -> str:
    return "-" if not a or not b else f"{a / b:.2f}x"


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        "| bench | impl | rate/s | client µs/msg | agent µs/msg | peak RSS client/agent MiB"
        " | rate vs official | CPU vs official | rate vs floor |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for bench, per in results.items():
        kind = BENCHES[bench][0]
        off, flo = per.get("official", {}), per.get("floor", {})
        for impl in IMPLS:
            s = per.get(impl)
            if not s:
                continue
            if kind in ("rt", "stream", "fanout"):
                cpu = (s["client_cpu_us"] or 0) + (s["agent_cpu_us"] or 0)
                off_cpu = (off.get("client_cpu_us") or 0) + (off.get("agent_cpu_us") or 0)
                rss = (
                    f"{s['client_hwm_kib'] / 1024:.0f}/{s['agent_hwm_kib'] / 1024:.0f}"
                    if s.get("client_hwm_kib")
                    else "-"
                )
                if kind == "stream" and "client_growth_kib" in s:
                    rss += (
                        f" (growth {s['client_growth_kib'] / 1024:.1f}/"
                        f"{s['agent_growth_kib'] / 1024:.1f})"
                    )
                lines.append(
                    f"| {bench} | {impl} | {fmt(s['rate'])} | {fmt(s['client_cpu_us'], '.1f')}"
                    f" | {fmt(s['agent_cpu_us'], '.1f')} | {rss}"
                    f" | {ratio(s['rate'], off.get('rate'))} | {ratio(cpu, off_cpu)}"
                    f" | {ratio(s['rate'], flo.get('rate'))} |"
                )
            elif kind == "idle":
                lines.append(
                    f"| {bench} (1000 sessions: extra MiB client/agent) | {impl} | - | - | - |"
                    f" {fmt(s['client_extra_kib'] / 1024, '.2f')}/"
                    f"{fmt(s['agent_extra_kib'] / 1024, '.2f')} | - | - | - |"
                )
            else:
                lines.append(
                    f"| {bench} (p50/p99 ms) | {impl} | - | - | - |"
                    f" {fmt(s['p50_ms'], '.2f')} / {fmt(s['p99_ms'], '.2f')} | - | - | - |"
                )
    return "\n".join(lines)


FLAT_GROWTH_KIB = 2048
""""Flat memory" while streaming 200,000 updates: each side grows by less than 2 MiB."""


def _cpu(s: dict[str, Any]) -> float:
    return float((s.get("client_cpu_us") or 0) + (s.get("agent_cpu_us") or 0))


def _check(ok: bool | None) -> str:
    return "-" if ok is None else ("met" if ok else "NOT met")


def targets(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Issue 8's targets for each rxacp API: the measured value and met / not met."""
    lines = ["| target | impl | measured | status |", "|---|---|---:|---|"]

    def row(name: str, impl: str, value: str, ok: bool | None) -> None:
        lines.append(f"| {name} | {impl} | {value} | {_check(ok)} |")

    for impl in (i for i in IMPLS if i.startswith("rxacp")):
        for bench in ("rt", "stream20k", "stream200k"):
            per = results.get(bench, {})
            s, off, flo = per.get(impl), per.get("official"), per.get("floor")
            if not s or not off or not s.get("rate") or not off.get("rate"):
                continue
            rate = s["rate"] / off["rate"]
            row(f"{bench} rate ≥ 2.0x official", impl, f"{rate:.2f}x", rate >= 2.0)
            if _cpu(off):
                cpu = _cpu(s) / _cpu(off)
                row(f"{bench} CPU per message ≤ 0.5x official", impl, f"{cpu:.2f}x", cpu <= 0.5)
            if bench == "rt" and flo and flo.get("rate"):
                floor = s["rate"] / flo["rate"]
                row("rt rate ≥ 0.5x floor", impl, f"{floor:.2f}x", floor >= 0.5)
            if bench == "stream200k" and "agent_growth_kib" in s:
                growth = max(s["client_growth_kib"], s["agent_growth_kib"])
                row(
                    "flat memory streaming 200k (growth < 2 MiB)",
                    impl,
                    f"{growth / 1024:.1f} MiB",
                    growth < FLAT_GROWTH_KIB,
                )
        for bench in ("cancel_session", "cancel_request"):
            s = results.get(bench, {}).get(impl)
            if s and s.get("p50_ms") is not None and s.get("p99_ms") is not None:
                ok = s["p50_ms"] <= 2.0 and s["p99_ms"] <= 10.0
                value = f"{s['p50_ms']:.2f} / {s['p99_ms']:.2f} ms"
                row(f"{bench} p50 ≤ 2 ms, p99 ≤ 10 ms", impl, value, ok)
        s = results.get("idle", {}).get(impl)
        if s and s.get("client_extra_kib") is not None:
            extra = max(s["client_extra_kib"], s["agent_extra_kib"]) / 1024
            row("1,000 idle sessions < 50 MiB extra", impl, f"{extra:.2f} MiB", extra < 50)
    return "\n".join(lines)


def main() -> None:
    """Parse options, run the alternating repetitions, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller N and fewer repetitions")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 5; quick 2)")
    parser.add_argument("--bench", default=",".join(BENCHES), help="comma-separated benches")
    parser.add_argument("--impl", default=",".join(IMPLS), help="comma-separated impls")
    parser.add_argument("--json", default=None, help="also write the raw results here")
    parser.add_argument("--table-from", default=None, help="only print the table of a --json")
    args = parser.parse_args()
    if args.table_from:
        summary = json.loads(Path(args.table_from).read_text())["summary"]
        print(table(summary) + "\n\n" + targets(summary))
        return
    reps = args.reps or (2 if args.quick else 5)
    benches = [b for b in args.bench.split(",") if b]
    impls = [i for i in args.impl.split(",") if i]
    ensure_official_venv()
    print(f"machine: {machine()}; load before: {load()}", flush=True)
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {b: {i: [] for i in impls} for b in benches}
    started = time.time()
    for rep in range(reps):
        for bench in benches:
            kind, full, quick = BENCHES[bench]
            n = quick if args.quick else full
            if kind in ("idle", "cancel_session", "cancel_request", "stream") and rep >= 3:
                continue  # enough repetitions for the slow ones
            order = impls[rep % len(impls) :] + impls[: rep % len(impls)]
            for impl in order:
                result = run_one(impl, kind, n)
                if result is not None:
                    raw[bench][impl].append(result)
            print(f"  rep {rep + 1}/{reps} {bench} done ({time.time() - started:.0f}s)", flush=True)
    results = {
        b: {i: summarize(runs, BENCHES[b][0]) for i, runs in per.items() if runs}
        for b, per in raw.items()
    }
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')} — {machine()} — load after: {load()}\n")
    print(table(results))
    print("\nIssue 8 targets (ratios from this run):\n")
    print(targets(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": results, "raw": raw}, indent=1))


if __name__ == "__main__":
    main()
