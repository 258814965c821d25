"""Agent cold start: spawn an agent process -> its answer to ``initialize`` (issues 16, 27).

    python benchmarks/cold_start.py [--reps 15] [--skip-official] [--importtime] [--json out.json]

For each agent, one fresh process per repetition: the clock starts right before the spawn, the
``initialize`` request is written to its stdin at once, and the clock stops when the answer
line arrives; then stdin is closed and the process reaped. Agents alternate within every
repetition; the table shows the median (and min/max) of the repetitions, plus the median of
``python -c "import rxacp.schema"`` and of ``python -c "import pydantic, reactivex"``, each
timed inside its interpreter, alternating. The official Python SDK's agent runs from
``.venv-interop-py`` (created by ``scripts/setup_interop.sh`` if missing).

Issue 27's two ratios (same run) close the table: the README agent (``examples/readme_agent.py``)
against ``peers/floor_initialize.py`` (imports asyncio, pydantic and reactivex, validates the
request with a small pydantic model and answers: what any agent on these libraries pays; target
<= 1.5x), and ``import rxacp.schema`` against ``import pydantic, reactivex`` (target <= 1.6x).
``--importtime`` adds the ``-X importtime`` top entries of the README agent's start.

Both sides start from cached bytecode, as installed packages do: pip compiles the official SDK
(and pydantic, reactivex) when it installs them, but an editable rxacp compiles its modules on
first import, and under ``PYTHONDONTWRITEBYTECODE=1`` on *every* import (+~45 ms per start on
an idle box). :func:`measure` therefore byte-compiles ``rxacp/`` first (``compileall``, what
``pip install`` does); the main script is compiled at every start on both sides.

Where a minimal rxacp agent's start goes (wall milliseconds inside the agent, medians of 9 on a
quiet 2-core box, 2026-12-01): interpreter and ``site`` ~20; ``import asyncio`` 34; pydantic
(``BaseModel``) 62; reactivex 16 (these four are the floor rows); the generated model classes
(~0.3 ms each even with deferred schema building: pydantic collects every class's fields at
import); the rest of rxacp's agent, session and transport modules 21; pydantic's first
validation 22 (its plugin lookup through ``importlib.metadata``, paid by the validating floor
too, and the ``initialize`` schema builds). Since issue 27 ``import rxacp.schema`` builds no
model and an agent's start builds only the closure of what ``rxacp.agent`` imports (125 of
the 167 stable classes, ``START_ROOTS`` in ``scripts/generate_schema.py``); the other 42 load
on first use.

Not a unit test: the figures depend on the machine and its load (printed with the table).
``benchmarks/run.py`` prints this table as its own section.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
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

__all__ = [
    "AGENTS",
    "compile_rxacp",
    "importtime_top",
    "main",
    "measure",
    "once",
    "once_with_cpu",
    "ratios",
    "table",
]

README_AGENT = "rxacp readme_agent.py (sync)"
OFFICIAL = "official SDK agent"
FLOOR_INITIALIZE = "floor: peers/floor_initialize.py (imports, validates, answers)"
FLOOR = (
    "import asyncio, sys, pydantic, reactivex; from pydantic import BaseModel, Field; "
    'sys.stdin.readline(); print(\'{"jsonrpc":"2.0","id":0,"result":{}}\', flush=True)'
)
AGENTS: dict[str, list[str]] = {
    README_AGENT: [PY, str(ROOT / "examples" / "readme_agent.py")],
    "rxacp reference agent": [PY, "-m", "rxacp.testing.reference_agent"],
    OFFICIAL: [str(VENV_PY), "-I", str(PEERS / "official_agent.py")],
    # What any agent built on these libraries pays before its own code runs.
    "floor: python + asyncio, pydantic, reactivex imports": [PY, "-c", FLOOR],
    # ... and with pydantic's first validation (issue 27's floor).
    FLOOR_INITIALIZE: [PY, str(PEERS / "floor_initialize.py")],
}
IMPORTS = {
    "import rxacp.schema": "rxacp.schema",
    "import pydantic, reactivex": "pydantic, reactivex",
}
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    + "\n"
).encode()


def once(cmd: list[str]) -> float:
    """Seconds from spawning ``cmd`` to the line answering ``initialize``."""
    return once_with_cpu(cmd)[0]


def once_with_cpu(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds from spawning ``cmd`` to its ``initialize`` answer, and the CPU seconds
    (user + system, all threads) the process used in all, from spawn to its exit on EOF.

    The CPU figure is what a loaded machine distorts least: under load the wall time also
    holds the waits for a core, which are the same for every agent.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    assert proc.stdin is not None and proc.stdout is not None
    wall = None
    try:
        try:
            proc.stdin.write(INITIALIZE)
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # it already exited: reported below
        while wall is None:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{cmd[-1]} exited without answering initialize")
            if b'"id":0' in line.replace(b" ", b"") and b"result" in line:
                wall = time.perf_counter() - started
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    return wall, cpu


def import_time(modules: str = "rxacp.schema") -> float:
    """``import <modules>`` in a fresh interpreter, timed inside it (seconds)."""
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip())


def compile_rxacp() -> None:
    """Byte-compile ``rxacp/`` into ``__pycache__`` (what ``pip install`` does for a package)."""
    if not compileall.compile_dir(ROOT / "rxacp", quiet=1):
        raise RuntimeError("compileall failed for rxacp/")


def importtime_top(cmd: list[str], top: int = 15) -> list[tuple[int, int, str]]:
    """``-X importtime`` of one start of ``cmd`` (fed ``initialize``, then EOF): the ``top``
    entries by cumulative time, as ``(self µs, cumulative µs, module)``."""
    out = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]],
        input=INITIALIZE,
        capture_output=True,
        check=False,
        cwd=ROOT,
        timeout=60,
    )
    rows = []
    for line in out.stderr.decode(errors="replace").splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            rows.append((int(parts[0]), int(parts[1]), parts[2].rstrip()))
    return sorted(rows, key=lambda r: r[1], reverse=True)[:top]


def measure(reps: int = 15, agents: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Alternating repetitions of every agent's cold start and of the two imports."""
    agents = AGENTS if agents is None else agents
    compile_rxacp()
    runs: dict[str, list[float]] = {name: [] for name in agents}
    cpu: dict[str, list[float]] = {name: [] for name in agents}
    imports: dict[str, list[float]] = {name: [] for name in IMPORTS}
    names, import_names = list(agents), list(IMPORTS)
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            wall, used = once_with_cpu(agents[name])
            runs[name].append(wall)
            cpu[name].append(used)
        for name in import_names[rep % 2 :] + import_names[: rep % 2]:
            imports[name].append(import_time(IMPORTS[name]))
    return {"agents": runs, "agents_cpu": cpu, "imports": imports}


