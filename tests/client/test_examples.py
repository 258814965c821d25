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


def test_the_read_model_tui_renders_the_final_screen_of_three_turns() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "read_model_tui.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("session ref-") and "mode=default" in lines[0]
    assert "  [x] Answer" in lines
    assert "  tool 'Look up the answer' (fetch): completed" in lines
    assert "  (thinking) consulting the reference table" in lines
    assert "agent> the tool says 42" in lines and "agent> plan complete" in lines
    assert sum(1 for line in lines if line.startswith("agent> ")) == 3  # one per turn


def test_the_tracing_example_prints_one_trace_across_both_processes() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "tracing_console.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    tree = [line for line in done.stdout.splitlines() if not line.startswith("trace ")]
    shape = [(len(line) - len(line.lstrip()), line.split("  [")[0].strip()) for line in tree]
    assert shape == [
        (0, "user asks"),
        (2, "session/prompt"),
        (4, "session/prompt"),
        (6, "fs/read_text_file"),
        (8, "fs/read_text_file"),
    ]
    processes = [line.split("[")[1].split("]")[0] for line in tree]
    assert processes == [
        "client INTERNAL",
        "client CLIENT",
        "agent SERVER",
        "agent CLIENT",
        "client SERVER",
    ]
