"""Run every benchmark side by side: rxacp (tuned and idiomatic) vs the official SDKs vs a floor.

    python benchmarks/run.py [--quick] [--reps N] [--bench rt,stream20k,...] [--json out.json]

Each measurement is one fresh client process that spawns its agent over stdio; implementations
alternate within every repetition and the table shows the median of the repetitions. Creates the
official Python SDK's venv (``scripts/setup_interop.sh``) and installs the official TypeScript
SDK (``scripts/setup_interop_ts.sh``) when they are missing; without node/npm the ``ts`` rows are
left out with a note. Not a unit test: figures depend on the machine and its load (printed with
the table).
"""

from __future__ import annotations

import argparse
import importlib.util
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
TS_SDK = ROOT / "tests" / "interop" / "ts" / "node_modules" / "@agentclientprotocol" / "sdk"
TS_AGENT = ROOT / "tests" / "interop" / "ts" / "ts_agent.mjs"
PY = sys.executable

__all__ = ["main"]

# impl -> (client, agent). The first four are the tuned pairs of issue 8; the others measure
# code as users write it: a Java-style Rx client or agent against the tuned other side, the
# reference agent (the one every tutorial, `rxacp demo` and `rxacp check` use) in each of its
# APIs driven by the plain async client, and the official TypeScript SDK's client and agent.
PAIRS: dict[str, tuple[str, str]] = {
    # the code the README teaches, first: its blocking client, and an async client built and
    # awaited inside asyncio.run() with every default, each against the default reference agent
    "readme-sync": ("rxacp-sync", "ref-default"),
    "readme-async": ("rxacp-plain", "ref-default"),
    "rxacp-sync": ("rxacp-sync", "rxacp-sync"),
    "rxacp-async": ("rxacp-async", "rxacp-async"),
    "official": ("official", "official"),
    "floor": ("floor", "floor"),
    "ts": ("ts", "ts"),
    "rxacp-uvloop": ("rxacp-uvloop", "rxacp-uvloop"),
    "rx-client": ("rxacp-rx", "rxacp-async"),
    "rx-agent": ("rxacp-async", "rxacp-rx"),
    "ref-sync": ("rxacp-async", "ref-sync"),
    "ref-async": ("rxacp-async", "ref-async"),
    "ref-decorators": ("rxacp-async", "ref-decorators"),
}
IMPLS = tuple(PAIRS)
TUNED = ("rxacp-sync", "rxacp-async", "official", "floor")
SPEED = IMPLS
# bench -> (kind, N full, N quick, the impls that run it)
BENCHES: dict[str, tuple[str, int, int, tuple[str, ...]]] = {
    "rt": ("rt", 3000, 1000, SPEED),
    "rt_fs": ("rt_fs", 2000, 500, ("rxacp-sync", "rxacp-async", "rx-client")),
    "stream20k": ("stream", 20_000, 20_000, SPEED),
    "stream200k": ("stream", 200_000, 50_000, SPEED),
    "fanout": ("fanout", 2000, 1000, SPEED),
    "slow1000": ("slow", 1000, 1000, ("ref-async", "ts")),
    "idle": ("idle", 1000, 1000, TUNED),
    "cancel_session": ("cancel_session", 1000, 200, TUNED),
    "cancel_request": ("cancel_request", 1000, 200, TUNED),
}
LEGEND = """\
impls (client → agent): readme-sync: the README's blocking client (AcpClient.sync, a consumer)
→ the reference agent with its default API (blocking handlers, as the README's agent);
readme-async: an async client built and awaited in asyncio.run() with every builder default →
the same agent; rxacp-sync / rxacp-async: tuned rxacp client → tuned rxacp agent (issue 8);
official: official Python SDK 0.12.1 both sides; ts: official TypeScript SDK both sides;
floor: bare JSON lines both sides; rx-client: Java-style Rx client (consumers return
reactivex.empty(), handlers reactivex.defer(...)) → tuned async agent; rx-agent: plain async
client → async agent whose handlers return reactivex.defer(...); ref-sync / ref-async /
ref-decorators: plain async client → the reference agent (python -m rxacp.testing.reference_agent
--api ...); rxacp-uvloop: the tuned async pair, both processes on uvloop (the test extra).
rt_fs: each prompt makes the agent read a file through the client's handler.
slow1000: 1,000 concurrent `slow 0.3` turns (rate = turns per wall second)."""


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


