"""Run pytest in a subprocess (bounded) for the plugin and example tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "rxacp.testing.pytest_plugin"


def run_pytest(*args: str, pythonpath: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` from the repo root, with ``pythonpath`` put first."""
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), str(ROOT)])
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
