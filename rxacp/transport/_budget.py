"""A server-wide budget of incoming bytes being read and parsed: :class:`ByteBudget`.

One budget is shared by every connection of a server (the ASGI app, the WebSocket server), so
the memory taken by messages that arrived and are not yet handed to their agent is bounded
across connections, not only per message: a connection reserves a message's bytes before it
reads (or right after the transport library read) it and releases them once the agent's
engine parsed the message. A reservation that does not fit waits (WebSocket: that
connection stops reading) or is refused (HTTP: ``503``), and never exceeds the limit.

This module is *not* responsible for per-message caps (each transport's ``max_message_size``)
nor for what the bytes mean.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "ByteBudget",
    "Reserved",
    "release_dropped",
    "reserve_unless",
]

DEFAULT_BUDGET_BYTES = 64 * 1024 * 1024
"""Default server-wide budget of incoming bytes being parsed (64 MiB)."""


class ByteBudget:
    """At most ``limit`` bytes reserved at once, across threads and event loops.

    ``try_reserve(n)`` takes ``n`` bytes if they fit; ``await reserve(n)`` waits until they
    do (a single reservation larger than the limit is capped at the limit, so one maximal
    message can always pass alone); ``release(n)`` gives them back.
    """

    def __init__(self, limit: int = DEFAULT_BUDGET_BYTES) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"the byte budget must be an int >= 1 (bytes), got {limit!r}")
        self.limit = limit
        self._used = 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def in_use(self) -> int:
        """Bytes reserved now."""
        return self._used

    def clamp(self, size: int) -> int:
        """What a reservation of ``size`` bytes takes (at most the whole budget)."""
        return min(max(size, 0), self.limit)

    def try_reserve(self, size: int) -> bool:
        """Reserve ``clamp(size)`` bytes if they fit now; True when reserved."""
        size = self.clamp(size)
        with self._lock:
            if self._used + size > self.limit:
                return False
            self._used += size
            return True

    async def reserve(self, size: int) -> None:
        """Reserve ``clamp(size)`` bytes, waiting until they fit (cancellable)."""
        loop = asyncio.get_running_loop()
        size = self.clamp(size)
        while not self.try_reserve(size):
            future: asyncio.Future[None] = loop.create_future()
            with self._lock:  # checked under the lock: a release cannot slip in between
                fits = self._used + size <= self.limit
                if not fits:
                    self._waiters.append((loop, future))
            if not fits:
                await future

    def release(self, size: int) -> None:
        """Give back a reservation of ``size`` bytes (the same size that was reserved)."""
        with self._lock:
            self._used = max(0, self._used - max(size, 0))
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed
                loop.call_soon_threadsafe(_wake, future)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Reserved:
    """An incoming frame holding ``size`` bytes of ``budget`` until :meth:`release` (called
    once the agent's engine took the frame, or when the frame is dropped undelivered)."""

    __slots__ = ("_budget", "frame", "size")

    def __init__(self, frame: Any, size: int, budget: ByteBudget) -> None:
        self.frame, self.size, self._budget = frame, size, budget

    def release(self) -> None:
        """Give the bytes back (idempotent)."""
        size, self.size = self.size, 0
        if size:
            self._budget.release(size)


def release_dropped(item: Any) -> None:
    """``ReceiverInbox`` ``on_drop``: release a dropped :class:`Reserved` frame's bytes."""
    if isinstance(item, Reserved):
        item.release()


async def reserve_unless(budget: ByteBudget, size: int, stop: Callable[[], Awaitable[Any]]) -> bool:
    """Reserve ``size`` bytes of ``budget``, waiting, unless ``stop()`` completes first (e.g. the
    connection closed): True when reserved, False (nothing reserved) when stopped."""
    if budget.try_reserve(size):
        return True
    reserving = asyncio.ensure_future(budget.reserve(size))
    stopping = asyncio.ensure_future(stop())
    try:
        await asyncio.wait({reserving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not reserving.done():
            reserving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reserving
    return not reserving.cancelled()
