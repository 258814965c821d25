"""The outbound gate: producer threads wait at the queue limit and are released per batch."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from rxacp.session.backpressure import MAX_QUEUED_WRITES, GatedRunner, OutboundGate
from rxacp.session.stats import SessionStats

pytestmark = pytest.mark.timeout(20)


class _WatchedStats(SessionStats):
    """Signals when a producer thread starts waiting on the gate."""

    __slots__ = ("blocked",)

    def __init__(self) -> None:
        super().__init__()
        self.blocked = threading.Event()

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name == "producer_waits" and value:
            self.blocked.set()


def test_a_producer_at_the_limit_waits_until_the_loop_ran_the_batch_then_all_hand_offs_run() -> (
    None
):
    stats = _WatchedStats()
    gate = OutboundGate(2, stats)
    runner = GatedRunner(None, name="test-loop", gate=gate)
    release_loop = threading.Event()
    loop_busy = threading.Event()
    ran: list[int] = []
    returned: list[int] = []
    all_ran = threading.Event()

    def occupy_loop() -> None:
        loop_busy.set()
        release_loop.wait(10)

    def hand_off(i: int) -> None:
        ran.append(i)
        if len(ran) == 5:
            all_ran.set()

    def producer() -> None:
        for i in range(5):
            runner.call_later(partial(hand_off, i))
            returned.append(i)

    try:
        runner.call(occupy_loop)  # the loop is busy: nothing queued can run yet
        assert loop_busy.wait(5)
        thread = threading.Thread(target=producer)
        thread.start()
        assert stats.blocked.wait(5)  # the third hand-off waits at the limit of 2
        assert returned == [0, 1] and ran == []
        release_loop.set()
        assert all_ran.wait(5)
        thread.join(5)
        assert ran == [0, 1, 2, 3, 4] and returned == [0, 1, 2, 3, 4]
        waits = stats.producer_waits  # limit 2, 5 hand-offs: blocked once per full batch
        assert waits >= 1
        done = threading.Event()
        runner.call_later(done.set)  # the count went back down: no wait for a new hand-off
        assert done.wait(5) and stats.producer_waits == waits
    finally:
        release_loop.set()
        runner.stop()


def test_four_producers_through_a_small_gate_all_finish_in_their_own_order() -> None:
    gate = OutboundGate(8, SessionStats())
    runner = GatedRunner(None, name="test-loop", gate=gate)
    seen: dict[int, list[int]] = {p: [] for p in range(4)}
    finished = threading.Event()
    total = [0]

    def hand_off(p: int, i: int) -> None:  # runs on the loop thread only
        seen[p].append(i)
        total[0] += 1
        if total[0] == 4 * 2000:
            finished.set()

    def producer(p: int) -> None:
        for i in range(2000):
            runner.call_later(partial(hand_off, p, i))

    threads = [threading.Thread(target=producer, args=(p,)) for p in range(4)]
    try:
        for t in threads:
            t.start()
        assert finished.wait(15)
        for t in threads:
            t.join(5)
        assert all(seen[p] == list(range(2000)) for p in range(4))
    finally:
        runner.stop()


def test_a_default_session_holds_a_producer_thread_to_64_writes_waiting_for_the_loop() -> None:
    # The small default bound is also the GIL hand-over: with 1024 a streaming producer kept
    # the GIL for CPython's whole 5 ms switch interval and queued hundreds of writes first.
    from rxacp.session import AcpSession
    from tests.session.conftest import ScriptedTransport

    session = AcpSession(ScriptedTransport(), role="agent")
    session.start()
    produced = 0
    ran = 0
    backlogs: list[int] = []
    finished = threading.Event()

    def hand_off() -> None:  # runs on the loop thread only
        nonlocal ran
        ran += 1
        backlogs.append(produced - ran)
        if ran == 2000:
            finished.set()

    def producer() -> None:
        nonlocal produced
        for _ in range(2000):
            session.queue_on_loop(hand_off)
            produced += 1

    thread = threading.Thread(target=producer)
    try:
        thread.start()
        assert finished.wait(15)
        thread.join(5)
        assert MAX_QUEUED_WRITES == 64
        assert max(backlogs) <= MAX_QUEUED_WRITES, max(backlogs)
    finally:
        session.close()
