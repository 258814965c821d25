"""The library behaviour each shortcut of ``rxacp._compat`` relies on, pinned: an upgrade of
reactivex or Python that changes it fails here, and each shortcut's public-API fallback is
checked to do the same thing."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
import reactivex
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.observer import AutoDetachObserver

from rxacp import _compat


def test_running_loop_is_the_loop_running_in_this_thread_or_none() -> None:
    assert _compat.running_loop() is None

    async def inside() -> bool:
        return _compat.running_loop() is asyncio.get_running_loop()

    assert asyncio.run(inside())


def test_the_running_loop_fallback_gives_the_same_answers() -> None:
    assert _compat._running_loop_public() is None

    async def inside() -> bool:
        return _compat._running_loop_public() is asyncio.get_running_loop()

    assert asyncio.run(inside())


def _recording_source(seen: list[Any]) -> reactivex.Observable[int]:
    def subscribe(
        observer: abc.ObserverBase[int], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        seen.append(observer)
        observer.on_next(1)
        observer.on_completed()
        return Disposable()

    return reactivex.create(subscribe)


def test_subscribe_core_hands_the_observer_itself_to_the_subscribe_function() -> None:
    seen: list[Any] = []
    values: list[int] = []

    class Sink(abc.ObserverBase[int]):
        def on_next(self, value: int) -> None:
            values.append(value)

        def on_error(self, error: Exception) -> None:
            raise error

        def on_completed(self) -> None:
            values.append(-1)

    sink = Sink()
    _compat.subscribe_core(_recording_source(seen), sink)
    assert seen == [sink]  # not wrapped: no AutoDetachObserver, no trampoline
    assert values == [1, -1]


def test_the_subscribe_core_fallback_delivers_the_same_values() -> None:
    values: list[int] = []
    sink: AutoDetachObserver[int] = AutoDetachObserver(values.append)
    _compat._subscribe_public(_recording_source([]), sink)
    assert values == [1]


@pytest.mark.parametrize("fallback", [False, True], ids=["internal", "fallback"])
def test_an_auto_detach_observer_takes_one_error_and_then_no_more(fallback: bool) -> None:
    fail = _compat._fail_public if fallback else _compat.detach_fail
    errors: list[Exception] = []
    detach = _compat.auto_detach(None, errors.append, None)
    first, second = ValueError("first"), ValueError("second")
    assert fail(detach, first) is True
    assert fail(detach, second) is False
    detach.on_error(second)
    assert errors == [first]


def test_an_attached_subscription_is_disposed_once_at_the_terminal_event() -> None:
    disposed: list[int] = []
    detach = _compat.auto_detach(None, None, None)
    _compat.detach_attach(detach, Disposable(lambda: disposed.append(1)))
    assert disposed == []
    detach.on_completed()
    detach.on_completed()
    assert disposed == [1]


def test_the_attach_fallback_disposes_at_once_when_the_observer_stopped() -> None:
    disposed: list[int] = []
    detach = _compat.auto_detach(None, None, None)
    detach.on_completed()
    _compat._attach_public(detach, Disposable(lambda: disposed.append(1)))
    assert disposed == [1]


@pytest.mark.selector_loop  # asyncio's own pipe transports; uvloop's have no max_size
def test_asyncio_pipe_transports_read_with_a_settable_int_max_size() -> None:
    async def main() -> tuple[int, int]:
        read_fd, write_fd = os.pipe()
        loop = asyncio.get_running_loop()
        reader = open(read_fd, "rb", buffering=0)  # noqa: SIM115 - closed with the transport
        chunks: list[int] = []
        got = asyncio.Event()

        class Proto(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                chunks.append(len(data))
                if sum(chunks) >= 4096:
                    got.set()

        transport, _ = await loop.connect_read_pipe(Proto, reader)
        try:
            assert isinstance(getattr(transport, "max_size", None), int)
            _compat.bound_reads(transport, 1024)
            os.write(write_fd, b"x" * 4096)
            await asyncio.wait_for(got.wait(), 30)
            return max(chunks), sum(chunks)
        finally:
            transport.close()
            os.close(write_fd)

    largest, total = asyncio.run(main())
    assert total == 4096 and largest <= 1024


def test_bound_reads_leaves_a_transport_without_max_size_alone() -> None:
    class Other:
        pass

    other = Other()
    _compat.bound_reads(other, 1024)
    _compat.bound_reads(None, 1024)
    assert not hasattr(other, "max_size")


def test_every_shortcut_is_the_internal_while_the_library_has_it() -> None:
    assert _compat.running_loop is asyncio._get_running_loop
    assert _compat.subscribe_core is _compat._subscribe_internal
    assert _compat.auto_detach is AutoDetachObserver
    assert _compat.detach_fail is AutoDetachObserver.fail
    assert _compat.detach_attach is AutoDetachObserver.set_disposable
