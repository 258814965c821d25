"""The migration guide's Reactor → RxPY table is backed by tested snippets: each row names a
``row_*`` function of ``examples/reactor_to_rxpy.py``, each function is in the table once, and
each runs (asserting what the Java idiom gives)."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "migration-from-java.md"

pytestmark = pytest.mark.timeout(60)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "reactor_to_rxpy", ROOT / "examples" / "reactor_to_rxpy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SNIPPETS = _load()
ROWS: dict[str, Callable[[], None]] = SNIPPETS.ROWS


def _table_rows() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Reactor → RxPY", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\|.*`(row_\w+)`.*\|$", section, re.M)


def test_every_table_row_names_a_snippet_and_every_snippet_is_in_the_table_once() -> None:
    named = _table_rows()
    assert len(named) >= 15
    assert sorted(named) == sorted(ROWS), "the table and examples/reactor_to_rxpy.py differ"


def test_the_table_covers_the_idioms_the_java_sdk_uses_most() -> None:
    section = GUIDE.read_text(encoding="utf-8").split("## Reactor → RxPY", 1)[1]
    for idiom in (
        "Mono.just",
        ".then(",
        "Mono.empty",
        ".doOnNext",
        "StepVerifier",
        "Mono.error",
        ".flatMap",
        ".block(",
        ".toFuture",
        ".timeout",
    ):
        assert idiom in section, idiom


@pytest.mark.parametrize("name", sorted(ROWS))
def test_each_snippet_runs_and_gives_what_the_java_idiom_gives(name: str) -> None:
    ROWS[name]()
