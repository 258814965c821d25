"""``wait_for``: block the calling thread on a one-value Observable, with a bound.

The thread-blocking shell of the sync APIs (``AcpSyncClient``, ``AcpSyncAgent``,
``SyncPromptContext``). Unlike ``Observable.run()`` it has a timeout and disposes the
subscription when the wait is interrupted (Ctrl-C, timeout), so the peer is told
(``$/cancel_request``).

This module is *not* responsible for what is being waited for.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import reactivex

from ..errors import AcpTimeoutException

__all__ = ["Latch", "Waiter", "wait_for"]


class Latch:
    """A one-shot event: ``set()`` once, ``wait()`` returns True from then on.

    ``threading.Event`` without its ``Condition`` (a lock per wait plus Python-level
    bookkeeping): one lock, released by ``set()``, is the whole mechanism, which makes the
    cross-thread wake-up of every blocking call cheaper.
    """

    __slots__ = ("_flag", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self._flag = False

    def set(self) -> None:
        """Open the latch (idempotent, any thread)."""
        if not self._flag:
            self._flag = True
            with contextlib.suppress(RuntimeError):  # already released by a racing set()
                self._lock.release()

    def is_set(self) -> bool:
        """Whether :meth:`set` was called."""
        return self._flag

    def wait(self, timeout: float | None = None) -> bool:
        """Block until set or ``timeout`` seconds passed (``None``: no bound); True when set."""
        if self._flag:
            return True
        if self._lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            self._lock.release()  # let any other waiter through too
        return self._flag


Waiter = Callable[[Latch, "float | None"], bool]
"""Blocks until the latch is set or the timeout passed; returns whether it was set."""


def _latch_wait(latch: Latch, timeout: float | None) -> bool:
    return latch.wait(timeout)


def wait_for(
    source: reactivex.Observable[Any],
    timeout: float | None,
    *,
    what: str = "call",
    waiter: Waiter = _latch_wait,
) -> Any:
    """Subscribe, wait for the last value (``None`` if empty) or raise the error.

    Raises :class:`AcpTimeoutException` if nothing ends the Observable within ``timeout``
    seconds (``None``: wait forever). Disposes the subscription on timeout or interruption.
    ``waiter`` performs the wait (a test seam: it may raise to simulate Ctrl-C).
    """
    done = Latch()
    box: dict[str, Any] = {}

    def on_next(value: Any) -> None:
        box["value"] = value

    def on_error(error: Exception) -> None:
        box["error"] = error
        done.set()

    subscription = source.subscribe(on_next, on_error, done.set)
    try:
        if not waiter(done, timeout):
            raise AcpTimeoutException(what, timeout or 0.0)
    except BaseException:
        subscription.dispose()
        raise
    if "error" in box:
        raise box["error"]
    return box.get("value")
