"""The field matrix: production agent/client x scenario -> PASS / FAIL / QUIRK, plus the quirks.

The table itself is the interop suite's :class:`~tests.interop.matrix.Matrix` with the field
columns; :data:`QUIRKS` collects, per cell marked ``QUIRK``, what the peer does and the
evidence the test asserted (a quirk is never a hidden failure: the test pins the behaviour, so
it fails the day the peer changes). Printed by ``tests/field/conftest.py``.

This module is *not* responsible for running peers or asserting anything.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.interop.matrix import Matrix

__all__ = ["FIELD_MATRIX", "FIELD_SCENARIOS", "QUIRK", "QUIRKS", "Quirks"]

FIELD_SCENARIOS: tuple[str, ...] = (
    "initialize",
    "new_session",
    "stream",
    "stream_80",
    "read_file",
    "write_file",
    "run_shell",
    "permission_allow",
    "permission_reject",
    "cancel",
    "dispose_then_prompt",
    "strict_validation",
    "close_no_leftovers",
    "rxacp_check",
)
"""The columns, in order."""

QUIRK = "QUIRK"
"""Verdict of a cell where the peer deviates in a known, asserted way (see :data:`QUIRKS`)."""


class Quirks:
    """``(peer, scenario) -> (what, evidence)``; thread safe; rendered below the table."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], tuple[str, str]] = {}
        self._lock = threading.Lock()

    def add(self, peer: str, scenario: str, what: str, evidence: str) -> None:
        """Record one quirk (the last evidence for a cell wins)."""
        with self._lock:
            self._items[(peer, scenario)] = (what, evidence)

    def render(self) -> list[str]:
        """``- peer / scenario: what (evidence)`` lines."""
        with self._lock:
            items = sorted(self._items.items())
        return [f"- {p} / {s}: {what} [evidence: {ev}]" for (p, s), (what, ev) in items]

    def to_json(self) -> list[dict[str, Any]]:
        """The quirks as a list of objects."""
        with self._lock:
            items = sorted(self._items.items())
        return [
            {"peer": p, "scenario": s, "what": what, "evidence": ev} for (p, s), (what, ev) in items
        ]


FIELD_MATRIX = Matrix(FIELD_SCENARIOS)
"""The field matrix of this pytest process."""

QUIRKS = Quirks()
"""The quirks of this pytest process."""
