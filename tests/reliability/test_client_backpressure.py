"""Client back-pressure (issue 14 item 3): a client whose consumer falls behind stops reading
the agent's stdout past a bound instead of queueing the stream in memory.

A separate client process (``peers/slow_consumer_client.py``) consumes a long stream of 450 B
updates with an Observable that completes later; its peak RSS over the idle client must stay
within 16 MiB whatever the stream length (before the bound: 40,000 updates took it +44 MiB,
200,000 updates +226 MiB), and every update must arrive, in order, before the answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import Figure, agent_env, scaled

CLIENT = os.path.join(os.path.dirname(__file__), "peers", "slow_consumer_client.py")
UPDATES = scaled(40_000, 200_000)
UPDATE_SIZE = 450
GROWTH_BOUND_KIB = 16 * 1024


@pytest.mark.slow
@pytest.mark.timeout(scaled(300, 2000))  # 17 s on a 2-core box at load 5, 71 s at load 8
def test_a_client_with_a_slow_consumer_keeps_its_memory_bounded(figure: Figure) -> None:
    done = subprocess.run(
        [sys.executable, CLIENT, str(UPDATES), str(UPDATE_SIZE), "0"],
        capture_output=True,
        timeout=scaled(240, 1800),
        env={**os.environ, **agent_env()},
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    growth = result["rss_peak_kib"] - result["rss_idle_kib"]
    figure("updates_streamed", UPDATES)
    figure("client_rss_idle_kib", result["rss_idle_kib"])
    figure("client_rss_growth_with_slow_consumer_kib", growth)
    figure("client_read_pauses", result["read_pauses"])
    assert result["received"] == UPDATES and result["disorder"] == 0  # nothing lost or reordered
    assert result["stop_reason"] == "end_turn"
    assert result["read_pauses"] > 0  # the bound was reached: reading paused
    assert growth <= GROWTH_BOUND_KIB, growth
