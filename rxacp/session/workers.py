"""A bounded pool of daemon worker threads for blocking (sync) handlers.

Sync handlers must never run on the connection's event loop. This pool runs them on daemon
threads, so a handler that ignores cancellation can be *abandoned* (the SDK answers for it) without
blocking interpreter exit, which ``concurrent.futures.ThreadPoolExecutor`` would do.

This module is *not* responsible for cancellation or answers; it only runs callables.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["WorkerPool"]

_log = logging.getLogger("rxacp.session.workers")


class WorkerPool:
    """Runs callables on up to ``max_workers`` daemon threads, started on demand.

    Idle threads wait ``idle_seconds`` for more work, then exit, so an idle connection holds no
    threads. ``shutdown()`` makes idle workers exit; busy ones finish their current task first
    (they are daemons, so an abandoned one never blocks exit).
    """

    def __init__(
        self, max_workers: int = 32, *, name: str = "rxacp-worker", idle_seconds: float = 30.0
    ):
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self._max = max_workers
        self._name = name
        self._idle_seconds = idle_seconds
        self._queue: collections.deque[Callable[[], Any]] = collections.deque()
        self._cond = threading.Condition()
        self._threads = 0
        self._idle = 0
        self._shutdown = False
        self._seq = 0

    @property
    def thread_count(self) -> int:
        """Number of live worker threads."""
        with self._cond:
            return self._threads

    @property
    def busy_count(self) -> int:
        """Number of workers currently running a task."""
        with self._cond:
            return self._threads - self._idle

    def submit(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` to run on a worker. Exceptions escaping ``fn`` are logged."""
        with self._cond:
            if self._shutdown:
                raise RuntimeError("worker pool is shut down")
            self._queue.append(fn)
            if self._idle > 0:
                self._cond.notify()
                return
            if self._threads >= self._max:
                return
            self._threads += 1
            self._seq += 1
            name = f"{self._name}-{self._seq}"
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def shutdown(self) -> None:
        """Stop accepting work; idle workers exit at once, busy ones after their task."""
        with self._cond:
            self._shutdown = True
            self._queue.clear()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self._shutdown:
                        self._threads -= 1
                        return
                    self._idle += 1
                    woke = self._cond.wait(self._idle_seconds)
                    self._idle -= 1
                    if not woke and not self._queue:
                        self._threads -= 1
                        return
                fn = self._queue.popleft()
            try:
                fn()
            except BaseException:  # pragma: no cover - tasks catch their own errors
                _log.exception("worker task failed")
