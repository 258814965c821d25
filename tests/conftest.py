"""Suite-wide markers by location: ``interop`` for ``tests/interop`` (real peers, installed on
first use), ``slow`` for the long soak and size runs. ``field`` is set by ``tests/field``.

A quick offline subset: ``python -m pytest -m "not interop and not field and not slow"``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
