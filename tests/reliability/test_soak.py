"""Item 9: soak. Random prompts, cancels, request timeouts and agent restarts for a while.

Short by default (a few seconds, CI); ``RXACP_LONG=1`` runs ``RXACP_SOAK_SECONDS`` (default
300). Measured: the RSS slope of the process over the second half of the run, the pending maps
at idle and the thread count against the baseline.
"""

from __future__ import annotations

import gc
import os
import random
import threading
import time
from typing import Any

from rxacp.agent import AcpAgent, SyncPromptContext
from rxacp.errors import AcpException
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.session.workers import WorkerPoolStats
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import LONG, Figure, rss_kib, rxacp_threads, wait_until

NO_STATS = WorkerPoolStats(0, 0, 0, 1)

SECONDS = float(os.environ.get("RXACP_SOAK_SECONDS", "300")) if LONG else 6.0


def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    words = req.prompt_text().split()
    for i in range(int(words[0])):
        if ctx.is_cancelled():
            break
        ctx.send_message(f"{i} ")
    if words[1] == "slow":
        threading.Event().wait(0.2)  # a handler doing slow work (the request may time out)
    return PromptResponse.end_turn()


class Connection:
    def __init__(self) -> None:
        pair = InMemoryTransportPair.create()
        self.agent = (
            AcpAgent.sync(pair.agent_transport)
            .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
            .prompt_handler(prompt)
            .cancel_grace_period(1.0)
            .build()
        )
        self.agent.start()
        assert self.agent.session.worker_stats() is not None  # the default pool
        self.client = AcpSession(pair.client_transport, role="client")
        self.client.set_notification_handler("session/update", lambda n: None)
        wait_for(self.client.send_request("session/new", {"cwd": "/", "mcpServers": []}), 30.0)

    def idle(self) -> bool:
        return (
            self.client.pending_request_count == 0
            and self.agent.session.incoming_request_count == 0
            and self.agent.active_turns == 0
            and (self.agent.session.worker_stats() or NO_STATS).busy == 0
        )

    def close(self) -> None:
        self.client.close()
        self.agent.close()


def test_soak_of_prompts_cancels_timeouts_and_restarts_keeps_memory_and_threads_flat(
    figure: Figure,
) -> None:
    rnd = random.Random(99)
    threads_before = len(rxacp_threads())
    conn = Connection()
    samples: list[tuple[float, int]] = []
    counts = {"prompts": 0, "cancels": 0, "timeouts": 0, "restarts": 0, "idle_checks": 0}
    start = time.monotonic()
    while time.monotonic() - start < SECONDS:
        action = rnd.random()
        if action < 0.05:
            conn.close()
            conn = Connection()
            counts["restarts"] += 1
            continue
        slow = action < 0.15
        timeout = 0.05 if slow else None
        request = PromptRequest.text("s1", f"{rnd.randrange(0, 30)} {'slow' if slow else 'fast'}")
        pending = conn.client.send_request("session/prompt", request, timeout=timeout)
        counts["prompts"] += 1
        if action < 0.4 and not slow:
            conn.client.send_notification("session/cancel", {"sessionId": "s1"})
            counts["cancels"] += 1
        try:
            wait_for(pending, 30.0)
        except AcpException as exc:
            assert isinstance(exc, TimeoutError), repr(exc)
            counts["timeouts"] += 1
        if counts["prompts"] % 50 == 0:
            assert wait_until(conn.idle, 30.0), "pending work left at idle"
            counts["idle_checks"] += 1
            gc.collect()
            samples.append((time.monotonic() - start, rss_kib(os.getpid())))
    assert wait_until(conn.idle, 30.0)
    conn.close()
    assert wait_until(lambda: len(rxacp_threads()) <= threads_before, 30.0), rxacp_threads()
    half = samples[len(samples) // 2 :]
    slope = _slope(half) * 60 / 1024  # MiB per minute
    for key, value in counts.items():
        figure(key, value)
    figure("seconds", SECONDS)
    figure("rss_slope_second_half_mib_per_min", round(slope, 2))
    figure("rss_first_last_kib", (samples[0][1], samples[-1][1]))
    figure("thread_delta", len(rxacp_threads()) - threads_before)
    assert counts["timeouts"] > 0 and counts["restarts"] > 0 and counts["cancels"] > 0
    assert slope < (2.0 if LONG else 20.0), slope


def _slope(points: list[tuple[float, Any]]) -> float:
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    var = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / var if var else 0.0
