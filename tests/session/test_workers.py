"""``WorkerPool``: blocking tasks submitted together run together (up to ``max_workers``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from rxacp.session.workers import WorkerPool
from tests.polling import wait_until

pytestmark = pytest.mark.timeout(30)

WAIT = 10.0  # generous bound for a loaded 2-core box; never reached when the pool is right


def _signal_then_wait(started: threading.Event, stuck: threading.Event) -> Callable[[], None]:
    """A task that sets ``started`` and then blocks until ``stuck`` is set (bounded)."""

    def task() -> None:
        started.set()
        stuck.wait(WAIT)

    return task


class _Gate:
    """Blocking tasks that record how many run at once and wait until released."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.running = 0
        self.peak = 0
        self.finished = 0
        self.release = threading.Event()

    def task(self) -> None:
        with self._cond:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self._cond.notify_all()
        self.release.wait(WAIT)
        with self._cond:
            self.running -= 1
            self.finished += 1
            self._cond.notify_all()

    def wait_running(self, n: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.running >= n, WAIT)

    def wait_finished(self, n: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.finished >= n, WAIT)


def _pool_with_one_idle_worker(max_workers: int) -> WorkerPool:
    pool = WorkerPool(max_workers, name="test-worker")
    done = threading.Event()
    pool.submit(done.set)
    assert done.wait(WAIT)
    assert wait_until(lambda: pool.thread_count == 1 and pool.busy_count == 0)
    return pool


@pytest.mark.parametrize("n", [2, 3, 8])
def test_tasks_submitted_at_once_to_a_pool_with_one_idle_worker_run_concurrently(n: int) -> None:
    pool = _pool_with_one_idle_worker(max_workers=8)
    gate = _Gate()
    try:
        for _ in range(n):
            pool.submit(gate.task)
        assert gate.wait_running(n), f"only {gate.running} of {n} tasks started"
    finally:
        gate.release.set()
        assert gate.wait_finished(n)
        pool.shutdown()


def test_a_burst_larger_than_max_workers_runs_max_workers_at_once_and_queues_the_rest() -> None:
    pool = _pool_with_one_idle_worker(max_workers=3)
    gate = _Gate()
    try:
        for _ in range(7):
            pool.submit(gate.task)
        assert gate.wait_running(3)
        assert pool.thread_count == 3
        assert gate.running == 3
    finally:
        gate.release.set()
        assert gate.wait_finished(7)
        pool.shutdown()
    assert gate.peak == 3


def test_an_idle_worker_exits_after_idle_seconds_and_the_next_task_still_runs() -> None:
    pool = WorkerPool(2, name="test-worker", idle_seconds=0.01)
    first = threading.Event()
    pool.submit(first.set)
    assert first.wait(WAIT)
    assert wait_until(lambda: pool.thread_count == 0)
    second = threading.Event()
    pool.submit(second.set)
    assert second.wait(WAIT)
    pool.shutdown()


def test_submit_after_shutdown_raises_and_idle_workers_exit() -> None:
    pool = _pool_with_one_idle_worker(max_workers=2)
    pool.shutdown()
    assert wait_until(lambda: pool.thread_count == 0)
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(lambda: None)


def test_worker_threads_are_named_after_the_pool_and_are_daemons() -> None:
    pool = WorkerPool(1, name="rxacp-agent-worker")
    seen: list[threading.Thread] = []
    done = threading.Event()

    def record() -> None:
        seen.append(threading.current_thread())
        done.set()

    pool.submit(record)
    assert done.wait(WAIT)
    pool.shutdown()
    assert seen[0].name == "rxacp-agent-worker-1"
    assert seen[0].daemon