def ts_ready() -> str | None:
    """Install the TypeScript SDK peers if needed; None when ready, else why not."""
    if not (TS_SDK / "package.json").exists():
        proc = subprocess.run(
            ["bash", str(ROOT / "scripts" / "setup_interop_ts.sh")],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            return (proc.stderr.strip().splitlines() or ["setup_interop_ts.sh failed"])[-1]
    return None


def agent_cmd(agent: str) -> list[str]:
    if agent == "official":
        return [str(VENV_PY), "-I", str(PEERS / "official_agent.py")]
    if agent == "floor":
        return [PY, str(PEERS / "floor_agent.py")]
    if agent == "ts":
        return ["node", str(TS_AGENT)]
    if agent == "ref-default":
        return [PY, "-m", "rxacp.testing.reference_agent"]
    if agent.startswith("ref-"):
        return [PY, "-m", "rxacp.testing.reference_agent", "--api", agent[4:]]
    return [PY, str(PEERS / "rxacp_agent.py"), agent.split("-")[1]]


def client_cmd(impl: str, kind: str, n: int) -> list[str]:
    client, agent_name = PAIRS[impl]
    agent = json.dumps(agent_cmd(agent_name))
    if kind.startswith("cancel") or impl == "floor":  # the raw driver measures agent latency
        return [PY, str(PEERS / "floor_client.py"), kind, str(n), agent]
    if client == "official":
        return [str(VENV_PY), "-I", str(PEERS / "official_client.py"), kind, str(n), agent]
    if client == "ts":
        return ["node", str(PEERS / "ts_client.mjs"), kind, str(n), agent]
    return [PY, str(PEERS / "rxacp_client.py"), client.split("-")[1], kind, str(n), agent]


def run_one(impl: str, kind: str, n: int) -> dict[str, Any] | None:
    if kind == "cancel_request" and impl == "official":
        return None  # the official SDK does not implement $/cancel_request
    if impl == "rxacp-uvloop" and importlib.util.find_spec("uvloop") is None:
        return None  # uvloop is not installed (pip install -e ".[test]")
    proc = subprocess.run(
        client_cmd(impl, kind, n),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=ROOT,  # the reference agent runs as ``-m rxacp...`` from this checkout
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
        "rt_fs": ("rate", "client_cpu_us", "agent_cpu_us", "client_hwm_kib", "agent_hwm_kib"),
        "slow": (
            "wall",
            "rate",
            "client_cpu_us",
            "agent_cpu_us",
            "client_hwm_kib",
            "agent_hwm_kib",
        ),
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
        " | rate vs official | CPU vs official | rate vs ts | rate vs floor |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for bench, per in results.items():
        kind = BENCHES[bench][0]
        off, flo, ts = per.get("official", {}), per.get("floor", {}), per.get("ts", {})
        for impl in IMPLS:
            s = per.get(impl)
            if not s:
                continue
            if kind in ("rt", "rt_fs", "stream", "fanout", "slow"):
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
                if kind == "slow" and s.get("wall") is not None:
                    rss += f" (wall {s['wall']:.2f} s)"
                lines.append(
                    f"| {bench} | {impl} | {fmt(s['rate'])} | {fmt(s['client_cpu_us'], '.1f')}"
                    f" | {fmt(s['agent_cpu_us'], '.1f')} | {rss}"
                    f" | {ratio(s['rate'], off.get('rate'))} | {ratio(cpu, off_cpu)}"
                    f" | {ratio(s['rate'], ts.get('rate'))}"
                    f" | {ratio(s['rate'], flo.get('rate'))} |"
                )
            elif kind == "idle":
                lines.append(
                    f"| {bench} (1000 sessions: extra MiB client/agent) | {impl} | - | - | - |"
                    f" {fmt(s['client_extra_kib'] / 1024, '.2f')}/"
                    f"{fmt(s['agent_extra_kib'] / 1024, '.2f')} | - | - | - | - |"
                )
            else:
                lines.append(
                    f"| {bench} (p50/p99 ms) | {impl} | - | - | - |"
                    f" {fmt(s['p50_ms'], '.2f')} / {fmt(s['p99_ms'], '.2f')} | - | - | - | - |"
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


OBSERVABLE_COST = 1.3
"""An Observable-returning consumer or handler that completes at once: ≤ 1.3x a plain one's CPU."""

SLOW_TURNS_WALL_S = 1.5
"""1,000 concurrent ``slow 0.3`` turns on the async reference agent finish within 1.5 s."""

# the reference agent's row -> the tuned agent of the same API (agent CPU per update)
REFERENCE_TUNED = {
    "ref-sync": "rxacp-sync",
    "ref-async": "rxacp-async",
    "ref-decorators": "rxacp-sync",
}


def idiomatic_targets(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Issue 21's targets: idiomatic Rx code and the reference agent against the tuned path."""
    lines = ["| target | impl | measured | status |", "|---|---|---:|---|"]

    def row(name: str, impl: str, value: str, ok: bool | None) -> None:
        lines.append(f"| {name} | {impl} | {value} | {_check(ok)} |")

    def cost(bench: str, impl: str, base: str, side: str, name: str) -> None:
        per = results.get(bench, {})
        s, b = per.get(impl), per.get(base)
        key = f"{side}_cpu_us"
        if s and b and s.get(key) and b.get(key):
            r = s[key] / b[key]
            row(name, impl, f"{r:.2f}x ({s[key]:.1f} vs {b[key]:.1f} µs)", r <= OBSERVABLE_COST)

    cost(
        "stream200k",
        "rx-client",
        "rxacp-async",
        "client",
        "Observable consumer ≤ 1.3x plain (client CPU per update, stream200k)",
    )
    cost(
        "rt",
        "rx-client",
        "rxacp-async",
        "client",
        "Observable consumer ≤ 1.3x plain (client CPU per prompt, rt)",
    )
    cost(
        "rt_fs",
        "rx-client",
        "rxacp-async",
        "client",
        "Observable fs handler ≤ 1.3x plain (client CPU per prompt, rt_fs)",
    )
    cost(
        "rt",
        "rx-agent",
        "rxacp-async",
        "agent",
        "Observable prompt handler ≤ 1.3x plain (agent CPU per prompt, rt)",
    )
    for impl, tuned in REFERENCE_TUNED.items():
        for bench in ("stream20k", "stream200k"):
            per = results.get(bench, {})
            s, off, t = per.get(impl), per.get("official"), per.get(tuned)
            if s and off and s.get("rate") and off.get("rate"):
                r = s["rate"] / off["rate"]
                row(f"reference agent {bench} rate ≥ 2.0x official", impl, f"{r:.2f}x", r >= 2.0)
            if s and t and s.get("agent_cpu_us") and t.get("agent_cpu_us"):
                r = s["agent_cpu_us"] / t["agent_cpu_us"]
                value = f"{r:.2f}x ({s['agent_cpu_us']:.1f} vs {t['agent_cpu_us']:.1f} µs)"
                row(f"reference agent {bench} CPU per update ≤ 1.5x {tuned}", impl, value, r <= 1.5)
    for impl, need in (("readme-async", 2.0), ("readme-sync", 1.5)):
        for bench, want in (("rt", need), ("stream20k", 2.0)):
            per = results.get(bench, {})
            s, off = per.get(impl), per.get("official")
            if s and off and s.get("rate") and off.get("rate"):
                r = s["rate"] / off["rate"]
                row(f"README code: {bench} rate ≥ {want:.1f}x official", impl, f"{r:.2f}x", r >= want)
    for impl, need in (("rxacp-async", 2.0), ("rxacp-sync", 1.5)):
        per = results.get("rt", {})
        s, off = per.get(impl), per.get("official")
        if s and off and s.get("rate") and off.get("rate"):
            r = s["rate"] / off["rate"]
            row(f"rt rate ≥ {need:.1f}x official", impl, f"{r:.2f}x", r >= need)
    s = results.get("slow1000", {}).get("ref-async")
    if s and s.get("wall") is not None:
        row(
            "1,000 concurrent slow 0.3 turns ≤ 1.5 s",
            "ref-async",
            f"{s['wall']:.2f} s",
            s["wall"] <= SLOW_TURNS_WALL_S,
        )
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
    parser.add_argument(
        "--cold-start-reps", type=int, default=15, help="agent cold-start repetitions (0: skip)"
    )
    args = parser.parse_args()
    if args.table_from:
        summary = json.loads(Path(args.table_from).read_text())["summary"]
        print(table(summary) + "\n\n" + targets(summary) + "\n\n" + idiomatic_targets(summary))
        return
    reps = args.reps or (2 if args.quick else 5)
    benches = [b for b in args.bench.split(",") if b]
    impls = [i for i in args.impl.split(",") if i]
    unknown = [i for i in impls if i not in PAIRS] + [b for b in benches if b not in BENCHES]
    if unknown:
        parser.error(f"unknown impl or bench: {', '.join(unknown)}")
    ensure_official_venv()
    if "ts" in impls:
        why = ts_ready()
        if why is not None:
            print(f"note: the ts rows are left out (TypeScript SDK unavailable: {why})")
            impls.remove("ts")
    print(f"machine: {machine()}; load before: {load()}", flush=True)
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {b: {i: [] for i in impls} for b in benches}
    started = time.time()
    for rep in range(reps):
        for bench in benches:
            kind, full, quick, runs = BENCHES[bench]
            n = quick if args.quick else full
            if kind in ("idle", "cancel_session", "cancel_request", "stream", "slow") and rep >= 3:
                continue  # enough repetitions for the slow ones
            mine = [i for i in impls if i in runs]
            if not mine:
                continue
            order = mine[rep % len(mine) :] + mine[: rep % len(mine)]
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
    print(LEGEND + "\n")
    print(table(results))
    print("\nIssue 8 targets (tuned pairs; ratios from this run):\n")
    print(targets(results))
    print("\nIssue 21 targets (code as users write it; ratios from this run):\n")
    print(idiomatic_targets(results))
    cold = None
    # --- schema helper (issue 16): agent cold start, its own section (benchmarks/cold_start.py)
    if args.cold_start_reps > 0:
        from cold_start import measure as cold_measure
        from cold_start import table as cold_table

        cold = cold_measure(args.cold_start_reps)
        print(f"\nAgent cold start (issues 16, 27; medians of {args.cold_start_reps}, same run):\n")
        print(cold_table(cold))
    # --- end of the schema helper's section
    if args.json:
        Path(args.json).write_text(
            json.dumps({"summary": results, "raw": raw, "cold_start": cold}, indent=1)
        )


if __name__ == "__main__":
    main()
