"""Suite-wide markers by location: ``interop`` for ``tests/interop`` (real peers, installed on
first use), ``slow`` for the long soak and size runs. ``field`` is set by ``tests/field``.

A quick offline subset: ``python -m pytest -m "not interop and not field and not slow"``.

Suite-wide fixtures ``harnesses`` and ``peers``: a list the test appends what it starts to
(agent harnesses, raw peer processes); each is closed after the test.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("RXACP_TEST_LOOP") == "uvloop":  # the suite once more on uvloop (.ci/run)
    import uvloop

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

_HERE = Path(__file__).parent
_SLOW = {
    _HERE / "reliability" / "test_soak.py",
    _HERE / "reliability" / "test_amplification.py",
    _HERE / "reliability" / "test_sizes.py",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    interop = _HERE / "interop"
    for item in items:
        path = Path(str(item.fspath))
        if interop in path.parents:
            item.add_marker(pytest.mark.interop)
        if path in _SLOW:
            item.add_marker(pytest.mark.slow)


def _closed_after_the_test() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for item in started:
        item.close()


harnesses = pytest.fixture(_closed_after_the_test, name="harnesses")
peers = pytest.fixture(_closed_after_the_test, name="peers")
