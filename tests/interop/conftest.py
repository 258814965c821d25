"""Interop test plumbing: print the combined interop matrix once, at the end of the session.

Not responsible for any peer or assertion (see the ``test_*.py`` modules and ``matrix.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interop.matrix import MATRIX

__all__ = ["pytest_terminal_summary"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Write the peer x scenario table (and where its JSON copy is) after the test summary."""
    lines = MATRIX.render()
    if not lines:
        return
    terminalreporter.section("ACP interop matrix (peer x scenario)")
    for line in lines:
        terminalreporter.write_line(line)
    note = "N/A = the peer cannot do it (the test asserts rxacp's side still behaves)"
    cache = getattr(terminalreporter.config, "cache", None)
    if cache is not None:
        out = Path(str(cache.mkdir("interop"))) / "matrix.json"
        out.write_text(json.dumps(MATRIX.to_json(), indent=2), encoding="utf-8")
        note += f"; JSON: {out}"
    terminalreporter.write_line(f"({note})")
