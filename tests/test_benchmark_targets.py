"""``benchmarks/run.py`` reports issue 8's targets as met / not met from same-run ratios."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _run_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _speed(rate: float, client: float, agent: float) -> dict[str, float]:
    return {"rate": rate, "client_cpu_us": client, "agent_cpu_us": agent}


def test_targets_compare_each_rxacp_api_with_the_official_sdk_of_the_same_run() -> None:
    run = _run_module()
    summary = {
        "rt": {
            "rxacp-async": _speed(6000, 40, 40),  # 2.0x rate, 0.4x CPU, 0.6x floor
            "rxacp-sync": _speed(2900, 150, 160),  # 0.97x rate, 1.03x CPU
            "official": _speed(3000, 150, 150),
            "floor": _speed(10000, 30, 30),
        },
        "stream200k": {
            "rxacp-async": {
                **_speed(90000, 7, 4),
                "client_growth_kib": 10,
                "agent_growth_kib": 3000,
            },
            "official": _speed(45000, 21, 21),
        },
        "cancel_session": {"rxacp-async": {"p50_ms": 0.1, "p99_ms": 12.0}},
        "idle": {"rxacp-async": {"client_extra_kib": 100, "agent_extra_kib": 50}},
    }
    rows = {
        tuple(cell.strip() for cell in line.strip("|").split("|"))
        for line in run.targets(summary).splitlines()[2:]
    }
    assert ("rt rate ≥ 2.0x official", "rxacp-async", "2.00x", "met") in rows
    assert ("rt CPU per message ≤ 0.5x official", "rxacp-async", "0.27x", "met") in rows
    assert ("rt rate ≥ 0.5x floor", "rxacp-async", "0.60x", "met") in rows
    assert ("rt rate ≥ 2.0x official", "rxacp-sync", "0.97x", "NOT met") in rows
    assert ("rt CPU per message ≤ 0.5x official", "rxacp-sync", "1.03x", "NOT met") in rows
    assert ("stream200k rate ≥ 2.0x official", "rxacp-async", "2.00x", "met") in rows
    growth = ("flat memory streaming 200k (growth < 2 MiB)", "rxacp-async", "2.9 MiB", "NOT met")
    assert growth in rows
    cancel = ("cancel_session p50 ≤ 2 ms, p99 ≤ 10 ms", "rxacp-async", "0.10 / 12.00 ms", "NOT met")
    assert cancel in rows
    assert ("1,000 idle sessions < 50 MiB extra", "rxacp-async", "0.10 MiB", "met") in rows
