"""A bounded pool of daemon worker threads for blocking (sync) handlers.

Sync handlers must never run on the connection's event loop. This pool runs them on daemon
threads, so a handler that ignores cancellation can be *abandoned* (the SDK answers for it) without
blocking interpreter exit, which ``concurrent.futures.ThreadPoolExecutor`` would do.

Accounting (all under one lock). ``free`` counts the live workers that are not running a task:
the ones just started, and the ones waiting for work. Every free worker looks at the queue
(under the lock) before it waits and before it exits, and takes one task when there is one. So
the invariant the pool keeps after every operation is::

    queued <= free  or  threads == max_workers

"a queued task has a worker that will take it, or the pool is at ``max_workers``". ``submit``
starts a thread whenever a new task would break it. (The old accounting counted a worker as idle
until it re-acquired the lock after ``notify()``, so a burst of submits all saw the same idle
worker: two tasks, one thread — issue 22.) Nothing relies on ``Condition.wait``'s return value or
on which waiter a ``notify()`` reaches: a worker whose wait timed out still takes a queued task.

Abandoned tasks (issue 19). Python cannot stop a running thread, so when the SDK gives up on a
blocking handler (grace period, max prompt duration, ``$/cancel_request``) the thread keeps
running it. ``abandon(task)`` takes that thread out of the count: ``threads`` drops by one (so the
pool may start a fresh worker for queued work) and the thread exits when the task returns,
instead of rejoining the pool. At most ``max_abandoned`` threads (default: ``max_workers``) are
out of the count at once, so a handler that never returns costs one thread, and a flood of them
at most ``max_workers + max_abandoned`` threads; each abandonment is logged with the task's name.

Lanes (issue 30). One kind of work must not starve another: 32 sync prompt handlers waiting
for permission answers held every worker, so ``session/new`` queued behind them; 32 blocking
permission dialogs made ``fs/read_text_file`` wait. ``submit(..., lane=name)`` runs a task in
that lane: each lane is a pool of its own with the same ``max_workers`` (started on demand, its
threads exit when idle), so a full lane delays only its own kind. The engine gives each request
method its own lane; everything else runs in the default lane (the pool itself).

This module is *not* responsible for cancellation or answers; it only runs callables.
"""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ExecutorWorkers", "WorkerPool", "WorkerPoolStats", "WorkerTask"]

_log = logging.getLogger("rxacp.session.workers")


@dataclass(frozen=True)
class WorkerPoolStats:
    """One consistent snapshot of a :class:`WorkerPool` (taken under its lock).

    ``threads`` live workers (``free`` of them not running a task), ``queued`` tasks waiting for a
    worker, and ``max_workers``. The pool keeps ``queued <= free or threads == max_workers``.
    """

    threads: int
    free: int
    queued: int
    max_workers: int
    abandoned: int = 0
    """Threads still running an abandoned task (not counted in ``threads``)."""

    @property
    def busy(self) -> int:
        """Workers running a task."""
        return self.threads - self.free

    @property
    def invariant_holds(self) -> bool:
        """Every queued task has a free worker that will take it, or the pool is full."""
        return self.queued <= self.free or self.threads >= self.max_workers


def _ran() -> None:
    """What a finished :class:`WorkerTask` holds instead of its callable (and what it kept
    alive: a turn's request, its prompt)."""


class WorkerTask:
    """A task submitted to a :class:`WorkerPool`: its name and state (``queued``, ``running``,
    ``done``), and whether it was abandoned."""

    __slots__ = ("abandoned", "fn", "name", "pool", "state")

    def __init__(self, fn: Callable[[], Any], name: str, pool: Any = None) -> None:
        self.fn = fn
        self.name = name
        self.state = "queued"
        self.abandoned = False
        self.pool = pool
        """The pool (lane) running it."""

    def __repr__(self) -> str:
        return f"WorkerTask({self.name!r}, {self.state}{', abandoned' if self.abandoned else ''})"


