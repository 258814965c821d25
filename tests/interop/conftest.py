"""Interop test plumbing: print the combined interop matrix once, at the end of the session.

Not responsible for any peer or assertion (see the ``test_*.py`` modules and ``matrix.py``).
"""

from __future__ import annotations

import pytest

from tests.interop.matrix import MATRIX, save_json

__all__ = ["pytest_terminal_summary"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Write the peer x scenario table (and where its JSON copy is) after the test summary."""
    if not MATRIX.write_section(terminalreporter, "ACP interop matrix (peer x scenario)"):
        return
    note = "N/A = the peer cannot do it (the test asserts rxacp's side still behaves)"
    out = save_json(terminalreporter, "interop", MATRIX.to_json())
    if out is not None:
        note += f"; JSON: {out}"
    terminalreporter.write_line(f"({note})")
