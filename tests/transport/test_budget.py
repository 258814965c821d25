"""``ByteBudget``: the server-wide bound on incoming bytes being parsed, shared across threads
and event loops."""

from __future__ import annotations

import asyncio

import pytest

from rxacp.transport._budget import ByteBudget


def test_reservations_never_exceed_the_limit_and_releases_make_room() -> None:
    budget = ByteBudget(100)
    assert budget.try_reserve(60)
    assert not budget.try_reserve(41)
    assert budget.try_reserve(40)
    assert budget.in_use == 100
    budget.release(60)
    assert budget.in_use == 40
    assert budget.try_reserve(60)


def test_one_message_larger_than_the_budget_passes_alone_as_the_whole_budget() -> None:
    budget = ByteBudget(100)
    assert budget.try_reserve(1000)
    assert budget.in_use == 100
    assert not budget.try_reserve(1)
    budget.release(1000)
    assert budget.in_use == 0


def test_a_waiting_reservation_proceeds_once_another_loop_releases() -> None:
    budget = ByteBudget(100)
    assert budget.try_reserve(100)

    async def waiter() -> bool:
        task = asyncio.ensure_future(budget.reserve(50))
        await asyncio.sleep(0)
        waiting = not task.done()
        asyncio.get_running_loop().call_soon(budget.release, 100)
        await asyncio.wait_for(task, 5.0)
        return waiting

    assert asyncio.run(waiter()) is True
    assert budget.in_use == 50


def test_a_cancelled_wait_reserves_nothing() -> None:
    budget = ByteBudget(10)
    assert budget.try_reserve(10)

    async def cancelled() -> None:
        task = asyncio.ensure_future(budget.reserve(5))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    budget.release(10)
    assert budget.in_use == 0


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
def test_a_budget_that_is_not_a_positive_int_is_refused(limit: object) -> None:
    with pytest.raises(ValueError, match="byte budget"):
        ByteBudget(limit)  # type: ignore[arg-type]


def test_frames_dropped_undelivered_at_the_end_give_their_bytes_back() -> None:
    from rxacp.transport._budget import Reserved, release_dropped
    from rxacp.transport._handoff import ReceiverInbox
    from rxacp.transport.base import TransportClosed

    budget = ByteBudget(100)
    delivered: list[object] = []

    class Receiver:
        def on_frame(self, frame: object) -> None:
            delivered.append(frame)

        def on_frame_too_large(self, size: int) -> None: ...
        def on_closed(self, info: TransportClosed) -> None: ...
        def on_write_paused(self) -> None: ...
        def on_write_resumed(self) -> None: ...

    def on_item(receiver: object, item: object) -> None:
        assert isinstance(item, Reserved)
        item.release()

    async def scenario() -> None:
        inbox = ReceiverInbox(on_item, name="test", on_drop=release_dropped)
        inbox.attach(asyncio.get_running_loop(), Receiver())
        for _ in range(3):
            assert budget.try_reserve(30)
            inbox.push(Reserved(b"{}", 30, budget))
        inbox.end(TransportClosed("closed"))  # before the drain ran: all three dropped
        assert budget.try_reserve(10)
        inbox.push(Reserved(b"{}", 10, budget))  # after the end: dropped at once
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert budget.in_use == 0
