"""Field-suite plumbing: the ``field`` marker, the agents' install, the fake model, the matrix.

* every test under ``tests/field`` gets the ``field`` marker (``pytest -m field`` runs only
  them, ``-m "not field"`` skips the downloads);
* ``field_agents`` (session) runs ``scripts/setup_field_agents.sh`` once and FAILS the tests
  with the script's message when an agent cannot be installed — never a skip;
* ``model_server`` is a fresh :class:`~tests.field.fake_model.FakeModelServer` per test; after
  the test, no request may have tried to leave 127.0.0.1 through it;
* the field matrix (agent/client x scenario -> PASS / FAIL / QUIRK, with versions) and the list
  of quirks with their evidence are printed after the test summary and saved as JSON.

Not responsible for any scenario (``test_*.py``) or agent configuration (``agents.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.field.fake_model import FakeModelServer
from tests.field.matrix import FIELD_MATRIX, QUIRKS
from tests.interop.matrix import save_json
from tests.setup_scripts import run_setup_script

__all__ = [
    "field_agents",
    "model_server",
    "pytest_collection_modifyitems",
    "pytest_terminal_summary",
]

SETUP_TIMEOUT_S = 900.0
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this folder ``field``."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.field)


@pytest.fixture(scope="session")
def field_agents() -> dict[str, str]:
    """Install the pinned production agents; ``{folder: installed version}``. FAILS loudly."""
    stdout = run_setup_script(
        "setup_field_agents.sh",
        timeout=SETUP_TIMEOUT_S,
        needs="the field suite needs its production ACP agents (node/npm and the npm registry)",
    )
    versions = {}
    for line in stdout.splitlines():
        name, _, version = line.partition(" ")
        if version:
            versions[name] = version
    return versions


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    """A fresh fake model server on 127.0.0.1; nothing may have tried to go past it."""
    with FakeModelServer() as server:
        yield server
    assert server.escapes == [], f"an agent tried to reach beyond 127.0.0.1: {server.escapes}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Write the field matrix, the quirks with their evidence, and the JSON copy's path."""
    title = "ACP field matrix (production agents and clients x scenario)"
    if not FIELD_MATRIX.write_section(terminalreporter, title):
        return
    quirks = QUIRKS.render()
    if quirks:
        terminalreporter.write_line("")
        terminalreporter.write_line("QUIRK = a behaviour of that peer, expected and asserted:")
        for line in quirks:
            terminalreporter.write_line(line)
    out = save_json(
        terminalreporter, "field", {**FIELD_MATRIX.to_json(), "quirks": QUIRKS.to_json()}
    )
    if out is not None:
        terminalreporter.write_line(f"(JSON: {out})")
