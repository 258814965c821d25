"""Handler outcomes as Observables (the engine's dispatch and the role layer's handlers).

- :func:`as_observable`: a handler's return value (an Observable, an awaitable or a plain
  value) as an Observable; an awaitable (an ``async def`` handler's coroutine) is awaited on
  the connection's loop, from whichever thread the handler ran on (:func:`to_future`);
- :class:`Started`: the fast path for an Observable a handler or consumer returned — subscribed
  once, without reactivex's trampoline, its outcome taken at once when it settled while being
  subscribed (``reactivex.empty()``, ``just(x)``, ``defer(...)`` of those).

This module is *not* responsible for routing or running handlers; see ``dispatch.py``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import abc

from .direct import subscribe_direct

__all__ = ["Started", "as_observable", "to_future"]


def as_observable(
    value: Any, loop: asyncio.AbstractEventLoop | None = None
) -> reactivex.Observable[Any]:
    """``value`` as an Observable: an Observable as is, an awaitable's result once it completes
    (awaited on ``loop``, default the running loop; see :func:`to_future`), anything else as
    ``-value|``. Disposing before an awaitable finished cancels it."""
    if isinstance(value, reactivex.Observable):
        return value
    if inspect.isawaitable(value):
        return reactivex.from_future(to_future(value, loop))
    return reactivex.just(value)


def to_future(awaitable: Any, loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """Schedule ``awaitable`` on ``loop``: an asyncio future when called on that loop (or when
    ``loop`` is ``None``: the running loop), else a ``concurrent.futures.Future`` from
    ``run_coroutine_threadsafe`` (a blocking handler's worker thread handing it over)."""
    if loop is None:
        return asyncio.ensure_future(awaitable)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        return asyncio.ensure_future(awaitable)

    async def wait() -> Any:
        return await awaitable

    return asyncio.run_coroutine_threadsafe(wait(), loop)


class Started(abc.ObserverBase[Any]):
    """An Observable a handler or consumer returned, subscribed at once.

    This is the documented fast path for Observable-returning handlers and consumers: ``source``
    is subscribed once, without reactivex's outermost current-thread trampoline and with this
    object as its observer (:func:`~rxacp.session.direct.subscribe_direct` ``observer=``: no
    wrappers per subscription), and when it settles during that subscription —
    ``reactivex.empty()``, ``reactivex.just(x)``, ``reactivex.defer(...)`` of those, operators
    over them — :attr:`done` is already true when the constructor returns, with :attr:`value`
    (its first value; ``None`` if it completed empty) and :attr:`error`: the caller continues
    at once, with no operator chain and no loop turn. Otherwise :meth:`waiting` is an
    Observable of the same outcome to wait on (disposing it disposes the work). ``first=True``
    (a request handler, whose first value answers) settles on the first value; else (a
    consumer) on completion. Events after it settled are ignored. The caller disposes
    :attr:`subscription` once it settled (reactivex's ``finally_action`` runs on disposal);
    :meth:`waiting` hands it to its subscriber, whose end disposes it.

    An outcome another thread produced (a worker emitting while the constructor subscribed, or
    before :meth:`waiting` was subscribed) is not taken inline: that thread may have queued
    hand-offs for the loop first (the updates a blocking handler sent before its answer), and
    the outcome must come after them. Then :attr:`ready` is false and :meth:`waiting` replays
    the outcome through ``hop`` (the session's ``queue_on_loop``: behind those hand-offs).
    """

    __slots__ = (
        "_first",
        "_hop",
        "_lock",
        "_observer",
        "_settler",
        "done",
        "error",
        "has_value",
        "subscription",
        "value",
    )

    def __init__(
        self,
        source: reactivex.Observable[Any],
        first: bool = False,
        hop: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        self._first = first
        self._hop = hop
        self._settler: int | None = None  # the thread that settled it
        self.done = False
        self.has_value = False
        self.value: Any = None
        self.error: Exception | None = None
        self._observer: abc.ObserverBase[Any] | None = None
        self._lock = threading.Lock()
        self.subscription: abc.DisposableBase = subscribe_direct(source, observer=self)

    @property
    def ready(self) -> bool:
        """Settled, on this thread: the caller may take :attr:`value` / :attr:`error` now.
        False while it runs, and when another thread settled it (wait on :meth:`waiting`)."""
        return self.done and (self._hop is None or self._settler == threading.get_ident())

    def on_next(self, value: Any) -> None:
        """The source's value (the first one is kept)."""
        if not self.has_value and not self.done:
            self.has_value, self.value = True, value
            if self._first:
                self._settle()

    def on_error(self, error: Exception) -> None:
        """The source failed."""
        if not self.done:
            self.error = error
            self._settle()

    def on_completed(self) -> None:
        """The source completed."""
        self._settle()

    def _settle(self) -> None:
        with self._lock:
            if self.done:
                return
            self.done = True
            self._settler = threading.get_ident()
            observer = self._observer
        if observer is not None:
            self._replay(observer)

    def _replay(self, observer: abc.ObserverBase[Any]) -> None:
        if self.error is not None:
            observer.on_error(self.error)
        else:
            observer.on_next(self.value)
            observer.on_completed()

    def waiting(self) -> reactivex.Observable[Any]:
        """The outcome once the work settles::

        --v|   (v: the first value, or None if it completed empty)     --X   (it failed)
        """

        def hold(
            observer: abc.ObserverBase[Any], _scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            with self._lock:
                self._observer = observer
                done = self.done
            hop = self._hop
            if done:  # settled between the subscription and this one
                if self.ready or hop is None:
                    self._replay(observer)
                else:  # behind what the settling thread queued for the loop before
                    hop(lambda: self._replay(observer))
            return self.subscription

        return reactivex.create(hold)
