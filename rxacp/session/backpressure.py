"""Back-pressure: for producers on threads other than the connection's loop (outbound), and
towards the peer when consumers fall behind (inbound: stop reading).

See ``docs/reliability.md``. This module is *not* responsible for the transport's own buffering;
it only turns the transport's pause/resume signals and a bound on queued hand-offs into waiting
producer threads.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from ..transport.base import AcpTransport
from .loop import LoopRunner
from .stats import SessionStats

__all__ = [
    "MAX_QUEUED_ANSWERS",
    "MAX_QUEUED_WRITES",
    "GatedRunner",
    "InboundGate",
    "OutboundGate",
]

MAX_QUEUED_ANSWERS = 2
"""How many answers other threads (blocking handlers) may have handed to the loop and not yet
seen written; more wait in their threads (issue 30: answers of 1.4 MB piled up in the loop's
queue faster than the transport took them). A request/answer round trip never waits."""

MAX_QUEUED_WRITES = 64
"""Default bound on the writes other threads may queue for the loop (``AcpSession``'s
``max_queued_writes``). Small on purpose: waiting here is also how a producer thread hands the
loop the GIL. A blocking handler streaming updates otherwise keeps the GIL until CPython's 5 ms
switch interval forces it to let go, while the loop thread, woken to write, waits and the peer
sits idle. Measured with the sync reference agent streaming 20k/200k updates on 2 cores, same-run
A/B: 1024 → 64 took it from 60-75k to 112-138k updates/s and its CPU per update from 8.6-11.5
to 6.5-8.0 µs; round trips and fan-out unchanged."""


class InboundGate:
    """Back-pressure towards the peer: stop reading while too much input waits to be handled.

    Consumers that fall behind (an Observable-returning or ``async def`` consumer holds the
    inbox until it finished) would otherwise let every frame the transport reads queue up in
    memory, and so would incoming requests held while the outbound buffer is full (see
    :class:`~rxacp.session.dispatch.InFlightRequests`). When ``high`` items wait (the ordered
    inbox's depth plus the held requests) the transport is asked to :meth:`pause_reading` (the
    peer's writes then block in the OS pipe); once ``low`` are left it resumes. Loop thread only.
    """

    __slots__ = ("_depth", "_held", "_high", "_low", "_paused", "_stats", "_transport")

    def __init__(self, transport: AcpTransport, high: int, stats: SessionStats) -> None:
        if isinstance(high, bool) or not isinstance(high, int):
            raise TypeError(f"max_queued_notifications must be an int, got {high!r}")
        if high < 4:
            raise ValueError(f"max_queued_notifications must be >= 4, got {high}")
        self._transport = transport
        self._high = high
        self._low = high // 4
        self._paused = False
        self._stats = stats
        self._depth = 0  # items in the ordered inbox
        self._held = 0  # incoming requests held while the outbound buffer is full

    @property
    def paused(self) -> bool:
        """True while reading is paused."""
        return self._paused

    def grew(self, depth: int) -> None:
        """The inbox now holds ``depth`` items."""
        self._depth = depth
        self._check()

    def shrank(self, depth: int) -> None:
        """The inbox is down to ``depth`` items."""
        self._depth = depth
        self._check()

    def held(self, count: int) -> None:
        """``count`` incoming requests are now held (not yet handed to their handlers)."""
        self._held = count
        self._check()

    def _check(self) -> None:
        waiting = self._depth + self._held
        if not self._paused and waiting >= self._high:
            self._paused = True
            self._stats.read_pauses += 1
            self._transport.pause_reading()
        elif self._paused and waiting <= self._low:
            self._paused = False
            self._transport.resume_reading()


class OutboundGate:
    """Back-pressure for producers on threads other than the loop (docs/reliability.md).

    Closed while the transport reports its write buffer over its high-water mark
    (:meth:`pause` ... :meth:`resume`, driven by asyncio's ``pause_writing``/``resume_writing``)
    or while ``limit`` hand-offs to the loop are queued and not yet run. A producer thread waits
    in :meth:`enter` until it opens; the loop calls :meth:`leave` when it runs the hand-off.
    The loop thread itself never waits here (it cannot block). :meth:`open_forever` releases
    every waiter when the connection ends.

    ``hold_producers=False`` (the client side) keeps producer threads going while the buffer
    is full (only the ``limit`` holds them): a client's own writes are small requests and
    ``session/cancel``, which must never wait behind an agent that stopped reading. Blocking
    *handlers* wait before they start either way (:meth:`wait_open`): their answers are what
    piles up when the peer sends requests and does not read the answers.
    """

    __slots__ = (
        "_answer_room",
        "_answers",
        "_cond",
        "_forever",
        "_hold_producers",
        "_limit",
        "_lock",
        "_open",
        "_paused",
        "_queued",
        "_stats",
    )

    def __init__(self, limit: int, stats: SessionStats, *, hold_producers: bool = True) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._open = threading.Condition(self._lock)  # handlers waiting in wait_open()
        self._limit = limit
        self._queued = 0
        self._paused = False
        self._forever = False
        self._stats = stats
        self._hold_producers = hold_producers
        self._answer_room = threading.Condition(self._lock)  # threads in answer_queued()
        self._answers = 0  # answers handed to the loop from other threads, not yet written

    @property
    def paused(self) -> bool:
        """True while the transport reports its write buffer full."""
        return self._paused and not self._forever

    def _closed_locked(self) -> bool:
        held = self._paused and self._hold_producers
        return not self._forever and (held or self._queued >= self._limit)

    def enter(self) -> None:
        """Wait (on a producer thread) until a hand-off may be queued, then count it."""
        with self._lock:
            if self._closed_locked():
                self._stats.producer_waits += 1
                while self._closed_locked():
                    self._cond.wait()
            self._queued += 1

    def wait_open(self) -> None:
        """Wait (on a worker thread, before a blocking handler starts) while the transport
        reports its write buffer full; returns at once otherwise, and once the connection
        ended."""
        with self._lock:
            if self._paused and not self._forever:
                self._stats.producer_waits += 1
                while self._paused and not self._forever:
                    self._open.wait()

    def answer_queued(self) -> None:
        """Count one answer a thread hands to the loop; first wait (on that thread) while
        :data:`MAX_QUEUED_ANSWERS` are queued and not yet written, or until the connection
        ended. So answers computed faster than the transport takes them wait in their
        workers (at most one each), not in the loop's queue, and the pause the written ones
        cause is seen before the next handler starts (:meth:`wait_open`)."""
        with self._lock:
            if not self._forever and self._answers >= MAX_QUEUED_ANSWERS:
                self._stats.producer_waits += 1
                while not self._forever and self._answers >= MAX_QUEUED_ANSWERS:
                    self._answer_room.wait()
            self._answers += 1

    def answer_written(self) -> None:
        """The loop wrote (or dropped) one answer counted by :meth:`answer_queued`."""
        with self._lock:
            self._answers -= 1
            self._answer_room.notify()

    def leave(self, count: int = 1) -> None:
        """The loop ran ``count`` queued hand-offs (one batch: one lock round trip)."""
        with self._lock:
            self._queued -= count
            if self._queued < self._limit and not (self._paused and self._hold_producers):
                self._cond.notify(count)

    def pause(self) -> None:
        """The transport's write buffer went over its high-water mark."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        """The transport's write buffer drained below its low-water mark."""
        with self._cond:
            self._paused = False
            self._cond.notify_all()
            self._open.notify_all()

    def open_forever(self) -> None:
        """The connection ended: release every waiting producer, never block again."""
        with self._cond:
            self._forever = True
            self._cond.notify_all()
            self._open.notify_all()
            self._answer_room.notify_all()


class GatedRunner(LoopRunner):
    """The session's loop runner: hand-offs queued from other threads pass the outbound gate.

    ``call_later`` from a foreign thread is how blocking code (a sync prompt handler's
    ``send_update``) queues writes, so that is where a producer waits when the outbound buffer
    is full. Calls made on the loop, and ``call``, are never gated (answers are never held).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop | None, *, name: str, gate: OutboundGate
    ) -> None:
        super().__init__(loop, name=name)
        self._gate = gate

    def call_later(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` on the loop; a producer thread first waits for the gate to open."""
        if self.in_loop():
            super().call_later(fn)
            return
        self._gate.enter()
        self._call_counted(fn)  # released in bulk when its batch has run

    def _batch_ran(self, counted: int) -> None:
        self._gate.leave(counted)
