"""The sync client's consumer thread: blocking notification consumers, off the loop, in order.

``AcpSyncClient``'s ``session_update_consumer``\\ s (and ``elicitation_complete_consumer``\\ s and
extension notification handlers) are blocking code, like its request handlers (the Java SDK's
sync client runs them on its handler executor). Run on the connection's loop, one slow consumer
would stall every response. :class:`ConsumerThread` runs them on one daemon thread per client,
``rxacp-client-consumer-N``, one notification after another in arrival order — or, with
``caller_runs`` (the sync client's setting), on a thread blocked in one of the client's calls
while there is one: that thread runs the queued calls itself as it waits, so a round trip wakes
one thread fewer (issue 21, measured below).

Ordering and back-pressure:

- the loop hands each notification over and moves on while fewer than ``bound`` wait for the
  thread; at the bound the handler holds the engine's ordered inbox (its Observable completes
  when the consumers caught up), so a consumer that falls behind slows reading the agent
  instead of growing memory;
- "updates before the answer": every blocking call of ``AcpSyncClient`` waits, once its answer
  arrived, until the consumers ran for everything that arrived before it (:meth:`flush`, or the
  second phase of :meth:`wait_helping`), so ``prompt()`` returns after the last update of its
  turn was consumed;
- a blocking call from a consumer would wait for its own thread, so ``AcpSyncClient`` refuses
  it (``cancel``, a notification, is fine): :meth:`on_thread` is true on the consumer thread
  and on any thread while it runs one of the calls.

Cost (5000-update turn, loaded 2-core box): ~22 us per update with consumers on the loop,
~52 us through this thread, ~72 us holding the inbox for each (hence the bound); with
``caller_runs`` a sync ``prompt`` round trip cost the client a median 221 us of CPU against 355
us without (issue 21).

Who runs a call: at most one thread at a time (``_busy``), in queue order. A queued call with
nobody running one always has a thread that will take it: the waiting caller when exactly one
waits, else the consumer thread (started on demand; with 50 concurrent callers, waking whichever
caller waits moved the calls from thread to thread, measured slower than the consumer thread); a
caller that stops waiting with calls queued and nobody running hands them on the same way.

This module is *not* responsible for parsing notifications or choosing consumers.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

__all__ = ["DEFAULT_CONSUMER_BOUND", "ConsumerThread"]

DEFAULT_CONSUMER_BOUND = 256
"""Notifications handed to the consumer thread before the loop waits for it."""

_log = logging.getLogger("rxacp.client")

_ids = itertools.count(1)

_running = threading.local()
"""``owner``: the :class:`ConsumerThread` whose call runs on this thread now (if any)."""


class _Item:
    __slots__ = ("done", "fn", "listeners")

    def __init__(self, fn: Callable[[], Any] | None) -> None:
        self.fn = fn
        self.done = False
        self.listeners: list[Callable[[], None]] = []


class _Wakeup(threading.Event):
    """A ``threading.Event`` whose :meth:`set` also notifies ``cond`` (the condition the one
    thread waiting for it in :meth:`ConsumerThread.wait_helping` sleeps on)."""

    def __init__(self, cond: threading.Condition) -> None:
        super().__init__()
        self.cond = cond

    def set(self) -> None:
        super().set()
        with self.cond:
            self.cond.notify()


class ConsumerThread:
    """Runs consumer calls one at a time, in submission order, on one daemon thread.

    Started on the first :meth:`submit` that finds no waiting caller to run it; ends after
    :meth:`stop` once the queued calls ran. Thread safe. A consumer that raises is logged and the
    next call runs. With ``caller_runs``, a thread blocked in :meth:`wait_helping` or
    :meth:`flush` runs the queued calls itself while it waits (still one at a time, in order),
    so the consumer thread is not woken for them.
    """

    def __init__(
        self,
        *,
        bound: int = DEFAULT_CONSUMER_BOUND,
        name: str | None = None,
        caller_runs: bool = False,
    ) -> None:
        if bound < 1:
            raise ValueError("bound must be >= 1")
        self._bound = bound
        self._name = name or f"rxacp-client-consumer-{next(_ids)}"
        self._caller_runs = caller_runs
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # the consumer thread waits here
        self._flushed = threading.Condition(self._lock)  # flushers wait here for a call to end
        self._helpers: list[threading.Condition] = []  # idle callers in wait_helping
        self._queue: collections.deque[_Item] = collections.deque()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._busy = False  # a call (or marker) is running, on whichever thread

    @property
    def name(self) -> str:
        """The consumer thread's name."""
        return self._name

    @property
    def caller_runs(self) -> bool:
        """Whether waiting callers run queued calls themselves (see the class docstring)."""
        return self._caller_runs

    @property
    def waiting_callers(self) -> int:
        """Callers waiting in :meth:`wait_helping` now (they run queued calls themselves)."""
        with self._lock:
            return len(self._helpers)

    def on_thread(self) -> bool:
        """Whether the caller runs on this consumer thread, or runs one of its calls now."""
        if getattr(_running, "owner", None) is self:
            return True
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, fn: Callable[[], Any]) -> reactivex.Observable[Any] | None:
        """Queue ``fn``. ``None`` while the loop may go on; at the bound, an Observable that
        completes once ``fn`` ran (``----|``), for the engine to hold the next notification."""
        item = _Item(fn)
        with self._lock:
            if self._stopped:
                _log.debug("client closed: a notification for the consumers is dropped")
                return None
            self._queue.append(item)
            full = len(self._queue) >= self._bound
            self._wake_locked()
        return _when_done(item, self._lock) if full else None

    def new_wakeup(self) -> threading.Event:
        """An event for :meth:`wait_helping`: setting it also wakes the thread waiting on it."""
        return _Wakeup(threading.Condition(self._lock))

    def wait_helping(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until ``event`` (from :meth:`new_wakeup`) is set, then until the calls queued
        before it ran (as :meth:`flush`), each phase at most ``timeout`` seconds; meanwhile run
        the queued calls no other thread runs. Returns whether ``event`` was set (a flush phase
        that times out is logged). Without ``caller_runs``, or on the consumer thread itself,
        this is ``event.wait(timeout)``."""
        if not self._caller_runs or not isinstance(event, _Wakeup) or self.on_thread():
            return event.wait(timeout)
        me = event.cond
        lock = self._lock
        lock.acquire()
        try:
            self._helpers.append(me)
            try:
                if not self._help_until(event.is_set, timeout, me):
                    return False
            finally:
                self._helpers.remove(me)
            if self._queue or self._busy:  # answered: now the calls that came before it
                marker = _Item(None)
                self._queue.append(marker)
                if not self._help_until(lambda: marker.done, timeout, self._flushed):
                    _log.warning("the session update consumers are %s s behind the answer", timeout)
            return True
        finally:
            if self._queue and not self._busy:
                self._wake_locked()  # hand the rest to another caller or the consumer thread
            lock.release()

    def flush(self, timeout: float | None) -> bool:
        """Wait until every call submitted before this one ran; ``False`` on timeout.

        Returns at once on the consumer thread itself (a consumer cannot wait for itself) and
        when nothing is queued. Also waits for the calls queued before :meth:`stop`. It never
        runs a consumer itself (one that blocks would overrun ``timeout``): the consumer
        thread does.
        """
        with self._lock:
            if self.on_thread() or (not self._queue and not self._busy):
                return True
            marker = _Item(None)
            self._queue.append(marker)
            try:
                self._wake_thread_locked()
                return self._help_until(lambda: marker.done, timeout, self._flushed, run=False)
            finally:
                if self._queue and not self._busy:
                    self._wake_locked()

    def stop(self) -> None:
        """No more calls are accepted; the thread ends after the queued ones."""
        with self._lock:
            self._stopped = True
            if self._queue and not self._busy:
                self._wake_locked()
            self._work.notify_all()

    # ------------------------------------------------------------------ internals (lock held)
    def _wake_locked(self) -> None:
        """Something is queued: make sure a thread will run it (an idle waiting caller, else
        the consumer thread, started on demand)."""
        if self._busy:
            return  # the running thread takes the next call when it is done
        if len(self._helpers) == 1:
            # one caller waits: it runs the call, no other thread is woken (module docstring)
            self._helpers[0].notify()
            return
        self._wake_thread_locked()

    def _wake_thread_locked(self) -> None:
        """Make sure the consumer thread runs what is queued (started on demand)."""
        if self._busy:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        else:
            self._work.notify()

    def _help_until(
        self,
        done: Callable[[], bool],
        timeout: float | None,
        cond: threading.Condition,
        *,
        run: bool = True,
    ) -> bool:
        """Until ``done()``: run the next queued call when nobody runs one (``caller_runs`` and
        ``run``), else sleep on ``cond``. Lock held on entry and exit; ``False`` on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        lock = self._lock
        while not done():
            item = self._take_locked() if self._caller_runs and run else None
            if item is not None:
                lock.release()
                try:
                    self._call(item)
                finally:
                    lock.acquire()
                continue
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            cond.wait(remaining)
        return True

    def _take_locked(self) -> _Item | None:
        if self._busy or not self._queue:
            return None
        self._busy = True
        return self._queue.popleft()

    # ------------------------------------------------------------------ internals (unlocked)
    def _call(self, item: _Item) -> None:
        """Run one taken call (or marker), then mark it done and wake whoever waits for it."""
        try:
            if item.fn is not None:
                outer = getattr(_running, "owner", None)
                _running.owner = self
                try:
                    item.fn()
                except Exception:
                    _log.exception("a consumer failed")
                finally:
                    _running.owner = outer
        finally:
            with self._lock:
                self._busy = False
                item.done = True
                listeners, item.listeners = item.listeners, []
                self._flushed.notify_all()
                if self._stopped and not self._queue:
                    self._work.notify_all()  # the consumer thread may end now
            for listener in listeners:
                listener()

    def _run(self) -> None:
        while True:
            with self._lock:
                item = self._take_locked()
                while item is None:
                    if self._stopped and not self._queue:
                        return
                    self._work.wait()
                    item = self._take_locked()
            self._call(item)


def _when_done(item: _Item, lock: AbstractContextManager[Any]) -> reactivex.Observable[Any]:
    def subscribe(
        observer: abc.ObserverBase[Any], _scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        with lock:
            if not item.done:
                item.listeners.append(observer.on_completed)
                return Disposable()
        observer.on_completed()
        return Disposable()

    return reactivex.create(subscribe)
