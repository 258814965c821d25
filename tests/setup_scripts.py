"""Running the repo's peer-install scripts (``scripts/setup_*.sh``) from a test fixture.

:func:`run_setup_script` runs one script under bash, bounded, and FAILS the calling test (the
suite never skips a real peer) with the script's own output when it cannot finish. The field
agents, the TypeScript SDK peers and the official Python SDK's venv all install through it.

This module is *not* responsible for what a script installs (``scripts/``) nor for checking the
installed peer (the fixture that calls it).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["ROOT", "run_setup_script"]

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root folder."""


def run_setup_script(name: str, *, timeout: float, needs: str) -> str:
    """Run ``scripts/<name>`` under bash in the repo root; return its stdout.

    ``needs`` says what the tests need it for (named in every failure). FAILS the test when
    bash is missing, the script runs past ``timeout`` seconds, or it exits non-zero.
    """
    bash = shutil.which("bash")
    if bash is None:
        pytest.fail(f"bash is needed to run scripts/{name}: {needs}", pytrace=False)
    try:
        done = subprocess.run(
            [bash, str(ROOT / "scripts" / name)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"scripts/{name} did not finish within {timeout:.0f} s (package registry "
            f"unreachable?); {needs}",
            pytrace=False,
        )
    if done.returncode != 0:
        pytest.fail(
            f"scripts/{name} failed (exit {done.returncode}); {needs} (this suite never skips "
            f"them).\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}",
            pytrace=False,
        )
    return done.stdout
