"""``await`` on an AcpObservable: last value, errors, other threads, cancellation, disposal."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from rxacp.session import AcpObservable
from rxacp.session.observable import as_acp_observable

pytestmark = pytest.mark.timeout(10)


def _tracked(
    emit: Any,
) -> tuple[AcpObservable[Any], dict[str, Any]]:
    """An AcpObservable whose subscribe runs ``emit(observer)`` and records its disposal."""
    seen: dict[str, Any] = {"disposed": 0, "observer": None}

    def subscribe(
        observer: abc.ObserverBase[Any], _scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        seen["observer"] = observer
        emit(observer)
        return Disposable(lambda: seen.__setitem__("disposed", seen["disposed"] + 1))

    return AcpObservable(subscribe), seen


def test_await_returns_the_last_value_and_none_for_an_empty_completion() -> None:
    async def main() -> tuple[Any, Any]:
        return (
            await as_acp_observable(reactivex.of(1, 2, 3)),
            await as_acp_observable(reactivex.empty()),
        )

    assert asyncio.run(main()) == (3, None)


def test_await_raises_the_error_the_observable_ended_with_and_disposes_it() -> None:
    source, seen = _tracked(lambda o: o.on_error(KeyError("boom")))

    async def main() -> None:
        await source

    with pytest.raises(KeyError, match="boom"):
        asyncio.run(main())
    assert seen["disposed"] == 1


def test_an_exception_raised_while_subscribing_is_raised_by_await() -> None:
    def explode(_observer: Any) -> None:
        raise ValueError("cannot subscribe")

    source, _ = _tracked(explode)

    async def main() -> None:
        await source

    with pytest.raises(ValueError, match="cannot subscribe"):
        asyncio.run(main())


def test_a_value_emitted_on_another_thread_settles_on_the_awaiting_loop() -> None:
    def later(observer: Any) -> None:
        def work() -> None:
            observer.on_next("from a thread")
            observer.on_completed()

        threading.Timer(0.01, work).start()

    source, seen = _tracked(later)

    async def main() -> tuple[Any, int]:
        value = await source
        return value, threading.get_ident()

    value, loop_thread = asyncio.run(main())
    assert value == "from a thread" and loop_thread == threading.get_ident()
    assert seen["disposed"] == 1


def test_cancelling_the_awaiting_task_disposes_once_and_ignores_a_late_answer() -> None:
    source, seen = _tracked(lambda _o: None)

    async def main() -> None:
        task = asyncio.ensure_future(_await(source))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        seen["observer"].on_next("late")  # must not raise InvalidStateError
        seen["observer"].on_completed()
        await asyncio.sleep(0)

    asyncio.run(main())
    assert seen["disposed"] == 1


async def _await(source: AcpObservable[Any]) -> Any:
    return await source
