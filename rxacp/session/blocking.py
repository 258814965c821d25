"""``wait_for``: block the calling thread on a one-value Observable, with a bound.

The thread-blocking shell of the sync APIs (the roles' blocking twins). Unlike
``Observable.run()`` it has a timeout and disposes the subscription when the wait is
interrupted (Ctrl-C, timeout), so the peer is told (``$/cancel_request``).

This module is *not* responsible for what is being waited for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

import reactivex

from ..errors import AcpTimeoutException

__all__ = ["Waiter", "wait_for"]

_T = TypeVar("_T")

Waiter = Callable[[threading.Event, "float | None"], bool]
"""Blocks until the event is set or the timeout passed; returns whether it was set."""


def _event_wait(event: threading.Event, timeout: float | None) -> bool:
    return event.wait(timeout)


def wait_for(
    source: reactivex.Observable[_T],
    timeout: float | None,
    *,
    what: str = "call",
    waiter: Waiter = _event_wait,
    event: threading.Event | None = None,
) -> _T:
    """Subscribe, wait for the last value (``None`` if empty) or raise the error.

    Typed ``Observable[T] -> T``: an Observable that may complete empty is an
    ``Observable[T | None]``.

    Raises :class:`AcpTimeoutException` if nothing ends the Observable within ``timeout``
    seconds (``None``: wait forever). Disposes the subscription on timeout or interruption.
    ``waiter`` performs the wait (a test seam: it may raise to simulate Ctrl-C) on ``event``
    (default: a new ``threading.Event``; the sync client passes one its waiter sleeps on).
    """
    done = threading.Event() if event is None else event
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
    return cast(_T, box.get("value"))
