"""The core of every WebSocket transport: one connection's frames in and out.

:class:`_WebSocketTransport` drives one ``websockets`` connection on its own loop (the *ws
loop*): it reads messages and hands them to the receiver's loop in arrival order, batched;
it queues outgoing frames and writes them on the ws loop; it reports the end of the
connection once, and closes it (bounded by ``close_timeout``) from any loop.

This module is *not* responsible for establishing the connection (the client connects, the
agent side accepts), for idle timeouts, nor for serving many connections.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from typing import Any

from websockets.asyncio.connection import Connection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.protocol import State

from rxacp.transport._budget import ByteBudget, Reserved, release_dropped
from rxacp.transport._handoff import (
    OUTBOX_HIGH,
    OUTBOX_LOW,
    Ended,
    ReceiverInbox,
    deliver_frame,
)
from rxacp.transport._websocket_admission import _AdmittedServerConnection
from rxacp.transport._websocket_common import (
    _CLOSE_GRACE,
    _describe_close,
    _log,
    _Options,
    _running_loop,
)
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed

__all__ = ["MAX_BACKLOG", "OUTBOX_HIGH", "OUTBOX_LOW", "_WebSocketTransport"]

MAX_BACKLOG = 16 * 1024 * 1024
"""Bytes of queued outgoing messages (writes from the loop thread cannot wait): while more than
this is unread and the peer reads nothing for a whole check (about a second), the connection is
closed with code 1008 (the peer is not reading)."""


_STALL_CHECK = 1.0  # seconds between backlog checks while more than MAX_BACKLOG is queued


async def _wait_or_closed(gate: asyncio.Event, ws: Connection) -> None:
    """Wait until ``gate`` is set, or the connection ends (recv then raises ConnectionClosed)."""
    waits = [asyncio.ensure_future(gate.wait()), asyncio.ensure_future(ws.wait_closed())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


class _WebSocketTransport(AcpTransport):
    """One WebSocket connection, driven on its own loop (``ws loop``); frames are handed to the
    receiver's loop (which may be another thread's) in arrival order, batched."""

    _flow_control = False
    """Agent side: tell the receiver ``on_write_paused()``/``on_write_resumed()`` and stop
    reading while the outbox is over its marks (as the stdio agent transport does). The
    client side never stops reading (two sides both waiting for the other would deadlock)."""

    def _init_core(self, options: _Options) -> None:
        self._opts = options
        self._lock = threading.Lock()
        self._ws: Connection | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None
        self._rx_loop: asyncio.AbstractEventLoop | None = None
        self._inbox = ReceiverInbox(deliver_frame, name="WebSocket", on_drop=release_dropped)
        self._budget: ByteBudget | None = None  # server side: the budget messages were read in
        self._outbox: collections.deque[Any] = collections.deque()
        self._out_scheduled = False
        self._out_event: asyncio.Event | None = None
        self._closed = False  # close() called: sends are dropped
        self._out_bytes = 0  # bytes queued in _outbox, not yet handed to the socket
        self._out_paused = False  # over OUTBOX_HIGH: the receiver was told on_write_paused
        self._overflowed = False  # over MAX_BACKLOG: the connection is being closed
        self._watching = False  # a _watch_backlog timer is armed
        self._sent_total = 0  # bytes of messages the socket took, ever (the peer reads)
        self._read_gate: asyncio.Event | None = None  # cleared while the outbox is paused
        self._activity: Callable[[], None] | None = None  # a message was sent
        self._received: Callable[[], None] | None = None  # a message arrived

    def started_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop :meth:`start` was called with (``None`` before it)."""
        return self._rx_loop

    # -- receiving (ws loop → receiver loop) -------------------------------------------------
    def _attach(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        with self._lock:
            if self._inbox.receiver is not None:
                raise RuntimeError(f"{type(self).__name__} started twice")
            self._rx_loop = loop
            self._inbox.attach(loop, receiver)

    def _push(self, item: Any) -> None:
        self._inbox.push(item, self._ws_loop)  # called on the ws loop

    # -- sending (receiver loop → ws loop) ---------------------------------------------------
    def send(self, frame: Frame) -> None:
        """Queue one message as a text frame (bytes are sent as UTF-8 text); never blocks."""
        if isinstance(frame, bytearray | memoryview):
            frame = bytes(frame)
        elif not isinstance(frame, bytes | str):
            raise TypeError(f"a WebSocket transport sends bytes or str frames, got {type(frame)}")
        self._enqueue(frame)

    def _enqueue(self, item: Any) -> bool:
        size = len(item) if isinstance(item, bytes | str) else 0
        with self._lock:
            if self._closed or self._overflowed or self._ws_loop is None or self._out_event is None:
                return False
            self._outbox.append(item)
            self._out_bytes += size
            pause = self._flow_control and not self._out_paused and self._out_bytes > OUTBOX_HIGH
            watch = not self._watching and self._out_bytes - size > MAX_BACKLOG
            if pause:
                self._out_paused = True
            if watch:
                self._watching = True
            scheduled, self._out_scheduled = self._out_scheduled, True
            loop, event = self._ws_loop, self._out_event
        if pause:
            self._flow(paused=True)
        if watch:
            self._call_on(loop, self._watch_backlog)
        if scheduled:
            return True
        try:
            if loop is self._rx_loop and loop is _running_loop():
                event.set()
            else:
                loop.call_soon_threadsafe(event.set)
        except RuntimeError:
            return False
        return True

    async def drain(self) -> None:
        """Wait until every frame queued so far was handed to the socket."""
        marker: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self._enqueue(marker):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(marker), self._opts.close_timeout)

    async def _write_loop(self, ws: Connection, event: asyncio.Event) -> None:
        try:
            while True:
                await event.wait()
                event.clear()
                with self._lock:
                    batch = list(self._outbox)
                    self._outbox.clear()
                    self._out_scheduled = False
                for item in batch:
                    if isinstance(item, concurrent.futures.Future):
                        item.set_result(None)
                        continue
                    await ws.send(item, text=True)
                    self._sent(len(item))
                    if self._activity is not None:
                        self._activity()
        except ConnectionClosed:
            pass  # the reader reports the close
        finally:
            self._release_markers()

    def _watch_backlog(self, last: tuple[int, int] | None = None) -> None:
        """ws loop, while more than ``MAX_BACKLOG`` is queued: every ``_STALL_CHECK`` seconds,
        close the connection (1008) if the socket stayed backed up and the peer read nothing
        since the last check (no send completed, the socket's buffer did not shrink).

        A timer, not a check around each send: the send that fills the socket's buffer waits
        in ``drain`` for as long as the peer does not read, and a burst queued before the
        socket backed up is followed by no other ``send`` that could notice."""
        buffered, high = self._socket_buffer()
        with self._lock:
            if self._closed or self._overflowed or self._out_bytes <= MAX_BACKLOG:
                self._watching = False
                return
            mark = (self._sent_total, buffered)
            stuck = last is not None and mark[0] == last[0] and mark[1] >= last[1]
            overflow = stuck and buffered >= high  # the socket itself is backed up
            if overflow:
                self._overflowed, self._watching = True, False
        loop = self._ws_loop
        assert loop is not None
        if overflow:
            self._overflow(loop)
        else:
            loop.call_later(_STALL_CHECK, self._watch_backlog, mark)

    @staticmethod
    def _call_on(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: the connection is gone
            if loop is _running_loop():
                loop.call_soon(callback)
            else:
                loop.call_soon_threadsafe(callback)

    def _socket_buffer(self) -> tuple[int, int]:
        """Bytes in the socket's own write buffer and its high-water mark (0, 1 when unknown)."""
        transport = getattr(self._ws, "transport", None)
        try:
            if transport is not None:
                return transport.get_write_buffer_size(), transport.get_write_buffer_limits()[1]
        except Exception:
            pass
        return 0, 1

    def _sent(self, size: int) -> None:
        with self._lock:
            self._out_bytes -= size
            self._sent_total += size
            resume = self._out_paused and self._out_bytes <= OUTBOX_LOW
            if resume:
                self._out_paused = False
        if resume:
            self._flow(paused=False)

    def _flow(self, paused: bool) -> None:
        """Tell the receiver (on its loop) that the outbox passed / drained below its marks;
        while paused, stop reading the peer's messages (ws loop)."""
        ws_loop, gate = self._ws_loop, self._read_gate
        if ws_loop is not None and gate is not None:
            with contextlib.suppress(RuntimeError):
                ws_loop.call_soon_threadsafe(gate.clear if paused else gate.set)
        self._inbox.tell_flow(paused=paused)

    def _overflow(self, loop: asyncio.AbstractEventLoop) -> None:
        """More than MAX_BACKLOG bytes unread by the peer: close the connection (1008)."""
        reason = f"the peer is not reading: more than {MAX_BACKLOG} bytes of messages unread"
        _log.warning("closing a WebSocket connection with code 1008: %s", reason)
        self._release_markers()  # the unread messages are dropped now, not at the close

        def close() -> None:
            ws = self._ws
            if ws is not None:
                loop.create_task(self._close_unread(ws, reason))

        self._call_on(loop, close)

    async def _close_unread(self, ws: Connection, reason: str) -> None:
        """Close with 1008, bounded by ``close_timeout``: the close frame waits behind the
        unread data (``websockets`` drains before its own close timeout starts), so a peer
        that never reads is cut off (the TCP connection aborted) instead of kept open."""
        try:
            await asyncio.wait_for(
                ws.close(CloseCode.POLICY_VIOLATION, reason), self._opts.close_timeout
            )
        except Exception:  # TimeoutError, or the connection failed while closing
            _log.debug("WebSocket close (1008) not completed; aborting the connection")
            ws.transport.abort()

    def _release_markers(self) -> None:
        with self._lock:
            items = list(self._outbox)
            self._outbox.clear()
            self._out_bytes = 0
        for item in items:
            if isinstance(item, concurrent.futures.Future) and not item.done():
                item.set_result(None)

    # -- the connection's life (ws loop) -----------------------------------------------------
    def _bind(self, ws: Connection, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._ws, self._ws_loop, self._out_event = ws, loop, asyncio.Event()
            self._read_gate = asyncio.Event()
            if not self._out_paused:
                self._read_gate.set()

    async def _run(self) -> None:
        """Read until the connection ends (then report it); writes run alongside."""
        ws, event, gate = self._ws, self._out_event, self._read_gate
        assert ws is not None and event is not None and gate is not None
        writer = asyncio.get_running_loop().create_task(self._write_loop(ws, event))
        try:
            while True:
                if not gate.is_set():  # the peer does not read our messages: stop reading its
                    await _wait_or_closed(gate, ws)
                data = await ws.recv(decode=False)
                if self._received is not None:
                    self._received()
                budget = self._budget
                # admitted into the budget before it was read (the connection waited, not
                # reading, while others' were read and parsed); released once parsed
                size = ws.take_message() if isinstance(ws, _AdmittedServerConnection) else 0
                self._push(Reserved(data, size, budget) if budget is not None and size else data)
        except ConnectionClosed as exc:
            self._push(Ended(_describe_close(exc, self._opts.max_message_size)))
        except Exception as exc:
            _log.warning("WebSocket read failed", exc_info=True)
            self._push(Ended(TransportClosed("WebSocket read failed", error=exc)))
            with contextlib.suppress(Exception):
                await ws.close(CloseCode.INTERNAL_ERROR, "read failed")
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    async def _close_ws(self, code: int, reason: str) -> None:
        """Close the WebSocket (on its loop, from any loop), bounded by ``close_timeout``."""
        ws, loop = self._ws, self._ws_loop
        if ws is None or loop is None or loop.is_closed():
            return
        if loop is _running_loop():
            await ws.close(code, reason)
            return
        if ws.state is State.CLOSED:
            return
        coro = ws.close(code, reason)
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                asyncio.wrap_future(future), self._opts.close_timeout + _CLOSE_GRACE
            )

    async def close(self) -> None:
        """Close at once: queued frames are dropped, the peer gets close code 1000. Idempotent;
        ``on_closed`` is reported before this returns."""
        with self._lock:
            first = not self._closed
            self._closed = True
        self._release_markers()
        self._inbox.end(TransportClosed("closed"))
        if first:
            await self._close_ws(CloseCode.NORMAL_CLOSURE, "closed")
            await self._after_close()

    async def _after_close(self) -> None:
        """Hook: what a subclass releases after its connection closed."""
