"""Shared helpers of the reliability suite: figures, the long-mode flag, process probes.

Every test reports the figure it measures through the ``figure`` fixture: it goes into the
JUnit XML (``record_property``) and into a "rxacp reliability figures" section of the terminal
summary, which is printed with or without ``-s``. ``RXACP_LONG=1`` selects the long variants
(more trials, the full 200,000-update stream, minutes of soak); the default is fast for CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.polling import wait_until as wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LONG = os.environ.get("RXACP_LONG", "") not in ("", "0")
"""True when the long variants were asked for (``RXACP_LONG=1``)."""

FIGURES: list[tuple[str, str, Any]] = []
FLOOD = os.path.join(os.path.dirname(__file__), "peers", "flood_agent.py")
"""A minimal agent that answers fast (``peers/flood_agent.py``)."""

Figure = Callable[[str, Any], None]


def scaled(short: int, long: int) -> int:
    """``long`` under ``RXACP_LONG=1``, else ``short``."""
    return long if LONG else short


@pytest.fixture
def figure(record_property: Callable[[str, Any], None], request: pytest.FixtureRequest) -> Figure:
    """Record one measured figure of the running test (XML property + terminal summary)."""

    def record(name: str, value: Any) -> None:
        record_property(name, value)
        FIGURES.append((request.node.name, name, value))

    return record


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long variants run for minutes: lift the per-test timeout to an hour for them."""
    if LONG:
        for item in items:
            if "tests/reliability" in str(item.fspath).replace(os.sep, "/"):
                item.add_marker(pytest.mark.timeout(3600))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    mode = "long (RXACP_LONG=1)" if LONG else "short (set RXACP_LONG=1 for the long variants)"
    terminalreporter.write_sep("-", f"rxacp reliability figures, {mode}")
    for test, name, value in FIGURES:
        terminalreporter.write_line(f"{test}: {name} = {value}")


def agent_env() -> dict[str, str]:
    """Environment for a spawned agent that imports this checkout's rxacp."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": ROOT + (os.pathsep + path if path else "")}


def reference_agent_argv(*flags: str) -> list[str]:
    return [sys.executable, "-m", "rxacp.testing.reference_agent", *flags]


def spawn_agent(argv: list[str], *, stderr: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """Start the agent ``argv`` (importing this checkout) with stdin and stdout piped."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, **agent_env()},
    )
    assert proc.stdin is not None and proc.stdout is not None
    return proc


def send_json(proc: subprocess.Popen[bytes], obj: dict[str, Any]) -> None:
    """Write one JSON-RPC message (``"jsonrpc": "2.0"`` added) to ``proc``'s stdin."""
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", **obj}).encode() + b"\n")
    proc.stdin.flush()


def rxacp_threads() -> list[str]:
    """Names of live threads that belong to rxacp connections."""
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("rxacp-"))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """Resident set size of ``pid`` in KiB (Linux); ``field="VmHWM"``: its peak."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


@pytest.fixture
def no_thread_leak() -> Iterator[None]:
    """Fail if rxacp threads other than idle workers outlive the test (bounded wait)."""
    yield
    assert wait_until(lambda: not [n for n in rxacp_threads() if "worker" not in n], 30.0), (
        rxacp_threads()
    )
