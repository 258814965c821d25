"""Property: with many concurrent submitters, a queued task always has a worker that will take
it, or the pool is at ``max_workers`` (issue 22) — and so a burst runs ``min(n, max)`` at once."""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rxacp.session.workers import WorkerPool, WorkerPoolStats

pytestmark = pytest.mark.timeout(240)

WAIT = 10.0


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    max_workers=st.integers(1, 6),
    submitters=st.integers(1, 8),
    per_submitter=st.integers(1, 4),
    warm_workers=st.integers(0, 3),
    idle_seconds=st.sampled_from([0.0005, 0.005, 30.0]),
)
def test_concurrent_submitters_never_leave_a_queued_task_without_a_worker(
    max_workers: int, submitters: int, per_submitter: int, warm_workers: int, idle_seconds: float
) -> None:
    pool = WorkerPool(max_workers, name="prop-worker", idle_seconds=idle_seconds)
    broken: list[WorkerPoolStats] = []
    cond = threading.Condition()
    running = [0, 0]  # [running now, finished]
    release = threading.Event()

    def check() -> None:
        snapshot = pool.stats()
        if not snapshot.invariant_holds:
            broken.append(snapshot)

    def task() -> None:
        check()
        with cond:
            running[0] += 1
            cond.notify_all()
        release.wait(WAIT)
        with cond:
            running[0] -= 1
            running[1] += 1
            cond.notify_all()

    # Some workers that ran a quick task and are idle (or, with a tiny idle_seconds, exiting
    # right now: the race between a worker's idle timeout and a submit).
    warm = [threading.Event() for _ in range(warm_workers)]
    for event in warm:
        pool.submit(event.set)
    for event in warm:
        assert event.wait(WAIT)

    start = threading.Barrier(submitters + 1)

    def submitter() -> None:
        start.wait(WAIT)
        for _ in range(per_submitter):
            pool.submit(task)
            check()

    threads = [threading.Thread(target=submitter) for _ in range(submitters)]
    for thread in threads:
        thread.start()
    start.wait(WAIT)
    for _ in range(200):
        check()
    for thread in threads:
        thread.join(WAIT)

    total = submitters * per_submitter
    expected = min(total, max_workers)
    try:
        with cond:
            reached = cond.wait_for(lambda: running[0] >= expected, WAIT)
        assert reached, f"{running[0]} of {expected} ran at once; {pool.stats()}"
        assert running[0] == expected
        check()
    finally:
        release.set()
        with cond:
            assert cond.wait_for(lambda: running[1] == total, WAIT)
        pool.shutdown()
    assert not broken, broken[:3]
