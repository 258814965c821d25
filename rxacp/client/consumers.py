"""The sync client's consumer thread: blocking notification consumers, off the loop, in order.

``AcpSyncClient``'s ``session_update_consumer``\\ s (and ``elicitation_complete_consumer``\\ s and
extension notification handlers) are blocking code, like its request handlers (the Java SDK's
sync client runs them on its handler executor). Run on the connection's loop, one slow consumer
would stall every response. :class:`ConsumerThread` runs them on one daemon thread per client,
``rxacp-client-consumer-N``, one notification after another in arrival order.

Ordering and back-pressure:

- the loop hands each notification over and moves on while fewer than ``bound`` wait for the
  thread; at the bound the handler holds the engine's ordered inbox (its Observable completes
  when the consumers caught up), so a consumer that falls behind slows reading the agent
  instead of growing memory;
- "updates before the answer": every blocking call of ``AcpSyncClient`` waits, once its answer
  arrived, until the consumers ran for everything that arrived before it (:meth:`flush`), so
  ``prompt()`` returns after the last update of its turn was consumed;
- a blocking call from a consumer would wait for its own thread, so ``AcpSyncClient`` refuses
  it (``cancel``, a notification, is fine).

Cost, measured in memory on the loaded 2-core box (5000-update turn, min of 3 runs): ~22 us per
update with consumers on the loop, ~52 us through this thread (two thread wake-ups per update);
a round trip per notification (holding the inbox for each) measured ~72 us, hence the bound.

This module is *not* responsible for parsing notifications or choosing consumers.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

__all__ = ["DEFAULT_CONSUMER_BOUND", "ConsumerThread"]

DEFAULT_CONSUMER_BOUND = 256
"""Notifications handed to the consumer thread before the loop waits for it."""

_log = logging.getLogger("rxacp.client")

_ids = itertools.count(1)


class _Item:
    __slots__ = ("done", "fn", "listeners")

    def __init__(self, fn: Callable[[], Any] | None) -> None:
        self.fn = fn
        self.done = False
        self.listeners: list[Callable[[], None]] = []


class ConsumerThread:
    """Runs consumer calls one at a time, in submission order, on one daemon thread.

    Started on the first :meth:`submit`; ends after :meth:`stop` once the queued calls ran.
    Thread safe. A consumer that raises is logged and the next call runs.
    """

    def __init__(self, *, bound: int = DEFAULT_CONSUMER_BOUND, name: str | None = None) -> None:
        if bound < 1:
            raise ValueError("bound must be >= 1")
        self._bound = bound
        self._name = name or f"rxacp-client-consumer-{next(_ids)}"
        self._cond = threading.Condition()
        self._queue: collections.deque[_Item] = collections.deque()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._busy = False

    @property
    def name(self) -> str:
        """The consumer thread's name."""
        return self._name

    def on_thread(self) -> bool:
        """Whether the caller runs on this consumer thread."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, fn: Callable[[], Any]) -> reactivex.Observable[Any] | None:
        """Queue ``fn``. ``None`` while the loop may go on; at the bound, an Observable that
        completes once ``fn`` ran (``----|``), for the engine to hold the next notification."""
        item = _Item(fn)
        with self._cond:
            if self._stopped:
                _log.debug("client closed: a notification for the consumers is dropped")
                return None
            self._queue.append(item)
            full = len(self._queue) >= self._bound
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()
        return _when_done(item, self._cond) if full else None

    def flush(self, timeout: float | None) -> bool:
        """Wait until every call submitted before this one ran; ``False`` on timeout.

        Returns at once on the consumer thread itself (a consumer cannot wait for itself) and
        when nothing is queued. Also waits for the calls queued before :meth:`stop`.
        """
        with self._cond:
            if self._thread is None or self.on_thread() or (not self._queue and not self._busy):
                return True
            marker = _Item(None)
            self._queue.append(marker)
            self._cond.notify()
            return self._cond.wait_for(lambda: marker.done, timeout)

    def stop(self) -> None:
        """No more calls are accepted; the thread ends after the queued ones."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self._stopped:
                        return
                    self._cond.wait()
                item = self._queue.popleft()
                self._busy = True
            if item.fn is not None:
                try:
                    item.fn()
                except Exception:
                    _log.exception("a consumer failed")
            with self._cond:
                self._busy = False
                item.done = True
                listeners, item.listeners = item.listeners, []
                self._cond.notify_all()
            for listener in listeners:
                listener()


def _when_done(item: _Item, cond: threading.Condition) -> reactivex.Observable[Any]:
    def subscribe(
        observer: abc.ObserverBase[Any], _scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        with cond:
            if not item.done:
                item.listeners.append(observer.on_completed)
                return Disposable()
        observer.on_completed()
        return Disposable()

    return reactivex.create(subscribe)
