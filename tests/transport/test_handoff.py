"""Handoff, ReceiverInbox, close_loop: the one hand-off the transports and the engine share."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from typing import Any

from rxacp.session.loop import LoopRunner
from rxacp.transport._handoff import Handoff, ReceiverInbox, close_loop
from rxacp.transport.base import Frame, TransportClosed

_END = object()


class _Recorder:
    """A frame receiver that records what it is told, and on which thread."""

    def __init__(self, expected: int = 0) -> None:
        self.frames: list[Any] = []
        self.closed: list[TransportClosed] = []
        self.threads: set[int] = set()
        self.expected = expected
        self.done = asyncio.Event()

    def on_frame(self, frame: Frame) -> None:
        self.threads.add(threading.get_ident())
        self.frames.append(frame)
        if len(self.frames) == self.expected:
            self.done.set()

    def on_frame_too_large(self, size: int) -> None:
        raise AssertionError("not used")

    def on_closed(self, info: TransportClosed) -> None:
        self.closed.append(info)

    def on_write_paused(self) -> None:
        raise AssertionError("not used")

    def on_write_resumed(self) -> None:
        raise AssertionError("not used")


def _on_item(receiver: Any, item: Any) -> TransportClosed | None:
    if item is _END:
        return TransportClosed("peer closed")
    receiver.on_frame(item)
    return None


def _run_until_idle(loop: asyncio.AbstractEventLoop) -> None:
    for _ in range(3):  # a drain scheduled by a drain's callback runs within three passes
        loop.run_until_complete(asyncio.sleep(0))


def test_items_pushed_before_attach_are_delivered_in_order_once_attached() -> None:
    receiver = _Recorder()
    inbox = ReceiverInbox(_on_item, name="test")
    inbox.push(b"1")
    inbox.push(b"2")
    loop = asyncio.new_event_loop()
    try:
        assert receiver.frames == []
        inbox.attach(loop, receiver)
        inbox.push(b"3", loop)
        _run_until_idle(loop)
    finally:
        loop.close()
    assert receiver.frames == [b"1", b"2", b"3"]


def test_pushes_from_another_thread_arrive_in_push_order_on_the_receiving_loop() -> None:
    receiver = _Recorder(expected=500)
    inbox = ReceiverInbox(_on_item, name="test")
    loop = asyncio.new_event_loop()
    try:
        inbox.attach(loop, receiver)

        def push_all() -> None:
            for i in range(500):
                inbox.push(i)

        pusher = threading.Thread(target=push_all)
        pusher.start()
        pusher.join(10)
        loop.run_until_complete(asyncio.wait_for(receiver.done.wait(), 10))
    finally:
        loop.close()
    assert receiver.frames == list(range(500))
    assert receiver.threads == {threading.get_ident()}


def test_the_end_marker_is_reported_once_and_nothing_after_it_is_delivered() -> None:
    receiver = _Recorder()
    inbox = ReceiverInbox(_on_item, name="test")
    loop = asyncio.new_event_loop()
    try:
        inbox.attach(loop, receiver)
        for item in (b"before", _END, b"after"):
            inbox.push(item, loop)
        _run_until_idle(loop)
        inbox.push(b"later", loop)
        inbox.end(TransportClosed("closed"))
        _run_until_idle(loop)
    finally:
        loop.close()
    assert receiver.frames == [b"before"]
    assert [info.reason for info in receiver.closed] == ["peer closed"]
    assert inbox.ended


def test_end_drops_the_queued_items_and_every_later_push() -> None:
    receiver = _Recorder()
    inbox = ReceiverInbox(_on_item, name="test")
    loop = asyncio.new_event_loop()
    try:
        inbox.attach(loop, receiver)
        inbox.push(b"queued", loop)
        inbox.end(TransportClosed("closed"))
        inbox.push(b"late", loop)
        _run_until_idle(loop)
    finally:
        loop.close()
    assert receiver.frames == []
    assert [info.reason for info in receiver.closed] == ["closed"]


def test_a_push_after_the_receiving_loop_closed_is_dropped_without_raising() -> None:
    inbox = ReceiverInbox(_on_item, name="test")
    loop = asyncio.new_event_loop()
    inbox.attach(loop, _Recorder())
    loop.close()
    inbox.push(b"frame")  # must not raise RuntimeError


def test_close_loop_cancels_unfinished_tasks_and_closes_the_loop() -> None:
    loop = asyncio.new_event_loop()
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = loop.create_task(forever())
    loop.call_soon(loop.stop)
    loop.run_forever()
    close_loop(loop, join_executor=True)
    assert cancelled.is_set() and task.cancelled()
    assert loop.is_closed()


class _CountingLoop(asyncio.SelectorEventLoop):
    """Counts the wake-ups other threads ask for."""

    wakeups = 0

    def call_soon_threadsafe(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.wakeups += 1
        return super().call_soon_threadsafe(*args, **kwargs)


def test_a_batch_of_pushes_from_another_thread_costs_one_wake_up_of_the_loop() -> None:
    seen: list[int] = []
    loop = _CountingLoop()
    handoff: Handoff[int] = Handoff(seen.append, loop=loop)
    try:
        for i in range(100):  # the loop is not running: all wait for one drain
            handoff.push(i)
        _run_until_idle(loop)
    finally:
        loop.close()
    assert seen == list(range(100))
    assert loop.wakeups == 1


def test_an_interrupted_drain_keeps_the_rest_in_order_for_the_next_one() -> None:
    seen: list[int] = []

    def on_item(item: int) -> None:
        if item == 2 and 2 not in seen:
            seen.append(item)
            raise KeyboardInterrupt
        seen.append(item)

    loop = asyncio.new_event_loop()
    handoff: Handoff[int] = Handoff(on_item, loop=loop)
    try:
        for i in range(5):
            handoff.push(i, loop)
        with contextlib.suppress(KeyboardInterrupt):
            _run_until_idle(loop)
        _run_until_idle(loop)
    finally:
        loop.close()
    assert seen == [0, 1, 2, 3, 4]


def test_close_during_a_drain_stops_before_the_next_item_and_returns_what_was_left() -> None:
    seen: list[int] = []
    left: list[list[int]] = []
    loop = asyncio.new_event_loop()

    def on_item(item: int) -> None:
        seen.append(item)
        if item == 1:
            left.append(handoff.close())

    handoff: Handoff[int] = Handoff(on_item, loop=loop)
    try:
        for i in range(4):
            handoff.push(i, loop)
        _run_until_idle(loop)
        refused = handoff.push(9, loop)
    finally:
        loop.close()
    assert seen == [0, 1]
    assert left == [[2, 3]]
    assert refused is False and handoff.closed


def test_a_gated_call_queued_after_the_loop_closed_gives_its_slot_back() -> None:
    released: list[int] = []

    class Runner(LoopRunner):
        def _batch_ran(self, counted: int) -> None:
            released.append(counted)

    loop = asyncio.new_event_loop()
    runner = Runner(loop)
    loop.close()
    runner._call_counted(lambda: None)
    assert released == [1]


def test_the_loop_runner_runs_calls_from_many_threads_in_each_threads_order() -> None:
    runner = LoopRunner(name="test-handoff")
    seen: list[tuple[int, int]] = []
    done = threading.Event()
    try:

        def produce(p: int) -> None:
            for i in range(200):
                runner.call_later(functools.partial(seen.append, (p, i)))

        threads = [threading.Thread(target=produce, args=(p,)) for p in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        runner.call_later(done.set)
        assert done.wait(10)
    finally:
        runner.stop()
    for p in range(4):
        assert [i for q, i in seen if q == p] == list(range(200))
    assert len(seen) == 800
