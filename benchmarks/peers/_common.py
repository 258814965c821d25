"""Stdlib-only helpers shared by every benchmark client and agent (also the official-SDK venv).

Reads CPU time and RSS of a process from ``/proc`` (no psutil), finds the agent child, parses the
driver's arguments and prints the one-line JSON result. It is *not* a benchmark itself.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from typing import Any

__all__ = [
    "CLK_TCK",
    "Args",
    "Meter",
    "agent_child",
    "emit",
    "parse_args",
    "proc_cpu",
    "proc_kib",
    "self_kib",
    "text_of",
]

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """User+system CPU seconds of ``pid`` (all its threads), 0.0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_kib(pid: int | str, key: str = "VmRSS") -> int:
    """A ``/proc/<pid>/status`` size field in KiB (VmRSS now, VmHWM peak), 0 if unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def self_kib(key: str = "VmRSS") -> int:
    """This process's RSS (or peak with ``VmHWM``) in KiB."""
    return proc_kib("self", key)


def agent_child() -> int:
    """The pid of this process's (single) python child: the agent under test."""
    me = os.getpid()
    best = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            best = max(best, int(name))
    return best


class Args:
    """``client.py BENCH N AGENT_CMD_JSON``: what to run, how many, and which agent to spawn."""

    def __init__(self, argv: list[str]) -> None:
        self.bench = argv[1]
        self.n = int(argv[2])
        self.agent_cmd: list[str] = json.loads(argv[3])


def parse_args() -> Args:
    """Parse ``sys.argv``."""
    return Args(sys.argv)


def text_of(command: str, arg: object = "") -> str:
    """A prompt text the benchmark agents understand (``echo x``, ``stream n``, ``wait``)."""
    return f"{command} {arg}".strip()


class Meter:
    """CPU and wall time of this process and the agent over the measured phase."""

    def __init__(self, agent_pid: int) -> None:
        self.agent_pid = agent_pid
        self.wall = time.perf_counter()
        self.cpu = time.process_time()
        self.agent_cpu = proc_cpu(agent_pid)

    def done(self, count: int, **extra: Any) -> dict[str, Any]:
        """Figures since construction, per ``count`` messages."""
        wall = time.perf_counter() - self.wall
        cpu = time.process_time() - self.cpu
        agent_cpu = proc_cpu(self.agent_pid) - self.agent_cpu
        return {
            "count": count,
            "wall": wall,
            "rate": count / wall if wall else 0.0,
            "client_cpu_us": cpu / count * 1e6,
            "agent_cpu_us": agent_cpu / count * 1e6,
            "client_hwm_kib": max(
                self_kib("VmHWM"), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            ),
            "agent_hwm_kib": proc_kib(self.agent_pid, "VmHWM"),
            **extra,
        }


def emit(result: dict[str, Any]) -> None:
    """Print the result as the last stdout line, prefixed so the runner finds it."""
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
