"""``benchmarks/cold_start.py`` times spawn -> initialize answer and reports medians."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "cold_start", ROOT / "benchmarks" / "cold_start.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ANSWERS = (
    "import sys; sys.stdin.readline(); "
    'print(\'{"jsonrpc": "2.0", "id": 0, "result": {}}\', flush=True)'
)


def test_once_returns_the_seconds_until_the_initialize_answer_line() -> None:
    bench = _module()
    assert bench.once([sys.executable, "-c", ANSWERS]) > 0


def test_an_agent_that_exits_without_answering_is_an_error_naming_it() -> None:
    bench = _module()
    with pytest.raises(RuntimeError, match="without answering initialize"):
        bench.once([sys.executable, "-c", "pass"])


def test_measure_alternates_agents_and_the_table_shows_median_min_max_per_agent() -> None:
    bench = _module()
    agents = {"a": [sys.executable, "-c", ANSWERS], "b": [sys.executable, "-c", ANSWERS]}
    result = bench.measure(2, agents)
    assert [len(v) for v in result["agents"].values()] == [2, 2]
    assert len(result["import_rxacp_schema"]) == 2
    table = bench.table({"agents": {"a": [0.3, 0.1, 0.2]}, "import_rxacp_schema": [0.05]})
    assert "| a | 0.200 | 0.100 | 0.300 | 3 |" in table
    assert "`import rxacp.schema`" in table


def test_the_benchmark_starts_rxacp_from_cached_bytecode_like_an_installed_package() -> None:
    # pip compiles an installed package (the official SDK's, pydantic's); an editable rxacp
    # under PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module at every start.
    bench = _module()
    bench.compile_rxacp()
    sources = sorted((ROOT / "rxacp").rglob("*.py"))
    missing = [
        str(p) for p in sources if not Path(importlib.util.cache_from_source(str(p))).exists()
    ]
    assert sources and missing == []
