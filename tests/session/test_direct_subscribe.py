"""Pins the reactivex behaviour ``rxacp.session.direct.subscribe_direct`` relies on: a
subscription through ``Observable._subscribe_core`` with an ``AutoDetachObserver`` sees what
``Observable.subscribe`` would, minus the current-thread trampoline; with ``observer=``, the
observer given (one that stops at its first terminal event) sees the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import reactivex
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.scheduler import CurrentThreadScheduler

from rxacp.session.direct import subscribe_direct


def _events(subscribe: Callable[..., abc.DisposableBase], source: Any) -> list[Any]:
    seen: list[Any] = []
    subscribe(
        source,
        lambda v: seen.append(("next", v)),
        lambda e: seen.append(("error", str(e))),
        lambda: seen.append("completed"),
    )
    return seen


def _plain(source: Any, on_next: Any, on_error: Any, on_completed: Any) -> abc.DisposableBase:
    disposable: abc.DisposableBase = source.subscribe(on_next, on_error, on_completed)
    return disposable


def _misbehaving(observer: abc.ObserverBase[int], _s: Any = None) -> abc.DisposableBase:
    observer.on_next(1)
    observer.on_completed()
    observer.on_next(2)  # after the end: must not arrive
    return Disposable()


def _raising(_observer: abc.ObserverBase[int], _s: Any = None) -> abc.DisposableBase:
    raise ValueError("boom while subscribing")


@pytest.mark.parametrize(
    "source",
    [
        reactivex.of(1, 2, 3),
        reactivex.empty(),
        reactivex.throw(ValueError("bad")),
        reactivex.create(_misbehaving),
        reactivex.create(_raising),
        reactivex.just(7),
    ],
    ids=["of", "empty", "throw", "emits-after-end", "raises-in-subscribe", "just"],
)
def test_direct_subscription_sees_what_observable_subscribe_sees(source: Any) -> None:
    assert _events(subscribe_direct, source) == _events(_plain, source)


def test_direct_subscription_does_not_run_a_current_thread_trampoline() -> None:
    trampoline_running: list[bool] = []

    def probe(observer: abc.ObserverBase[int], _s: Any = None) -> abc.DisposableBase:
        trampoline_running.append(not CurrentThreadScheduler.singleton().schedule_required())
        observer.on_completed()
        return Disposable()

    subscribe_direct(reactivex.create(probe))
    reactivex.create(probe).subscribe()
    assert trampoline_running == [False, True]  # what the helper saves, and that it exists


class _Recorder(abc.ObserverBase[Any]):
    """An observer that stops at its first terminal event, as ``observer=`` requires."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.stopped = False

    def on_next(self, value: Any) -> None:
        if not self.stopped:
            self.seen.append(("next", value))

    def on_error(self, error: Exception) -> None:
        if not self.stopped:
            self.stopped = True
            self.seen.append(("error", str(error)))

    def on_completed(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.seen.append("completed")


@pytest.mark.parametrize(
    "source",
    [
        reactivex.of(1, 2, 3),
        reactivex.empty(),
        reactivex.throw(ValueError("bad")),
        reactivex.create(_misbehaving),
        reactivex.create(_raising),
        reactivex.just(7),
        reactivex.defer(lambda _s: reactivex.just(8)),
    ],
    ids=["of", "empty", "throw", "emits-after-end", "raises-in-subscribe", "just", "defer"],
)
def test_an_observer_subscribed_as_given_sees_what_observable_subscribe_sees(source: Any) -> None:
    recorder = _Recorder()
    subscribe_direct(source, observer=recorder)
    assert recorder.seen == _events(_plain, source)


def test_the_subscription_of_an_observer_subscribed_as_given_disposes_the_source() -> None:
    disposed: list[str] = []

    def bare(_observer: abc.ObserverBase[int], _s: Any = None) -> Any:
        return lambda: disposed.append("bare function")  # reactivex accepts a bare function

    def nothing(_observer: abc.ObserverBase[int], _s: Any = None) -> Any:
        return None

    def proper(_observer: abc.ObserverBase[int], _s: Any = None) -> abc.DisposableBase:
        return Disposable(lambda: disposed.append("disposable"))

    for subscribe in (bare, nothing, proper):
        subscribe_direct(reactivex.create(subscribe), observer=_Recorder()).dispose()
    assert disposed == ["bare function", "disposable"]
