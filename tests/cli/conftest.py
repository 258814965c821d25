"""Helpers for command-line tests: run ``rxacp`` in-process or as a subprocess."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from rxacp.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT = shlex.join([sys.executable, "-m", "rxacp.testing.reference_agent"])
WAIT = 15.0


def child_env(**extra: str) -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": ROOT + (os.pathsep + path if path else "")}
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def rxacp_cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Run]:
    """Run ``rxacp ARGS`` in this process (the agent it spawns finds this checkout)."""
    monkeypatch.setenv("PYTHONPATH", child_env()["PYTHONPATH"])

    def run(*args: str, stdin: str = "") -> Run:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(args), out=out, err=err, stdin=io.StringIO(stdin))
        return Run(code, out.getvalue(), err.getvalue())

    return run


def spawn_cli(*args: str, **env: str) -> subprocess.Popen[bytes]:
    """``python -m rxacp ARGS`` as a subprocess with piped output."""
    return subprocess.Popen(
        [sys.executable, "-m", "rxacp", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(**env),
    )