def ratios(result: dict[str, Any]) -> dict[str, float]:
    """Issue 27's ratios of medians: README agent / floor, rxacp.schema / pydantic+reactivex."""
    med = statistics.median
    out: dict[str, float] = {}
    runs, imports = result["agents"], result["imports"]
    if runs.get(README_AGENT) and runs.get(FLOOR_INITIALIZE):
        out["readme agent / floor (target <= 1.5)"] = med(runs[README_AGENT]) / med(
            runs[FLOOR_INITIALIZE]
        )
    cpu = result.get("agents_cpu", {})
    if cpu.get(README_AGENT) and cpu.get(FLOOR_INITIALIZE):
        out["readme agent / floor, CPU seconds of the whole run"] = med(cpu[README_AGENT]) / med(
            cpu[FLOOR_INITIALIZE]
        )
    out["import rxacp.schema / import pydantic, reactivex (target <= 1.6)"] = med(
        imports["import rxacp.schema"]
    ) / med(imports["import pydantic, reactivex"])
    return out


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def table(result: dict[str, Any]) -> str:
    """Markdown table: median / min / max per agent, and the schema import median."""
    lines = [
        "| agent cold start (spawn → initialize answer) | median s | min s | max s | reps |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, values in result["agents"].items():
        lines.append(
            f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | "
            f"{max(values):.3f} | {len(values)} |"
        )
    for name, values in result.get("agents_cpu", {}).items():
        lines.append(
            f"| {name}: CPU s, spawn to exit | {statistics.median(values):.3f} | "
            f"{min(values):.3f} | {max(values):.3f} | {len(values)} |"
        )
    for name, values in result["imports"].items():
        lines.append(
            f"| `{name}` (in-process) | {statistics.median(values):.3f} | "
            f"{min(values):.3f} | {max(values):.3f} | {len(values)} |"
        )
    lines += ["", "| ratio of medians (issue 27) | x |", "|---|---:|"]
    lines += [f"| {name} | {value:.2f} |" for name, value in ratios(result).items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--skip-official", action="store_true", help="leave the official SDK out")
    parser.add_argument("--importtime", action="store_true", help="-X importtime top entries")
    parser.add_argument("--json", default=None, help="also write the raw results here")
    args = parser.parse_args(argv)
    agents = dict(AGENTS)
    if args.skip_official:
        del agents[OFFICIAL]
    elif not VENV_PY.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "setup_interop.sh")], check=True)
    print(f"load before: {_load()}", flush=True)
    result = measure(args.reps, agents)
    print(f"load after: {_load()}\n")
    print(table(result))
    if args.importtime:
        print(f"\n-X importtime of one {README_AGENT} start (top by cumulative µs):\n")
        print("| self µs | cumulative µs | module |\n|---:|---:|---|")
        for self_us, cum_us, module in importtime_top(AGENTS[README_AGENT]):
            print(f"| {self_us} | {cum_us} | `{module.strip()}` |")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
