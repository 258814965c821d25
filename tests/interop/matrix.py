"""The combined interop matrix: peer x scenario -> PASS / FAIL / N/A, shared by all interop tests.

Every interop test module records its cells into :data:`MATRIX` (``with MATRIX.cell(peer,
scenario): ...`` or ``MATRIX.set(...)``); ``tests/interop/conftest.py`` prints the one table at the
end of the pytest session (``pytest_terminal_summary``) and saves it as JSON.

This module is *not* responsible for running any peer or asserting anything: it only collects
and renders verdicts. A cell that no test reached stays ``-``.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["MATRIX", "NA", "SCENARIOS", "Matrix", "save_json"]

SCENARIOS: tuple[str, ...] = (
    "initialize",
    "new_session",
    "echo",
    "stream_10000",
    "read_non_ascii",
    "permission_allow",
    "permission_reject",
    "session_cancel",
    "cancel_request",
    "error_code",
    "unknown_method",
)
"""The matrix columns, in order (the scenarios of issue 7)."""

NA = "N/A"
"""Verdict of a cell the peer cannot do (the test still asserts rxacp's side behaves)."""


class Matrix:
    """Peer x scenario -> verdict; thread safe; peers appear in the order first recorded.

    ``scenarios`` are the columns (default: the interop matrix's); the field suite
    (``tests/field``) keeps its own instance with its own columns.
    """

    def __init__(self, scenarios: tuple[str, ...] = SCENARIOS) -> None:
        self.scenarios = scenarios
        self.cells: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def set(self, peer: str, scenario: str, status: str) -> None:
        """Record ``status`` (PASS / FAIL / N/A / QUIRK) for one cell; FAIL is never overwritten."""
        if scenario not in self.scenarios:
            raise ValueError(f"unknown scenario {scenario!r}; known: {self.scenarios}")
        with self._lock:
            row = self.cells.setdefault(peer, {})
            if row.get(scenario) != "FAIL":
                row[scenario] = status

    @contextlib.contextmanager
    def cell(self, peer: str, scenario: str, passed: str = "PASS") -> Iterator[None]:
        """Record ``passed`` if the block completes, FAIL (and re-raise) if it raises."""
        try:
            yield
        except BaseException:
            self.set(peer, scenario, "FAIL")
            raise
        self.set(peer, scenario, passed)

    def render(self) -> list[str]:
        """The table as text lines (empty when nothing was recorded)."""
        with self._lock:
            rows = {peer: dict(row) for peer, row in self.cells.items()}
        if not rows:
            return []
        width = max(len(p) for p in rows)
        scenarios = self.scenarios
        cols = [max(len(s), 5) for s in scenarios]
        header = (
            " " * width
            + " | "
            + " | ".join(s.ljust(c) for s, c in zip(scenarios, cols, strict=True))
        )
        lines = [header, "-" * len(header)]
        for peer, row in rows.items():
            pairs = zip(scenarios, cols, strict=True)
            cells = " | ".join(row.get(s, "-").ljust(c) for s, c in pairs)
            lines.append(peer.ljust(width) + " | " + cells)
        return lines

    def write_section(self, terminalreporter: pytest.TerminalReporter, title: str) -> bool:
        """Print the table as the terminal-summary section ``title``; False when it is empty."""
        lines = self.render()
        if not lines:
            return False
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
        return True

    def to_json(self) -> dict[str, Any]:
        """``{"scenarios": [...], "peers": {peer: {scenario: verdict}}}``."""
        with self._lock:
            return {
                "scenarios": list(self.scenarios),
                "peers": {
                    p: {s: r.get(s, "-") for s in self.scenarios} for p, r in self.cells.items()
                },
            }


MATRIX = Matrix()
"""The one matrix of this pytest process."""


def save_json(
    terminalreporter: pytest.TerminalReporter, folder: str, payload: dict[str, Any]
) -> Path | None:
    """Save ``payload`` as ``matrix.json`` in pytest's cache folder ``folder``; its path
    (``None`` when the cache is disabled)."""
    cache = getattr(terminalreporter.config, "cache", None)
    if cache is None:
        return None
    out = Path(str(cache.mkdir(folder))) / "matrix.json"
    out.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return out