class WorkerPool:
    """Runs callables on up to ``max_workers`` daemon threads, started on demand.

    Tasks submitted together run together, up to ``max_workers``; more wait in FIFO order. Idle
    threads wait ``idle_seconds`` for more work, then exit, so an idle connection holds no
    threads. ``shutdown()`` makes idle workers exit; busy ones finish their current task first
    (they are daemons, so an abandoned one never blocks exit). ``submit(fn, lane=...)`` runs
    ``fn`` in a lane of its own ``max_workers`` (see the module doc); the counters and
    :meth:`stats` sum every lane.
    """

    def __init__(
        self,
        max_workers: int = 32,
        *,
        name: str = "rxacp-worker",
        idle_seconds: float = 30.0,
        max_abandoned: int | None = None,
    ):
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        if max_abandoned is not None and max_abandoned < 0:
            raise ValueError("max_abandoned must be >= 0")
        self._max = max_workers
        self._max_abandoned = max_workers if max_abandoned is None else max_abandoned
        self._abandoned = 0
        self._name = name
        self._idle_seconds = idle_seconds
        self._queue: collections.deque[WorkerTask] = collections.deque()
        self._cond = threading.Condition()
        self._threads = 0
        self._free = 0
        self._shutdown = False
        self._seq = 0
        self._lanes: dict[str, WorkerPool] = {}

    @property
    def max_workers(self) -> int:
        """The most worker threads this pool (each of its lanes) runs at once."""
        return self._max

    def _pools(self) -> list[WorkerPool]:
        with self._cond:
            return [self, *self._lanes.values()]

    @property
    def thread_count(self) -> int:
        """Number of live worker threads (every lane)."""
        return sum(pool._own_stats().threads for pool in self._pools())

    @property
    def busy_count(self) -> int:
        """Number of workers currently running a task (every lane)."""
        return sum(pool._own_stats().busy for pool in self._pools())

    def stats(self) -> WorkerPoolStats:
        """A snapshot of the pool's counters, summed over its lanes (each lane's under its
        lock; ``max_workers`` is the default lane's)."""
        parts = [pool._own_stats() for pool in self._pools()]
        if len(parts) == 1:
            return parts[0]
        return WorkerPoolStats(
            sum(p.threads for p in parts),
            sum(p.free for p in parts),
            sum(p.queued for p in parts),
            self._max,
            sum(p.abandoned for p in parts),
        )

    def lane_stats(self, lane: str) -> WorkerPoolStats | None:
        """The counters of one lane (``None``: it never ran anything)."""
        with self._cond:
            pool = self._lanes.get(lane)
        return None if pool is None else pool._own_stats()

    def _own_stats(self) -> WorkerPoolStats:
        with self._cond:
            return WorkerPoolStats(
                self._threads, self._free, len(self._queue), self._max, self._abandoned
            )

    def _lane(self, lane: str) -> WorkerPool:
        with self._cond:
            if self._shutdown:
                raise RuntimeError("worker pool is shut down")
            pool = self._lanes.get(lane)
            if pool is None:
                pool = self._lanes[lane] = WorkerPool(
                    self._max,
                    name=f"{self._name}-{lane.replace('/', '-')}",
                    idle_seconds=self._idle_seconds,
                    max_abandoned=self._max_abandoned,
                )
            return pool

    def submit(
        self, fn: Callable[[], Any], *, name: str | None = None, lane: str | None = None
    ) -> WorkerTask:
        """Queue ``fn`` to run on a worker (of ``lane``, when given). Exceptions escaping
        ``fn`` are logged.

        ``name`` (default: ``fn``'s qualified name) is what the log says if it is abandoned.
        """
        if lane is not None:
            return self._lane(lane).submit(fn, name=name)
        task = WorkerTask(fn, name or str(getattr(fn, "__qualname__", None) or repr(fn)), self)
        with self._cond:
            if self._shutdown:
                raise RuntimeError("worker pool is shut down")
            self._queue.append(task)
            thread_name = self._grow_locked()
        if thread_name is not None:
            threading.Thread(target=self._run, name=thread_name, daemon=True).start()
        return task

    def abandon(self, task: WorkerTask) -> bool:
        """Give back the worker slot of a running ``task`` the caller no longer waits for.

        Returns whether the slot was given back: not when the task is not running (a queued
        task is skipped by its own code, a done one needs nothing), was already abandoned, or
        ``max_abandoned`` threads are already out of the count (then the slot stays taken until
        the task returns, and that is logged too).
        """
        if task.pool is not None and task.pool is not self:
            return bool(task.pool.abandon(task))
        with self._cond:
            if task.state != "running" or task.abandoned:
                return False
            if self._abandoned >= self._max_abandoned:
                _log.warning(
                    "abandoned blocking handler %s is still running; %d abandoned handler "
                    "threads already (max_abandoned), so its worker slot stays taken",
                    task.name,
                    self._abandoned,
                )
                return False
            task.abandoned = True
            self._abandoned += 1
            self._threads -= 1
            thread_name = self._grow_locked()
            _log.warning(
                "abandoned blocking handler %s is still running on its thread (Python cannot "
                "stop it); its worker slot is given back (%d abandoned handler threads)",
                task.name,
                self._abandoned,
            )
        if thread_name is not None:
            threading.Thread(target=self._run, name=thread_name, daemon=True).start()
        return True

    def shutdown(self) -> None:
        """Stop accepting work; idle workers exit at once, busy ones after their task."""
        with self._cond:
            self._shutdown = True
            self._queue.clear()
            self._cond.notify_all()
            lanes = list(self._lanes.values())
        for pool in lanes:
            pool.shutdown()

    # ------------------------------------------------------------------ internals
    def _grow_locked(self) -> str | None:
        """Keep the invariant: wake a free worker, or count a new one (returns its name)."""
        if len(self._queue) <= self._free:
            # A free worker will take it: wake one that waits (if the one woken had just timed
            # out, it still looks at the queue before exiting).
            self._cond.notify()
            return None
        if self._threads >= self._max:
            return None
        # Count the new worker now, free from the start (it takes a task first thing).
        self._threads += 1
        self._free += 1
        self._seq += 1
        return f"{self._name}-{self._seq}"

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self._shutdown:
                        self._exit_locked()
                        return
                    woken = self._cond.wait(self._idle_seconds)
                    if not woken and not self._queue:
                        # Idle for idle_seconds (a stolen wake-up just waits again).
                        self._exit_locked()
                        return
                task = self._queue.popleft()
                task.state = "running"
                self._free -= 1
            try:
                task.fn()
            except BaseException:  # pragma: no cover - tasks catch their own errors
                _log.exception("worker task %s failed", task.name)
            task.fn = _ran  # the thread keeps ``task`` while idle: not what the callable held
            with self._cond:
                task.state = "done"
                if task.abandoned:  # out of the count already: this thread just ends
                    self._abandoned -= 1
                    _log.info("abandoned blocking handler %s returned; its thread ends", task.name)
                    return
                self._free += 1

    def _exit_locked(self) -> None:
        self._threads -= 1
        self._free -= 1


