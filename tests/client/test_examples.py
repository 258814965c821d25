"""The client examples run end to end against the raw echo agent (real processes, stdio)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("script", ["sync_client.py", "async_client.py"])
def test_client_example_streams_asks_permission_and_stops_with_a_signal(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "-> end_turn" in out and "[permission asked: Echo a shouted prompt]" in out
    assert "-> cancelled (stopped with a CancellationSignal)" in out
    assert "word99" not in out  # the stop really cut the turn short
