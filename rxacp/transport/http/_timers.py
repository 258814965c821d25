"""The remote endpoint's timers for one connection: a WebSocket silent after its upgrade, and
a connection idle (no request, no message either way) are ended.

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

__all__ = ["watch_connection"]

_log = logging.getLogger("rxacp.transport.http")


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
        with contextlib.suppress(RuntimeError):  # the app's loop is gone
            loop.call_soon_threadsafe(over, transport, reason)

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
