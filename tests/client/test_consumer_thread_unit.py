"""``ConsumerThread``: in order, off the loop, bounded hand-off, flush; with ``caller_runs`` a
waiting caller runs the queued calls itself."""

from __future__ import annotations

import functools
import threading
from functools import partial

import pytest

from rxacp.client.consumers import ConsumerThread

from ..polling import wait_until

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


# ---------------------------------------------------------------------------- caller runs
def _wait_in(thread: ConsumerThread, event: threading.Event, out: list[bool]) -> threading.Thread:
    waiter = threading.Thread(
        target=lambda: out.append(thread.wait_helping(event, WAIT)), name="caller"
    )
    waiter.start()
    assert wait_until(lambda: thread.waiting_callers == 1, WAIT)
    return waiter


def test_a_call_queued_while_a_caller_waits_runs_on_that_caller_not_the_consumer_thread() -> None:
    thread = ConsumerThread(name="test-consumer", caller_runs=True)
    seen: list[tuple[int, str, bool]] = []
    wakeup, out = thread.new_wakeup(), list[bool]()
    caller = _wait_in(thread, wakeup, out)

    def record(i: int) -> None:
        seen.append((i, threading.current_thread().name, thread.on_thread()))

    for i in range(3):
        thread.submit(functools.partial(record, i))
    wakeup.set()  # "the answer": the caller returns once the calls queued before it ran
    caller.join(WAIT)
    assert out == [True]
    assert seen == [(0, "caller", True), (1, "caller", True), (2, "caller", True)]
    assert thread.waiting_callers == 0
    thread.stop()


def test_calls_stay_in_order_and_one_at_a_time_when_a_caller_and_the_thread_share_them() -> None:
    thread = ConsumerThread(name="test-consumer", caller_runs=True)
    started, release = threading.Event(), threading.Event()
    seen: list[tuple[int, str]] = []
    running = [0]

    def call(i: int) -> None:
        running[0] += 1
        assert running[0] == 1, "two consumer calls ran at once"
        seen.append((i, threading.current_thread().name))
        if i == 0:
            started.set()
            assert release.wait(WAIT)
        running[0] -= 1

    thread.submit(lambda: call(0))  # nobody waits: the consumer thread takes it
    assert started.wait(WAIT)
    wakeup, out = thread.new_wakeup(), list[bool]()
    caller = _wait_in(thread, wakeup, out)
    for i in range(1, 4):
        thread.submit(functools.partial(call, i))
    wakeup.set()
    release.set()
    caller.join(WAIT)
    assert out == [True]
    assert [i for i, _ in seen] == [0, 1, 2, 3]
    assert seen[0][1] == "test-consumer"
    assert {name for _, name in seen} <= {"test-consumer", "caller"}
    thread.stop()


def test_a_caller_that_gives_up_waiting_leaves_the_queued_calls_to_the_consumer_thread() -> None:
    thread = ConsumerThread(name="test-consumer", caller_runs=True)
    entered, release, second_ran = threading.Event(), threading.Event(), threading.Event()
    ran: list[str] = []

    def first() -> None:
        entered.set()
        assert release.wait(WAIT)

    def second() -> None:
        ran.append(threading.current_thread().name)
        second_ran.set()

    thread.submit(first)  # nobody waits: the consumer thread runs it (and blocks)
    assert entered.wait(WAIT)
    wakeup, out = thread.new_wakeup(), list[bool]()
    waiter = threading.Thread(target=lambda: out.append(thread.wait_helping(wakeup, 0.2)))
    waiter.start()
    assert wait_until(lambda: thread.waiting_callers == 1, WAIT)
    thread.submit(second)  # queued behind the running call
    waiter.join(WAIT)  # the caller's wait times out
    assert out == [False] and thread.waiting_callers == 0
    release.set()
    assert second_ran.wait(WAIT), "the queued call was stranded"
    assert ran == ["test-consumer"]
    thread.stop()


def test_without_caller_runs_a_waiting_caller_only_waits() -> None:
    thread = ConsumerThread(name="test-consumer")
    seen: list[str] = []
    wakeup = thread.new_wakeup()
    thread.submit(lambda: seen.append(threading.current_thread().name))
    wakeup.set()
    assert thread.wait_helping(wakeup, WAIT)
    assert thread.flush(WAIT) and seen == ["test-consumer"]
    thread.stop()
