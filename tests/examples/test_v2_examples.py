"""The ACP v2 examples run: a v2 client against the dual agent, and its fallback to v1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "v2_client.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_v2_client_example_speaks_v2_with_the_dual_agent_example() -> None:
    out = _run()
    assert out.splitlines()[0] == "protocol 2"
    assert out.splitlines()[1] == (
        "user_message state_update agent_message_chunk agent_message_chunk "
        "agent_message_chunk state_update -> end_turn"
    )


def test_the_v2_client_example_falls_back_to_v1_with_a_v1_agent() -> None:
    out = _run("--v1-agent")
    assert out.splitlines() == ["protocol 1", "agent_message_chunk PromptResponse -> end_turn"]
