"""``quiesce``: wait until a connection has nothing left to do, so "nothing happened"
assertions prove something.

A connection is quiet when its event loop ran everything queued before the call (and what that
work queued in turn) and no worker thread is running or waiting to run a blocking handler.
Tests then assert on what was (not) written or called. Timers are not waited for: drive them
with a virtual-time scheduler (``reactivex.testing.TestScheduler``).

This module is *not* a synchronisation primitive for production code; it polls the worker pool.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from .._durations import Duration, wait_seconds

if TYPE_CHECKING:
    from ..session import AcpSession

__all__ = ["quiesce"]

_POLL_S = 0.002


def quiesce(target: Any, timeout: Duration = 30.0, *, workers: bool = True) -> None:
    """Block until ``target``'s connection is quiet (see the module doc).

    ``target`` is an :class:`~rxacp.session.AcpSession` or anything with a ``session``
    attribute holding one (agents, clients, mocks). ``workers=False`` skips waiting for the
    worker pool (when a test keeps a blocking handler running on purpose). Raises
    ``TimeoutError`` naming what was still busy after ``timeout`` seconds (generous by default:
    a loaded machine is slow, a stuck one is a bug).
    """
    session = _session_of(target)
    timeout = wait_seconds(timeout, default=30.0)
    deadline = time.monotonic() + timeout
    while True:
        for _ in range(2):  # what the loop had queued, then what that work queued
            _loop_turn(session, deadline)
        stats = session.worker_stats() if workers else None
        if stats is None:  # not asked to, or a user executor: not observable
            return
        if stats.busy == 0 and stats.queued == 0:
            _loop_turn(session, deadline)  # what the last handler handed to the loop
            after = session.worker_stats()
            if after is None or after.busy == 0:
                return
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"connection not quiet after {timeout:g} s: {stats.busy} worker(s) busy, "
                f"{stats.queued} queued"
            )
        threading.Event().wait(_POLL_S)


def _loop_turn(session: AcpSession, deadline: float) -> None:
    done = threading.Event()
    session.queue_on_loop(done.set)
    if not done.wait(max(1.0, deadline - time.monotonic())):
        raise TimeoutError("the connection's event loop is stuck")


def _session_of(target: Any) -> AcpSession:
    from ..session import AcpSession  # imported late: rxacp.testing stays light to import

    if isinstance(target, AcpSession):
        return target
    for name in ("session", "_session"):
        candidate = getattr(target, name, None)
        if isinstance(candidate, AcpSession):
            return candidate
    raise TypeError(f"quiesce() needs an AcpSession or an object with one, got {target!r}")
