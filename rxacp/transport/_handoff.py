"""Hand-offs between event loops, shared by the transports and the engine's loop runner.

:class:`ReceiverInbox` queues items from any thread and hands them, in order and in batches, to
the receiver on its loop, and tells the receiver ``on_closed`` exactly once (the WebSocket
transports and the in-memory pair deliver frames this way); :func:`deliver_frame` is the
delivery of the transports whose items are frames, budget-:class:`Reserved` frames and an
:class:`Ended` marker. :func:`close_loop` finishes a loop whose ``run_forever`` returned.

This module is *not* responsible for what the items mean, nor for any transport's state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from rxacp.transport._budget import Reserved
from rxacp.transport.base import FrameReceiver, TransportClosed
from rxacp.transport.framing import call_safely

__all__ = ["OUTBOX_HIGH", "OUTBOX_LOW", "Ended", "ReceiverInbox", "close_loop", "deliver_frame"]

OUTBOX_HIGH = 256 * 1024
"""Bytes of a connection's outgoing messages not yet taken by the peer (or its socket) over
which the receiver is told ``on_write_paused()`` (its producer threads then wait)."""

OUTBOX_LOW = OUTBOX_HIGH // 4
"""Bytes those must drain to before ``on_write_resumed()``."""

_log = logging.getLogger("rxacp.transport")


OnItem = Callable[[FrameReceiver, Any], TransportClosed | None]
"""Hands one item to the receiver, on its loop; returns why the transport ended when the item
is the end marker (the inbox then reports it and delivers nothing more)."""


class Ended:
    """The last item a transport pushes: it ended, ``info`` says why."""

    __slots__ = ("info",)

    def __init__(self, info: TransportClosed) -> None:
        self.info = info


def deliver_frame(receiver: FrameReceiver, item: Any) -> TransportClosed | None:
    """:data:`OnItem` of a transport's frames: ``on_frame`` for a frame (a :class:`Reserved`
    one gives its budget bytes back once the receiver took it), the end for :class:`Ended`."""
    if isinstance(item, Ended):
        return item.info
    if isinstance(item, Reserved):
        try:
            call_safely(receiver.on_frame, item.frame)
        finally:
            item.release()
        return None
    call_safely(receiver.on_frame, item)
    return None


class ReceiverInbox:
    """Items pushed from any thread, delivered in push order, in batches, on the receiver's loop.

    ``push`` queues an item and, unless a drain is already pending, schedules one on the
    receiving loop. Items pushed before :meth:`attach` wait for it. :meth:`end` tells the
    receiver ``on_closed`` once and drops what is queued and everything pushed later.
    """

    __slots__ = (
        "_ended",
        "_items",
        "_lock",
        "_loop",
        "_name",
        "_on_drop",
        "_on_item",
        "_scheduled",
        "receiver",
    )

    def __init__(
        self, on_item: OnItem, *, name: str, on_drop: Callable[[Any], None] | None = None
    ) -> None:
        self._on_item = on_item
        self._on_drop = on_drop  # told about each item dropped undelivered (after the end)
        self._name = name  # for the log line when the receiving loop is gone
        self._lock = threading.Lock()
        self._items: list[Any] = []
        self._scheduled = False  # a drain is queued on the receiving loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ended = False  # on_closed delivered
        self.receiver: FrameReceiver | None = None
        """Who gets the items (``None`` until :meth:`attach`)."""

    @property
    def ended(self) -> bool:
        """True once the receiver was told ``on_closed``."""
        return self._ended

    def attach(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Deliver to ``receiver`` on ``loop`` from now on; earlier items right after."""
        with self._lock:
            self._loop, self.receiver = loop, receiver
            pending = self._scheduled = bool(self._items)
        if pending:
            loop.call_soon(self._drain)

    def push(self, item: Any, sender_loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Queue ``item``; ``sender_loop`` is the caller's own loop when it is known (a drain
        for that same loop is then scheduled without waking it through its self-pipe)."""
        with self._lock:
            ended = self._ended
            if not ended:
                self._items.append(item)
                if self._scheduled or self._loop is None:
                    return
                self._scheduled = True
                loop = self._loop
        if ended:
            self._dropped([item])
            return
        try:
            if loop is sender_loop:
                loop.call_soon(self._drain)
            else:
                loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the receiving loop is closed: nobody can be told any more
            _log.debug("%s: receiving loop closed, frame dropped", self._name)

    def end(self, info: TransportClosed) -> None:
        """Tell the receiver ``on_closed(info)`` unless it was told already (or never attached);
        queued and later items are dropped. Call it on the receiver's loop."""
        with self._lock:
            receiver = self.receiver
            if self._ended or receiver is None:
                return
            self._ended = True
            dropped, self._items = self._items, []
        self._dropped(dropped)
        call_safely(receiver.on_closed, info)

    def tell_flow(self, *, paused: bool) -> None:
        """Tell the receiver, on its loop, ``on_write_paused()`` or ``on_write_resumed()``
        (from any thread; nothing before :meth:`attach`)."""
        receiver, loop = self.receiver, self._loop
        if receiver is None or loop is None:
            return
        callback = receiver.on_write_paused if paused else receiver.on_write_resumed
        with contextlib.suppress(RuntimeError):  # the receiving loop is closed
            loop.call_soon_threadsafe(call_safely, callback)

    def _dropped(self, items: list[Any]) -> None:
        if self._on_drop is not None:
            for item in items:
                call_safely(self._on_drop, item)

    def _drain(self) -> None:
        with self._lock:
            items, self._items, self._scheduled = self._items, [], False
        receiver, on_item = self.receiver, self._on_item
        assert receiver is not None
        for index, item in enumerate(items):
            if self._ended:
                self._dropped(items[index:])
                return
            info = on_item(receiver, item)
            if info is not None:
                self.end(info)
                self._dropped(items[index + 1 :])
                return


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
