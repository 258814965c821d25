"""Pins the reactivex behaviour ``rxacp.session.direct.subscribe_direct`` relies on: a
subscription through ``Observable._subscribe_core`` with an ``AutoDetachObserver`` sees what
``Observable.subscribe`` would, minus the current-thread trampoline."""

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
