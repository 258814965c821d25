"""ReceiverInbox and close_loop: the hand-offs the transports and the loop runner share."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from rxacp.transport._handoff import ReceiverInbox, close_loop


def _run_until_idle(loop: asyncio.AbstractEventLoop) -> None:
    for _ in range(3):  # a drain scheduled by a drain's callback runs within three passes
        loop.run_until_complete(asyncio.sleep(0))


def test_items_pushed_before_attach_are_delivered_in_order_once_attached() -> None:
    batches: list[list[Any]] = []
    inbox = ReceiverInbox(batches.append, name="test")
    inbox.push(1)
    inbox.push(2)
    loop = asyncio.new_event_loop()
    try:
        assert batches == []
        inbox.attach(loop)
        inbox.push(3, loop)
        _run_until_idle(loop)
    finally:
        loop.close()
    assert batches == [[1, 2, 3]]


def test_pushes_from_another_thread_arrive_in_push_order_on_the_receiving_loop() -> None:
    seen: list[Any] = []
    threads: set[int] = set()
    loop = asyncio.new_event_loop()
    done = asyncio.Event()

    def deliver(items: list[Any]) -> None:
        threads.add(threading.get_ident())
        seen.extend(items)
        if len(seen) >= 500:
            done.set()

    inbox = ReceiverInbox(deliver, name="test")
    try:
        inbox.attach(loop)

        def push_all() -> None:
            for i in range(500):
                inbox.push(i)

        pusher = threading.Thread(target=push_all)
        pusher.start()
        pusher.join(10)
        loop.run_until_complete(asyncio.wait_for(done.wait(), 10))
    finally:
        loop.close()
    assert seen == list(range(500))
    assert threads == {threading.get_ident()}


def test_discard_drops_queued_items_and_every_later_push() -> None:
    batches: list[list[Any]] = []
    inbox = ReceiverInbox(batches.append, name="test")
    loop = asyncio.new_event_loop()
    try:
        inbox.attach(loop)
        inbox.push("queued", loop)
        inbox.discard()
        inbox.push("late", loop)
        _run_until_idle(loop)
    finally:
        loop.close()
    assert all(batch == [] for batch in batches)


def test_a_push_after_the_receiving_loop_closed_is_dropped_without_raising() -> None:
    inbox = ReceiverInbox(lambda items: None, name="test")
    loop = asyncio.new_event_loop()
    inbox.attach(loop)
    loop.close()
    inbox.push("frame")  # must not raise RuntimeError


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
