"""The one cross-thread hand-off, shared by the engine's loop runner and the transports.

:class:`Handoff` queues items from any thread and hands them, in push order and in batches, to
a callback on one event loop: one wake-up of that loop per batch, however many items a batch
holds. The engine's ``LoopRunner`` hands functions to the connection's loop with it;
:class:`ReceiverInbox` hands frames to a transport's receiver with it (the WebSocket and HTTP
transports and the in-memory pair) and tells the receiver ``on_closed`` exactly once.
:func:`deliver_frame` is the delivery of the transports whose items are frames,
budget-:class:`Reserved` frames and an :class:`Ended` marker. :func:`close_loop` finishes a loop
whose ``run_forever`` returned.

This module is *not* responsible for what the items mean, nor for any transport's state.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from rxacp.transport._budget import Reserved
from rxacp.transport.base import FrameReceiver, TransportClosed
from rxacp.transport.framing import call_safely

__all__ = [
    "OUTBOX_HIGH",
    "OUTBOX_LOW",
    "Ended",
    "Handoff",
    "ReceiverInbox",
    "close_loop",
    "deliver_frame",
]

OUTBOX_HIGH = 256 * 1024
"""Bytes of a connection's outgoing messages not yet taken by the peer (or its socket) over
which the receiver is told ``on_write_paused()`` (its producer threads then wait)."""

OUTBOX_LOW = OUTBOX_HIGH // 4
"""Bytes those must drain to before ``on_write_resumed()``."""

_log = logging.getLogger("rxacp.transport")

_T = TypeVar("_T")


class Handoff(Generic[_T]):
    """Items pushed from any thread, given to ``on_item`` in push order, in batches, on a loop.

    ``push`` queues an item and, unless a drain is already pending, schedules one on the loop
    (without the self-pipe when the pusher runs on that loop). A drain takes exactly the items
    queued when it starts; ones pushed meanwhile get the next drain. ``on_batch`` is an optional
    ``(begin, end)`` pair called around each drain. Items pushed before :meth:`attach` wait for
    it. After :meth:`close` nothing more is delivered: ``push`` refuses, and a drain under way
    stops before its next item.

    Thread safety: ``push``, ``close`` and ``closed`` from any thread; ``attach`` once; the
    callbacks run on the loop only.
    """

    __slots__ = ("_closed", "_items", "_lock", "_loop", "_on_batch", "_on_item", "_scheduled")

    def __init__(
        self,
        on_item: Callable[[_T], object],
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        on_batch: tuple[Callable[[], object], Callable[[], object]] | None = None,
    ) -> None:
        self._on_item = on_item
        self._on_batch = on_batch
        self._lock = threading.Lock()
        self._items: collections.deque[_T] = collections.deque()
        self._scheduled = False  # a drain is queued on the loop
        self._closed = False
        self._loop = loop

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (or the loop was found closed)."""
        return self._closed

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop items are delivered on (``None`` before :meth:`attach`)."""
        return self._loop

    def set_batch_hooks(self, hooks: tuple[Callable[[], object], Callable[[], object]]) -> None:
        """Call ``hooks[0]()`` before and ``hooks[1]()`` after each drain (set before use)."""
        self._on_batch = hooks

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver on ``loop`` from now on; what was pushed earlier right after."""
        with self._lock:
            self._loop = loop
            pending = self._scheduled = bool(self._items) and not self._closed
        if pending:
            loop.call_soon(self._drain)

    def push(self, item: _T, sender_loop: asyncio.AbstractEventLoop | None = None) -> bool:
        """Queue ``item``; False when it was refused (closed, or the loop is closed: then
        the handoff closes and what was queued is dropped). ``sender_loop`` is the caller's
        own loop when it is known."""
        with self._lock:
            if self._closed:
                return False
            self._items.append(item)
            if self._scheduled or self._loop is None:
                return True
            self._scheduled = True
            loop = self._loop
        try:
            if loop is sender_loop:
                loop.call_soon(self._drain)
            else:
                loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop is closed: nothing can run there any more
            self.close()
            return False
        return True

    def close(self) -> list[_T]:
        """Deliver nothing more; returns the items that were queued and not delivered."""
        with self._lock:
            self._closed = True
            dropped = list(self._items)
            self._items.clear()
        return dropped

    def _drain(self) -> None:
        items = self._items
        with self._lock:
            self._scheduled = False
            count = len(items)
        hooks = self._on_batch
        if hooks is not None:
            hooks[0]()
        on_item = self._on_item
        try:
            for _ in range(count):
                with self._lock:
                    if self._closed or not items:
                        return
                    item = items.popleft()
                on_item(item)
        finally:
            if hooks is not None:
                hooks[1]()
            if count:  # interrupted by a BaseException: the rest gets a drain of its own
                with self._lock:
                    again = bool(items) and not self._scheduled and not self._closed
                    self._scheduled = self._scheduled or again
                if again and self._loop is not None:
                    self._loop.call_soon(self._drain)


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
    """Frames (or other items) pushed from any thread, delivered in push order on the
    receiver's loop through one :class:`Handoff`.

    Items pushed before :meth:`attach` wait for it. :meth:`end` tells the receiver
    ``on_closed`` once and drops what is queued and everything pushed later (each dropped
    item goes to ``on_drop``, so a byte budget can give its bytes back).
    """

    __slots__ = ("_ended", "_handoff", "_name", "_on_drop", "_on_item", "receiver")

    def __init__(
        self, on_item: OnItem, *, name: str, on_drop: Callable[[Any], None] | None = None
    ) -> None:
        self._on_item = on_item
        self._on_drop = on_drop
        self._name = name  # for the log line when the receiving loop is gone
        self._handoff: Handoff[Any] = Handoff(self._deliver)
        self._ended = False  # on_closed delivered
        self.receiver: FrameReceiver | None = None
        """Who gets the items (``None`` until :meth:`attach`)."""

    @property
    def ended(self) -> bool:
        """True once the receiver was told ``on_closed``."""
        return self._ended

    def attach(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Deliver to ``receiver`` on ``loop`` from now on; earlier items right after."""
        self.receiver = receiver
        self._handoff.attach(loop)

    def push(self, item: Any, sender_loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Queue ``item``; ``sender_loop`` is the caller's own loop when it is known."""
        if self._handoff.push(item, sender_loop):
            return
        if self._ended:
            self._dropped([item])
        else:  # the receiving loop is closed: nobody can be told any more
            _log.debug("%s: receiving loop closed, frame dropped", self._name)

    def end(self, info: TransportClosed) -> None:
        """Tell the receiver ``on_closed(info)`` unless it was told already (or never attached);
        queued and later items are dropped. Call it on the receiver's loop."""
        receiver = self.receiver
        if self._ended or receiver is None:
            return
        self._ended = True
        self._dropped(self._handoff.close())
        call_safely(receiver.on_closed, info)

    def tell_flow(self, *, paused: bool) -> None:
        """Tell the receiver, on its loop, ``on_write_paused()`` or ``on_write_resumed()``
        (from any thread; nothing before :meth:`attach`)."""
        receiver, loop = self.receiver, self._handoff.loop
        if receiver is None or loop is None:
            return
        callback = receiver.on_write_paused if paused else receiver.on_write_resumed
        with contextlib.suppress(RuntimeError):  # the receiving loop is closed
            loop.call_soon_threadsafe(call_safely, callback)

    def _dropped(self, items: list[Any]) -> None:
        if self._on_drop is not None:
            for item in items:
                call_safely(self._on_drop, item)

    def _deliver(self, item: Any) -> None:
        receiver = self.receiver
        assert receiver is not None
        info = self._on_item(receiver, item)
        if info is not None:
            self.end(info)


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
