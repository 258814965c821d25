"""The kit's own fixtures for these tests (importing them works whether or not the installed
``rxacp`` entry point already registered the plugin), plus a thread-leak check."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rxacp.testing.pytest_plugin import acp_pair, mock_agent, mock_client

from ._run import PLUGIN, run_pytest

__all__ = ["acp_pair", "mock_agent", "mock_client", "no_thread_left", "plugin_run"]

EXAMPLES = ["examples/test_my_agent.py", "examples/test_my_client.py"]
PROBE = str(Path(__file__).with_name("probe_fixture_teardown.py"))


@pytest.fixture(scope="session")
def plugin_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One pytest subprocess (bounded) over the examples and the teardown probe, with the
    plugin found only through a ``pytest11`` entry point like the one in pyproject.toml."""
    site = tmp_path_factory.mktemp("site")
    dist = site / "rxacp_entry_point_probe-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: rxacp-entry-point-probe\nVersion: 0\n"
    )
    (dist / "entry_points.txt").write_text(f"[pytest11]\nrxacp = {PLUGIN}\n")
    done = run_pytest("-v", *EXAMPLES, PROBE, pythonpath=[site])
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture
def no_thread_left() -> Iterator[None]:
    """Fails the test if a thread it started is still alive (joined with a bound) at the end."""
    before = set(threading.enumerate())
    yield
    leaked = []
    for thread in set(threading.enumerate()) - before:
        thread.join(5.0)
        if thread.is_alive():
            leaked.append(thread.name)
    assert not leaked, f"threads left running: {leaked}"
