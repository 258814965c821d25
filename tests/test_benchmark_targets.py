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


def _rows(text: str) -> set[tuple[str, ...]]:
    return {
        tuple(cell.strip() for cell in line.strip("|").split("|")) for line in text.splitlines()[2:]
    }


def test_idiomatic_targets_compare_observable_code_and_the_reference_agent_with_tuned_code() -> (
    None
):
    run = _run_module()
    summary = {
        "rt": {
            "rxacp-async": _speed(6000, 100, 80),
            "rxacp-sync": _speed(4000, 150, 160),
            "official": _speed(3000, 150, 150),
            "rx-client": _speed(5000, 120, 80),  # 1.20x the plain client: met
            "rx-agent": _speed(5000, 100, 200),  # 2.50x the plain agent: not met
        },
        "stream200k": {
            "rxacp-async": _speed(120000, 8, 5),
            "rxacp-sync": _speed(90000, 8, 7),
            "official": _speed(45000, 21, 21),
            "rx-client": _speed(20000, 80, 5),  # 10x per update
            "ref-async": _speed(100000, 8, 7),  # 2.22x rate, 1.40x the tuned agent's CPU
            "ref-sync": _speed(80000, 8, 14),  # 1.78x rate, 2.00x CPU
        },
        "slow1000": {"ref-async": {"wall": 1.7, "rate": 588, "client_cpu_us": 80}},
    }
    rows = _rows(run.idiomatic_targets(summary))
    consumer = "Observable consumer ≤ 1.3x plain (client CPU per prompt, rt)"
    assert (consumer, "rx-client", "1.20x (120.0 vs 100.0 µs)", "met") in rows
    streamed = "Observable consumer ≤ 1.3x plain (client CPU per update, stream200k)"
    assert (streamed, "rx-client", "10.00x (80.0 vs 8.0 µs)", "NOT met") in rows
    handler = "Observable prompt handler ≤ 1.3x plain (agent CPU per prompt, rt)"
    assert (handler, "rx-agent", "2.50x (200.0 vs 80.0 µs)", "NOT met") in rows
    rate = "reference agent stream200k rate ≥ 2.0x official"
    assert (rate, "ref-async", "2.22x", "met") in rows
    assert (rate, "ref-sync", "1.78x", "NOT met") in rows
    cpu_async = "reference agent stream200k CPU per update ≤ 1.5x rxacp-async"
    assert (cpu_async, "ref-async", "1.40x (7.0 vs 5.0 µs)", "met") in rows
    cpu_sync = "reference agent stream200k CPU per update ≤ 1.5x rxacp-sync"
    assert (cpu_sync, "ref-sync", "2.00x (14.0 vs 7.0 µs)", "NOT met") in rows
    assert ("rt rate ≥ 2.0x official", "rxacp-async", "2.00x", "met") in rows
    assert ("rt rate ≥ 1.5x official", "rxacp-sync", "1.33x", "NOT met") in rows
    slow = ("1,000 concurrent slow 0.3 turns ≤ 1.5 s", "ref-async", "1.70 s", "NOT met")
    assert slow in rows
    # rows without data are left out, not reported as met
    assert not any(row[1] == "ref-decorators" for row in rows)
