"""``run_blocking``: a cold Observable that runs blocking code on the worker pool.

The other half of the sync bridge (``blocking.py`` has the thread that waits on an Observable):
blocking handlers never run on the connection's loop, so the engine runs them on a worker and
hands their result back as an Observable.

This module is *not* responsible for the pool itself (``workers.py``) nor for answers.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from ..errors import AcpConnectionException
from .adapters import as_observable
from .observable import AcpObservable

if TYPE_CHECKING:
    from .workers import ExecutorWorkers, WorkerPool

__all__ = ["run_blocking"]

_T = TypeVar("_T")


def run_blocking(
    workers: WorkerPool | ExecutorWorkers,
    loop: asyncio.AbstractEventLoop,
    fn: Callable[[], _T],
    *,
    name: str | None = None,
    lane: str | None = None,
    hold: Callable[[], None] | None = None,
) -> AcpObservable[_T]:
    """A cold Observable that runs ``fn`` on ``workers`` and emits its result.

    ``--R|`` when ``fn`` returns ``R``; ``--X`` when it raises. When ``fn`` returns an
    awaitable (it is an ``async def`` handler given to a blocking API), that is awaited on
    the connection's loop and its outcome emitted. Disposing discards the result
    (a running thread cannot be stopped; the handler should poll its cancellation state);
    disposing while ``fn`` runs *abandons* it: its worker slot is given back to the pool
    (bounded, logged with ``name``), so a handler that ignores cancellation does not starve
    the next one.

    ``lane`` (the engine's request handlers pass their method name) runs ``fn`` in a lane
    of the pool with ``max_workers`` threads of its own, so work of one kind never waits
    behind another kind that holds every worker (``docs/reliability.md``). While the
    transport's write buffer is over its high-water mark (the peer is not reading), ``fn``
    waits on its worker before it starts (``hold``, the engine's outbound gate, runs on the
    worker before ``fn``).
    """

    def subscribe(
        observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        disposed = [False]
        returned = [False]  # fn is over: disposal from here on is no abandonment
        awaited: list[abc.DisposableBase | None] = [None]

        def work() -> None:
            if disposed[0]:
                return
            if hold is not None:
                hold()
                if disposed[0]:
                    return
            try:
                value = fn()
            except Exception as exc:
                returned[0] = True
                if not disposed[0]:
                    observer.on_error(exc)
                return
            returned[0] = True
            if disposed[0]:
                return
            if inspect.isawaitable(value) and not isinstance(value, reactivex.Observable):
                # an async def handler given to a blocking API: awaited on the loop
                awaited[0] = as_observable(value, loop).subscribe(observer)
                if disposed[0]:
                    awaited[0].dispose()
                return
            observer.on_next(value)
            observer.on_completed()

        try:
            task = workers.submit(
                work, name=name or getattr(fn, "__qualname__", "blocking handler"), lane=lane
            )
        except RuntimeError as exc:
            observer.on_error(AcpConnectionException(f"connection is closed: {exc}"))
            return Disposable()

        def dispose() -> None:
            disposed[0] = True
            if awaited[0] is not None:
                awaited[0].dispose()
            if not returned[0] and task.state == "running":  # queued: skipped by work()
                workers.abandon(task)

        return Disposable(dispose)

    return AcpObservable(subscribe)
