"""Client back-pressure (issue 14 item 3): a client whose consumer falls behind stops reading
the agent's stdout past a bound instead of queueing the stream in memory.

A separate client process (``peers/slow_consumer_client.py``) consumes a long stream of 450 B
updates with an Observable that completes later; its peak RSS over the idle client must stay
within 16 MiB whatever the stream length (before the bound: 40,000 updates took it +44 MiB,
200,000 updates +226 MiB), and every update must arrive, in order, before the answer.

Issue 30 item 1: an agent that asks for a large file many times and never reads the answers
(``peers/unread_answers_agent.py``) must not make the client queue them without limit: the
engine holds the agent's requests while the client's stdin buffer is over its high-water mark,
runs at most ``max_workers`` of one method at once, and stops reading once too many are held.
300 reads of a 1 MiB file took the sync client +1,070 MiB (given up at +768) and the async one
+437 MiB before; the official Python SDK 0.12.1 +615 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
import reactivex

from rxacp.client import AcpClient, WorkspaceFileSystem
from rxacp.schema import PromptRequest, SessionNotification
from rxacp.session.blocking import wait_for
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests._notes import chunk_text

from .conftest import FLOOD, Figure, agent_env, scaled

CLIENT = os.path.join(os.path.dirname(__file__), "peers", "slow_consumer_client.py")
UNREAD_CLIENT = os.path.join(os.path.dirname(__file__), "peers", "unread_answers_client.py")
READS = scaled(300, 1500)
FILE_BYTES = 1024 * 1024
UNREAD_GROWTH_BOUND_KIB = 256 * 1024
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


@pytest.mark.timeout(scaled(300, 1200))  # 5 s each on an idle 2-core box
@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_client_whose_agent_never_reads_its_answers_keeps_its_memory_bounded(
    figure: Figure, style: str
) -> None:
    done = subprocess.run(
        [sys.executable, UNREAD_CLIENT, str(READS), str(FILE_BYTES), style],
        capture_output=True,
        timeout=scaled(240, 1100),
        env={**os.environ, **agent_env()},
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    growth = result["rss_peak_kib"] - result["rss_idle_kib"]
    figure("file_reads_unread", READS)
    figure(f"client_rss_growth_{style}_kib", growth)
    figure("client_requests_held_max", result["held_max"])
    assert not result["gave_up"], result  # it stopped growing (before: past +768 MiB)
    assert growth <= UNREAD_GROWTH_BOUND_KIB, result
    assert result["read_pauses"] >= 1 and result["held_max"] > 0  # held, then stopped reading
    # once the agent reads, every request is answered with the whole file: nothing dropped
    assert result["answered"] == READS and result["complete"] == READS, result


MIXED_UPDATES = scaled(10_000, 100_000)
MIXED_READS = 8


@pytest.mark.slow
@pytest.mark.timeout(scaled(240, 1200))  # 20 s on an idle 2-core box
def test_an_agent_streaming_while_the_client_answers_large_reads_never_deadlocks_the_two(
    tmp_path: Any, figure: Figure
) -> None:
    """Both sides back-pressured at once: the rxacp agent stops reading stdin while its stdout
    is full; the client holds the agent's requests while its stdin is full but keeps reading
    (stopping at once too would make each wait for the other). A slow consumer makes the
    client's reading lag, so the agent's stdout fills while answers of 2 MiB fill stdin."""
    path = tmp_path / "big.txt"
    path.write_text(("y" * 99 + "\n") * (2 * 1024 * 1024 // 100))
    seen: list[str] = []
    holder: dict[str, Any] = {}

    def consume(note: SessionNotification) -> reactivex.Observable[int]:
        seen.append(chunk_text(note))
        return reactivex.timer(0.0002, scheduler=holder["scheduler"])  # a consumer that lags

    transport = StdioAcpClientTransport(AgentParameters(sys.executable, [FLOOD], env=agent_env()))
    builder = AcpClient.async_(transport).session_update_consumer(consume)
    client = WorkspaceFileSystem(str(tmp_path)).install(builder).build()
    holder["scheduler"] = client.session.scheduler
    try:
        client.initialize().run()
        sid = client.new_session({"cwd": str(tmp_path), "mcpServers": []}).run().session_id
        text = f"mixed {MIXED_UPDATES} 512 {MIXED_READS} {path}"
        answer = wait_for(client.prompt(PromptRequest.text(sid, text)), scaled(180, 1100))
        stats = client.session.stats
    finally:
        client.close()
    figure("updates_streamed_during_reads", MIXED_UPDATES)
    figure("client_read_pauses", stats.read_pauses)
    figure("client_requests_held", stats.requests_held)
    assert answer.stop_reason == "end_turn"
    assert stats.read_pauses > 0  # the client's reading lagged: the agent's stdout filled
    assert stats.requests_held > 0  # and its stdin was full: the agent's reads were held
    assert [int(t[:9]) for t in seen[:-1]] == list(range(MIXED_UPDATES))  # in order, all
    assert seen[-1] == f"read {4 * MIXED_READS * path.stat().st_size} in {4 * MIXED_READS}"
