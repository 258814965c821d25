"""``ConsumerThread``: in order, off the caller's thread, bounded hand-off, flush."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from rxacp.client.consumers import ConsumerThread

pytestmark = pytest.mark.timeout(30)

WAIT = 10.0


def test_calls_run_in_order_on_one_named_thread_and_flush_waits_for_them() -> None:
    thread = ConsumerThread(name="test-consumer")
    seen: list[tuple[int, str]] = []

    def record(i: int) -> None:
        seen.append((i, threading.current_thread().name))

    for i in range(20):
        assert thread.submit(partial(record, i)) is None
    assert thread.flush(WAIT)
    assert seen == [(i, "test-consumer") for i in range(20)]
    thread.stop()


def test_at_the_bound_the_hand_off_returns_an_observable_that_completes_once_the_call_ran() -> None:
    thread = ConsumerThread(bound=2)
    started, release, ran = threading.Event(), threading.Event(), []

    def blocking() -> None:
        started.set()
        release.wait(WAIT)

    assert thread.submit(blocking) is None
    assert started.wait(WAIT)  # running, so no longer queued: the queue is empty
    assert thread.submit(lambda: ran.append(2)) is None
    hold = thread.submit(lambda: ran.append(3))
    assert hold is not None, "the second queued call reaches the bound"
    done = threading.Event()
    hold.subscribe(on_completed=done.set)
    assert not done.is_set(), "the engine must wait while the consumer is behind"
    release.set()
    assert done.wait(WAIT) and ran == [2, 3]
    thread.stop()


def test_a_failing_call_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    thread = ConsumerThread()
    after: list[int] = []
    with caplog.at_level("ERROR", logger="rxacp.client"):
        thread.submit(lambda: 1 / 0)
        thread.submit(lambda: after.append(1))
        assert thread.flush(WAIT)
    assert after == [1] and "ZeroDivisionError" in caplog.text
    thread.stop()


def test_after_stop_nothing_is_accepted_but_the_queued_calls_still_run() -> None:
    thread = ConsumerThread()
    release, ran = threading.Event(), []
    thread.submit(lambda: release.wait(WAIT))
    thread.submit(lambda: ran.append("queued"))
    thread.stop()
    assert thread.submit(lambda: ran.append("late")) is None
    release.set()
    assert thread.flush(WAIT)
    assert ran == ["queued"]


def test_flush_from_the_consumer_thread_itself_returns_at_once() -> None:
    thread = ConsumerThread()
    results: list[bool] = []
    thread.submit(lambda: results.append(thread.flush(WAIT)))
    assert thread.flush(WAIT) and results == [True]
    thread.stop()