# ------------------------------------------------------------------ abandoned tasks (issue 19.3)
def test_abandoning_a_running_task_gives_its_slot_back_so_the_next_task_runs_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = WorkerPool(1, name="test-worker")
    stuck, started = threading.Event(), threading.Event()
    task = pool.submit(_signal_then_wait(started, stuck), name="prompt handler stubborn")
    assert started.wait(WAIT)
    nxt = threading.Event()
    with caplog.at_level("WARNING", logger="rxacp.session.workers"):
        assert pool.abandon(task)
    assert "prompt handler stubborn" in caplog.text and "given back" in caplog.text
    pool.submit(nxt.set)
    assert nxt.wait(WAIT), "the next task waited for the abandoned one"
    assert pool.stats().abandoned == 1
    stuck.set()
    assert wait_until(lambda: pool.stats().abandoned == 0)
    assert wait_until(lambda: pool.thread_count == 1), (
        "the abandoned thread ends, it does not rejoin"
    )
    pool.shutdown()


def test_abandoned_threads_are_bounded_by_max_abandoned_and_the_refusal_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = WorkerPool(1, name="test-worker", max_abandoned=1)
    stuck = threading.Event()
    started = [threading.Event(), threading.Event()]
    first = pool.submit(_signal_then_wait(started[0], stuck), name="first")
    assert started[0].wait(WAIT)
    assert pool.abandon(first)
    second = pool.submit(_signal_then_wait(started[1], stuck), name="second")
    assert started[1].wait(WAIT)
    with caplog.at_level("WARNING", logger="rxacp.session.workers"):
        assert not pool.abandon(second)
    assert "second" in caplog.text and "stays taken" in caplog.text
    stats = pool.stats()
    assert (stats.threads, stats.abandoned) == (1, 1)
    stuck.set()
    pool.shutdown()


def test_abandon_does_nothing_for_a_task_that_is_done_or_abandoned_already() -> None:
    pool = WorkerPool(1, name="test-worker")
    done = threading.Event()
    task = pool.submit(done.set)
    assert done.wait(WAIT)
    assert wait_until(lambda: task.state == "done")
    assert not pool.abandon(task)
    assert pool.stats().abandoned == 0
    pool.shutdown()


def test_a_lane_whose_workers_are_all_busy_does_not_delay_another_lane() -> None:
    pool = WorkerPool(2, idle_seconds=5.0)
    stuck = threading.Event()
    try:
        started = [threading.Event() for _ in range(3)]
        for event in started:  # two run, the third queues in its lane
            pool.submit(_signal_then_wait(event, stuck), lane="session/prompt")
        assert started[0].wait(WAIT) and started[1].wait(WAIT)
        other = threading.Event()
        pool.submit(other.set, lane="session/new")
        pool.submit(lambda: None)  # the default lane too
        assert other.wait(WAIT)  # not behind the full lane
        lane = pool.lane_stats("session/prompt")
        assert lane is not None and (lane.busy, lane.queued) == (2, 1)
        assert pool.stats().queued >= 1 and pool.lane_stats("nothing") is None
        assert not started[2].is_set()
    finally:
        stuck.set()
        pool.shutdown()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None, lane="session/prompt")  # shutdown reaches every lane


def test_abandoning_a_task_of_a_lane_gives_back_that_lanes_slot() -> None:
    pool = WorkerPool(1, idle_seconds=5.0)
    stuck = threading.Event()
    try:
        started, after = threading.Event(), threading.Event()
        task = pool.submit(_signal_then_wait(started, stuck), lane="x")
        pool.submit(after.set, lane="x")
        assert started.wait(WAIT)
        assert pool.abandon(task)
        assert after.wait(WAIT)
    finally:
        stuck.set()
        pool.shutdown()


def test_an_idle_worker_does_not_keep_what_its_finished_task_held() -> None:
    import gc
    import weakref

    class Prompt:  # stands for a turn's request: a large prompt the handler's closure holds
        pass

    pool = WorkerPool(max_workers=1, idle_seconds=WAIT)
    prompt = Prompt()
    held = weakref.ref(prompt)
    done = threading.Event()

    def handler(request: Prompt = prompt) -> None:
        done.set()

    task = pool.submit(handler)
    del prompt, handler
    try:
        assert done.wait(WAIT)
        assert wait_until(lambda: task.state == "done")
        gc.collect()
        assert held() is None  # the worker waits for more work without the task's callable
    finally:
        pool.shutdown()
