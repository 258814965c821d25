"""An in-process transport pair for tests and embedding: client and agent without processes.

:class:`InMemoryTransportPair` connects two :class:`AcpTransport` ends. Each end may run on its
own event loop (the usual case: client and agent on different threads); frames are handed to the
receiving end's loop with ``call_soon_threadsafe`` in send order, batched for speed.

With ``serialize=True`` (default) frames are bytes and follow the stdio rules exactly: sending a
frame that contains ``b"\\n"`` raises ``ValueError`` (stdio rejects it the same way); at the
receiving end one trailing ``b"\\r"`` is removed, blank/whitespace-only frames are skipped and a
frame over ``max_frame_bytes`` is reported with ``on_frame_too_large`` instead of delivered.
With ``serialize=False`` the ends carry decoded values (``carries_objects=True``) and pass the
very same object across; do not mutate a frame after sending it.

This module is *not* responsible for JSON encoding or any ACP semantics.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING, Any

from rxacp._durations import Duration, to_seconds
from rxacp.transport._handoff import ReceiverInbox
from rxacp.transport.base import (
    DEFAULT_MAX_FRAME_BYTES,
    AcpTransport,
    Frame,
    FrameReceiver,
    TransportClosed,
)
from rxacp.transport.framing import call_safely

if TYPE_CHECKING:
    from rxacp.session.completion import Completion

__all__ = ["InMemoryTransport", "InMemoryTransportPair"]

_log = logging.getLogger("rxacp.testing.memory")
_CLOSED = object()  # marker queued after the last frame of a closing peer


class InMemoryTransport(AcpTransport):
    """One end of an :class:`InMemoryTransportPair`."""

    def __init__(self, name: str, *, serialize: bool, max_frame_bytes: int) -> None:
        self.name = name
        self.carries_objects = not serialize
        self._serialize = serialize
        self._max = max_frame_bytes
        self._peer: InMemoryTransport | None = None
        self._lock = threading.Lock()
        # frames (and _CLOSED) waiting for this end's loop
        self._inbox = ReceiverInbox(self._on_item, name=name)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False  # this end closed (sends dropped)

    def close_blocking(self, timeout: Duration = 5.0) -> None:
        """Close this end from another thread, on its own loop, waiting at most ``timeout``
        (a ``timedelta`` or seconds)."""
        seconds = to_seconds(timeout, name="timeout")
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running():
            with self._lock:
                self._closed = True
            return
        future = asyncio.run_coroutine_threadsafe(self.close(), loop)
        try:
            future.result(seconds)
        except Exception:  # a closing peer must not fail the caller's teardown
            _log.debug("closing %s end failed", self.name, exc_info=True)

    def started_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop :meth:`start` was called with (``None`` before it)."""
        return self._loop

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Attach to ``loop``; frames the peer sent before now are delivered right after."""
        with self._lock:
            if self._loop is not None:
                raise RuntimeError(f"{self.name} transport started twice")
            self._loop = loop
            self._inbox.attach(loop, receiver)

    def send(self, frame: Frame) -> None:
        """Hand ``frame`` to the peer (after the stdio checks when serializing)."""
        if self._serialize:
            if not isinstance(frame, bytes | bytearray | memoryview):
                raise TypeError(
                    f"a serializing in-memory transport sends bytes frames, got "
                    f"{type(frame).__name__}; use serialize=False to pass objects"
                )
            frame = bytes(frame)
            if b"\n" in frame:
                raise ValueError("a frame must not contain a newline byte (as with stdio)")
        if self._closed or self._peer is None:
            return
        self._peer._inbox.push(frame)

    async def close(self) -> None:
        """Close this end; the peer sees ``on_closed("peer closed")`` after the frames before."""
        if not self._closed:
            self._closed = True
            if self._peer is not None:
                self._peer._inbox.push(_CLOSED)
        self._inbox.end(TransportClosed("closed"))

    # -- receiving side ----------------------------------------------------------------------

    def _on_item(self, receiver: FrameReceiver, item: Any) -> TransportClosed | None:
        if item is _CLOSED:
            self._closed = True
            return TransportClosed("peer closed")
        if self._serialize:
            self._deliver_bytes(receiver, item)
        else:
            call_safely(receiver.on_frame, item)
        return None

    def _deliver_bytes(self, receiver: FrameReceiver, frame: bytes) -> None:
        """Apply the receiving half of the stdio framing rules (see the module docstring)."""
        if frame[-1:] == b"\r":
            frame = frame[:-1]
        if not frame or frame.isspace():
            return
        if len(frame) > self._max:
            call_safely(receiver.on_frame_too_large, len(frame))
            return
        call_safely(receiver.on_frame, frame)


class InMemoryTransportPair:
    """Two connected in-memory transports: ``client_transport`` and ``agent_transport``.

    Example::

        pair = InMemoryTransportPair.create()
        await pair.client_transport.start(client_loop, client_receiver)
        await pair.agent_transport.start(agent_loop, agent_receiver)
    """

    def __init__(
        self, client_transport: InMemoryTransport, agent_transport: InMemoryTransport
    ) -> None:
        self.client_transport = client_transport
        self.agent_transport = agent_transport

    @classmethod
    def create(
        cls, *, serialize: bool = True, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    ) -> InMemoryTransportPair:
        """Create a connected pair (bytes frames if ``serialize``, else objects)."""
        if isinstance(max_frame_bytes, bool) or not isinstance(max_frame_bytes, int):
            raise TypeError(f"max_frame_bytes must be an int, got {max_frame_bytes!r}")
        if max_frame_bytes < 1:
            raise ValueError(f"max_frame_bytes must be positive, got {max_frame_bytes}")
        client = InMemoryTransport("client", serialize=serialize, max_frame_bytes=max_frame_bytes)
        agent = InMemoryTransport("agent", serialize=serialize, max_frame_bytes=max_frame_bytes)
        client._peer = agent
        agent._peer = client
        return cls(client, agent)

    def close(self, timeout: Duration = 5.0) -> None:
        """Close both ends at once, each on its own loop (an end never started is just marked
        closed). Safe from any thread except the ends' loops; each close waits at most
        ``timeout`` (a ``timedelta`` or seconds)."""
        for end in (self.client_transport, self.agent_transport):
            end.close_blocking(timeout)

    def close_gracefully(self, timeout: Duration | None = None) -> Completion:
        """Close both ends gracefully (each end's ``close_gracefully``: drain, then close, on
        its own loop); returns a :class:`~rxacp.session.Completion` of both (Java
        ``transportPair.closeGracefully()``, already started)::

            close_gracefully() ──▶ --None|     (both ends closed)

        Off the ends' loops it returns once both closed (each bounded by ``timeout``, default
        10 s). An end never started is marked closed.
        """
        from rxacp.session.completion import Completion  # the engine loads on first use only

        parts = []
        for end in (self.client_transport, self.agent_transport):
            if end.started_loop() is None:
                end.close_blocking(0)  # never started: just mark it closed
            parts.append(end.close_gracefully(timeout))
        return Completion.all_of(parts, "transport pair close")
