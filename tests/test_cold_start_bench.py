"""``benchmarks/cold_start.py`` times spawn -> initialize answer and reports medians."""

from __future__ import annotations

import importlib.util
import subprocess
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
    assert [len(v) for v in result["imports"].values()] == [2, 2]
    # CPU seconds of each child, spawn to exit (a python start costs well over 1 ms of CPU).
    assert all(0.001 < cpu < 60 for runs in result["agents_cpu"].values() for cpu in runs)
    imports = {"import rxacp.schema": [0.05], "import pydantic, reactivex": [0.04]}
    table = bench.table({"agents": {"a": [0.3, 0.1, 0.2]}, "imports": imports})
    assert "| a | 0.200 | 0.100 | 0.300 | 3 |" in table
    assert "`import rxacp.schema`" in table
    assert "`import pydantic, reactivex`" in table


def test_the_ratios_are_the_readme_agent_over_the_floor_and_the_two_imports() -> None:
    bench = _module()
    result = {
        "agents": {bench.README_AGENT: [0.3, 0.3], bench.FLOOR_INITIALIZE: [0.2, 0.2]},
        "imports": {"import rxacp.schema": [0.1], "import pydantic, reactivex": [0.08]},
    }
    ratios = list(bench.ratios(result).values())
    assert ratios == [pytest.approx(1.5), pytest.approx(1.25)]
    assert "| readme agent / floor (target <= 1.5) | 1.50 |" in bench.table(result)


def test_the_floor_peer_answers_initialize_after_validating_the_request() -> None:
    bench = _module()
    floor = bench.AGENTS[bench.FLOOR_INITIALIZE]
    assert bench.once(floor) > 0
    invalid = subprocess.run(floor, input=b'{"id": 0}\n', capture_output=True, timeout=60)
    assert invalid.returncode != 0 and invalid.stdout == b""
    assert b"ValidationError" in invalid.stderr


def test_importtime_top_lists_the_modules_of_one_start_by_cumulative_time() -> None:
    bench = _module()
    floor = bench.AGENTS[bench.FLOOR_INITIALIZE]
    assert len(bench.importtime_top(floor, top=5)) == 5
    rows = bench.importtime_top(floor, top=100_000)  # every module (the order is timing's)
    assert len(rows) > 5
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    assert any(module.strip() == "pydantic" for _, _, module in rows)


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
