"""The remote endpoint's timers: for one connection, a WebSocket silent after its upgrade, and
a connection idle (no request, no message either way) are ended; for one POST, a body that
does not arrive in time (:class:`BodyDeadline`).

Timers run on an injectable Rx scheduler (``AsyncIOThreadSafeScheduler`` on the app's loop by
default; tests pass ``reactivex.testing.TestScheduler``) and end the connection on the app's
loop. This module is *not* responsible for what ending a connection does (``_app``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from reactivex import abc as rx_abc
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler

from rxacp.transport.http._connection import HttpAcpAgentTransport

__all__ = ["BodyDeadline", "watch_connection"]

_log = logging.getLogger("rxacp.transport.http")


def _on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., object], *args: Any) -> None:
    """Run ``fn(*args)`` on ``loop`` from a timer's thread (dropped once the loop is gone)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


def watch_connection(
    transport: HttpAcpAgentTransport,
    loop: asyncio.AbstractEventLoop,
    scheduler: rx_abc.SchedulerBase | None,
    *,
    idle: float | None,
    first: float | None,
    over: Callable[[HttpAcpAgentTransport, str], None],
) -> None:
    """Arm the timers of one connection; ``over(transport, reason)`` runs on ``loop``."""
    clock = scheduler or AsyncIOThreadSafeScheduler(loop)

    def end(reason: str) -> None:
        _log.info("closing remote connection: %s", reason)
        _on_loop(loop, over, transport, reason)

    if transport.kind == "websocket" and first is not None:

        def silent(_s: rx_abc.SchedulerBase, _state: Any) -> None:
            if transport.delivered == 0 and not transport.ended:
                end(f"no first message within {first:g} s of the upgrade")

        clock.schedule_relative(first, silent)
    if idle is None:
        return
    state = {"last": clock.now}

    def touch() -> None:
        state["last"] = clock.now

    def fired(_s: rx_abc.SchedulerBase, _state: Any) -> None:
        if transport.ended:
            return
        left = idle - (clock.now - state["last"]).total_seconds()
        if left > 0:
            clock.schedule_relative(left, fired)
            return
        end(f"idle timeout: no request or message for {idle:g} s")

    transport.activity = touch
    clock.schedule_relative(idle, fired)


class BodyDeadline:
    """The body-read deadline of one request, armed by the constructor on the running task
    (app loop): ``seconds`` later the read is cancelled, unless :meth:`done` was called first.
    :meth:`done` ends the deadline and says whether it had expired (then the task's
    cancellation is withdrawn, so the caller can answer ``408`` instead)."""

    __slots__ = ("_expired", "_reading", "_task", "_timer")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        scheduler: rx_abc.SchedulerBase | None,
        seconds: float,
    ) -> None:
        self._task = asyncio.current_task(loop)
        self._reading, self._expired = True, False
        clock = scheduler or AsyncIOThreadSafeScheduler(loop)
        self._timer = clock.schedule_relative(seconds, lambda _s, _st: _on_loop(loop, self._expire))

    def _expire(self) -> None:
        if self._reading and self._task is not None:
            self._expired = True
            self._task.cancel()

    def done(self) -> bool:
        if self._reading:
            self._reading = False
            self._timer.dispose()
        if self._expired and self._task is not None:
            self._task.uncancel()
            self._expired = False
            return True
        return False