class ExecutorWorkers:
    """Blocking handlers on an executor the application owns (Java ``handlerExecutor``).

    Same interface as :class:`WorkerPool`. The executor decides how many run at once and names
    its threads; ``abandon`` can only log (the executor owns the thread), and ``shutdown`` does
    not shut the executor down: that is the application's job.
    """

    def __init__(self, executor: concurrent.futures.Executor) -> None:
        if not isinstance(executor, concurrent.futures.Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor, not {type(executor).__name__}"
            )
        self._executor = executor
        self._lock = threading.Lock()
        self._shutdown = False

    @property
    def executor(self) -> concurrent.futures.Executor:
        """The application's executor."""
        return self._executor

    def submit(
        self, fn: Callable[[], Any], *, name: str | None = None, lane: str | None = None
    ) -> WorkerTask:
        """Run ``fn`` on the executor. Raises ``RuntimeError`` after :meth:`shutdown` (or when
        the executor refuses work). ``lane`` is ignored: the executor decides what runs."""
        task = WorkerTask(fn, name or str(getattr(fn, "__qualname__", None) or repr(fn)))
        with self._lock:
            if self._shutdown:
                raise RuntimeError("worker pool is shut down")

        def run() -> None:
            task.state = "running"
            try:
                task.fn()
            except BaseException:  # pragma: no cover - tasks catch their own errors
                _log.exception("worker task %s failed", task.name)
            finally:
                task.state = "done"
                task.fn = _ran

        self._executor.submit(run)
        return task

    def abandon(self, task: WorkerTask) -> bool:
        """Log that ``task`` is abandoned; its thread stays the executor's (returns False)."""
        if task.state == "running" and not task.abandoned:
            task.abandoned = True
            _log.warning(
                "abandoned blocking handler %s is still running on the handler executor's "
                "thread (Python cannot stop it); the executor decides what runs meanwhile",
                task.name,
            )
        return False

    def shutdown(self) -> None:
        """Stop submitting (the executor itself is left running)."""
        with self._lock:
            self._shutdown = True
