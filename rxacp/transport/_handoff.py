"""Hand-offs between event loops, shared by the transports and the engine's loop runner.

:class:`ReceiverInbox` queues items from any thread and hands them, in order and in batches, to
one callback on the receiving loop (the WebSocket transports and the in-memory pair deliver
frames this way). :func:`close_loop` finishes a loop whose ``run_forever`` returned.

This module is *not* responsible for what the items mean, nor for any transport's state.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ReceiverInbox", "close_loop"]

_log = logging.getLogger("rxacp.transport")


class ReceiverInbox:
    """Items pushed from any thread, delivered in push order as batches on one receiving loop.

    ``push`` queues an item and, unless a drain is already pending, schedules one on the
    receiving loop. Items pushed before :meth:`attach` wait for it. :meth:`discard` drops what
    is queued and everything pushed later (the receiver was told the end).
    """

    __slots__ = ("_deliver", "_discarded", "_items", "_lock", "_loop", "_name", "_scheduled")

    def __init__(self, deliver: Callable[[list[Any]], None], *, name: str) -> None:
        self._deliver = deliver  # called on the receiving loop with each batch
        self._name = name  # for the log line when the receiving loop is gone
        self._lock = threading.Lock()
        self._items: list[Any] = []
        self._scheduled = False  # a drain is queued on the receiving loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._discarded = False

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver on ``loop`` from now on; items pushed before are delivered right after."""
        with self._lock:
            self._loop = loop
            pending = self._scheduled = bool(self._items)
        if pending:
            loop.call_soon(self._drain)

    def push(self, item: Any, sender_loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Queue ``item``; ``sender_loop`` is the caller's own loop when it is known (a drain
        for that same loop is then scheduled without waking it through its self-pipe)."""
        with self._lock:
            if self._discarded:
                return
            self._items.append(item)
            if self._scheduled or self._loop is None:
                return
            self._scheduled = True
            loop = self._loop
        try:
            if loop is sender_loop:
                loop.call_soon(self._drain)
            else:
                loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the receiving loop is closed: nobody can be told any more
            _log.debug("%s: receiving loop closed, frame dropped", self._name)

    def discard(self) -> None:
        """Drop the queued items and every later push."""
        with self._lock:
            self._discarded = True
            self._items = []

    def _drain(self) -> None:
        with self._lock:
            items, self._items, self._scheduled = self._items, [], False
        self._deliver(items)


def close_loop(loop: asyncio.AbstractEventLoop, *, join_executor: bool = False) -> None:
    """Finish ``loop`` after its ``run_forever`` returned: cancel and await its unfinished
    tasks, finish its async generators, join its default executor if ``join_executor`` (not
    where a thread of it may block on a user's stdin), and close it."""
    try:
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        if join_executor:
            loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
