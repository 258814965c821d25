"""CPU per prompt of agents over stdio, split into user and system time, with ``perf stat``.

    python benchmarks/profile/agent_cpu.py REPS 'label=command ...' ['label=command ...' ...]

Each agent is driven by ``floor_client.py rt`` (no client SDK) twice, with N0 and N1 prompts
(``N0``/``N1`` environment variables, default 1,000 and 11,000); the difference of the two
``perf stat`` readings divided by N1 - N0 removes start-up and import cost. Labels run in a
rotating order; medians are printed. Needs Linux ``perf`` (``apt install linux-perf``). Not a
benchmark of record (``benchmarks/run.py`` is); a tool to see where an agent's CPU goes.
Example: ``'rx=python benchmarks/peers/rxacp_agent.py async'``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "benchmarks" / "peers" / "floor_client.py"
EVENTS = "task-clock,context-switches,user_time,system_time"


def measure(cmd: list[str], n: int) -> dict[str, float]:
    """One perf-stat reading of the agent ``cmd`` serving ``n`` sequential prompts."""
    with tempfile.NamedTemporaryFile(suffix=".perf") as out:
        wrapped = ["perf", "stat", "-x,", "-o", out.name, "-e", EVENTS, *cmd]
        subprocess.run(
            [sys.executable, str(DRIVER), "rt", str(n), json.dumps(wrapped)],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
        )
        values: dict[str, float] = {}
        for line in Path(out.name).read_text().splitlines():
            parts = line.split(",")
            if len(parts) > 3 and parts[0][:1].isdigit():
                values[parts[2]] = float(parts[0])
    return {
        "cpu_us": values["task-clock"] * 1e3,  # msec -> µs
        "user_us": values["user_time"] / 1e3,  # ns -> µs
        "sys_us": values["system_time"] / 1e3,
        "switches": values["context-switches"],
    }


def main() -> None:
    """Measure every labelled agent REPS times and print medians per prompt."""
    reps = int(sys.argv[1])
    specs = [arg.split("=", 1) for arg in sys.argv[2:]]
    n0, n1 = int(os.environ.get("N0", "1000")), int(os.environ.get("N1", "11000"))
    results: dict[str, list[dict[str, float]]] = {label: [] for label, _ in specs}
    for rep in range(reps):
        for label, cmd in specs[rep % len(specs) :] + specs[: rep % len(specs)]:
            a, b = measure(cmd.split(), n0), measure(cmd.split(), n1)
            results[label].append({k: (b[k] - a[k]) / (n1 - n0) for k in a})
    for label, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(
            f"{label:24s} cpu {med['cpu_us']:6.1f} µs  user {med['user_us']:6.1f}  "
            f"sys {med['sys_us']:6.1f}  switches {med['switches']:4.2f} per prompt (n={reps})"
        )


if __name__ == "__main__":
    main()
