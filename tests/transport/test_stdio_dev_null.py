"""An agent whose stdin is ``/dev/null`` (a character device epoll refuses) sees EOF and exits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rxacp.transport.stdio_agent import _is_pollable

ROOT = Path(__file__).resolve().parents[2]


def test_an_agent_started_with_stdin_from_dev_null_ends_at_its_eof_instead_of_waiting() -> None:
    # Before: asyncio's read-pipe transport could not register /dev/null with epoll (EPERM),
    # logged the error and the agent waited forever. Generous bound for a loaded box.
    for stdout in (subprocess.PIPE, subprocess.DEVNULL):
        proc = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "readme_agent.py")],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert b"PermissionError" not in proc.stderr
        assert not proc.stdout


def test_pipes_and_terminals_stay_on_the_event_loop_and_dev_null_does_not() -> None:
    read_end, write_end = os.pipe()
    leader, follower = os.openpty()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        assert _is_pollable(read_end)
        assert _is_pollable(follower)
        assert not _is_pollable(null)
    finally:
        for fd in (read_end, write_end, leader, follower, null):
            os.close(fd)
