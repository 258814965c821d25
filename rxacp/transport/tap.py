"""``WireTapTransport``: wrap any transport to log, record or watch every frame both ways.

::

    tap = WireTapTransport(StdioAcpClientTransport(params), "wire.jsonl")   # JSON lines file
    tap = WireTapTransport(transport, record=True)        # tap.frames: list[WireFrame]
    tap = WireTapTransport(transport, on_frame=print)     # a callback per WireFrame
    client = AcpClient.sync(tap).build()

Each logged message is one JSON line::

    {"timestamp": "2025-01-01T12:00:00.123456+00:00", "direction": "out", "message": {...}}

``direction`` is ``"out"`` for what this side sends and ``"in"`` for what it receives; a frame
that is not valid JSON is logged as ``{"raw": "<text>"}`` instead of ``message``, an oversized
line the inner transport discarded as a ``note``. Incoming frames are seen *before* the engine
parses them, so malformed lines and ``$/cancel_request`` show up too. ``sent`` / ``received``
count messages with or without a log.

This module is *not* responsible for moving frames (the wrapped transport does) nor for their
meaning: it never changes, drops or reorders a frame. Checking what the frames say against the
schema is :mod:`rxacp.schema.strict`.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Literal

from .base import AcpTransport, Frame, FrameReceiver, TransportClosed

__all__ = ["WireFrame", "WireTapTransport"]


@dataclass(frozen=True)
class WireFrame:
    """One frame as it crossed a :class:`WireTapTransport`.

    ``direction`` is ``"in"`` (received) or ``"out"`` (sent); ``raw`` is the frame exactly as
    carried (``bytes`` for serializing transports); ``message`` is its decoded JSON (``None`` if
    it was not valid JSON).
    """

    direction: Literal["in", "out"]
    raw: Frame
    message: Any

    @property
    def method(self) -> str | None:
        """The JSON-RPC method of a request/notification (``None`` for answers)."""
        msg = self.message
        if isinstance(msg, dict) and isinstance(msg.get("method"), str):
            return str(msg["method"])
        return None

    @classmethod
    def of(cls, direction: Literal["in", "out"], frame: Frame) -> WireFrame:
        """Decode ``frame`` (bytes are parsed as JSON; anything else is the message itself)."""
        if isinstance(frame, bytes | bytearray | memoryview):
            try:
                return cls(direction, frame, json.loads(bytes(frame)))
            except ValueError:
                return cls(direction, frame, None)
        return cls(direction, frame, frame)


class _TapReceiver(FrameReceiver):
    """The receiver the inner transport sees: reports each incoming frame, then forwards it
    (flow control too)."""

    def __init__(self, owner: WireTapTransport, inner: FrameReceiver) -> None:
        self._owner = owner
        self._inner = inner

    def on_frame(self, frame: Frame) -> None:
        self._owner._tap("in", frame)
        self._inner.on_frame(frame)

    def on_frame_too_large(self, size: int) -> None:
        self._owner._note("in", f"frame of {size} bytes discarded (too large)")
        self._inner.on_frame_too_large(size)

    def on_closed(self, info: TransportClosed) -> None:
        self._owner._closed()
        self._inner.on_closed(info)

    def on_write_paused(self) -> None:
        self._inner.on_write_paused()

    def on_write_resumed(self) -> None:
        self._inner.on_write_resumed()


class WireTapTransport(AcpTransport):
    """Wraps ``inner``; logs every message to ``log`` and/or records or reports it.

    Args:
        inner: the transport that moves the frames.
        log: a file path (opened and truncated when the transport starts, closed when it
            closes), an open text stream (written and flushed, never closed), or ``None``.
        on_frame: called with each :class:`WireFrame`, on the connection's loop (must not
            block); an exception it raises is not caught.
        record: keep every frame in :attr:`frames` (memory grows with the traffic: for tests
            and short sessions).
        on_close: called once when the incoming stream ended (after the log is closed).
    """

    def __init__(
        self,
        inner: AcpTransport,
        log: str | os.PathLike[str] | IO[str] | None = None,
        *,
        on_frame: Callable[[WireFrame], None] | None = None,
        record: bool = False,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        if not isinstance(inner, AcpTransport):
            raise TypeError(f"WireTapTransport wraps an AcpTransport, not {type(inner).__name__}")
        self._inner = inner
        self._path: str | None = None
        self._stream: IO[str] | None = None
        if isinstance(log, str | os.PathLike):
            self._path = os.fspath(log)
        elif log is not None:
            if not callable(getattr(log, "write", None)):
                raise TypeError(f"log must be a path or a text stream, not {type(log).__name__}")
            self._stream = log
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self._on_frame = on_frame
        self._on_close = on_close
        self._frames: list[WireFrame] | None = [] if record else None
        self.carries_objects = inner.carries_objects
        self.batches_writes = inner.batches_writes
        self.sent = 0
        """Messages sent so far."""
        self.received = 0
        """Messages received so far."""

    @property
    def inner(self) -> AcpTransport:
        """The wrapped transport."""
        return self._inner

    @property
    def path(self) -> str | None:
        """The log file (``None``: no file)."""
        return self._path

    @property
    def frames(self) -> list[WireFrame]:
        """A snapshot of every frame so far, in order (needs ``record=True``)."""
        if self._frames is None:
            raise RuntimeError("this WireTapTransport does not record: pass record=True")
        with self._lock:
            return list(self._frames)

    @property
    def stderr_tail(self) -> str | None:
        """The wrapped transport's ``stderr_tail`` (a spawned agent's last stderr lines)."""
        tail = getattr(self._inner, "stderr_tail", None)
        return tail if isinstance(tail, str) else None

    def started_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop :meth:`start` was called with (``None`` before it)."""
        return self._inner.started_loop()

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Open the log file, then start the wrapped transport with a tapping receiver."""
        if self._path is not None:
            # a local log file, opened once at start (as logging.FileHandler does)
            self._file = open(self._path, "w", encoding="utf-8")  # noqa: SIM115, ASYNC230
        elif self._stream is not None:
            self._file = self._stream
        await self._inner.start(loop, _TapReceiver(self, receiver))

    def send(self, frame: Frame) -> None:
        """Report ``frame`` as outgoing, then hand it to the wrapped transport."""
        self._tap("out", frame)
        self._inner.send(frame)

    async def drain(self) -> None:
        """Drain the wrapped transport."""
        await self._inner.drain()

    def cork(self) -> None:
        """Cork the wrapped transport (frames are reported as they are sent, not when written)."""
        self._inner.cork()

    def uncork(self) -> None:
        """Uncork the wrapped transport."""
        self._inner.uncork()

    def pause_reading(self) -> None:
        """Pause reading on the wrapped transport."""
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        """Resume reading on the wrapped transport."""
        self._inner.resume_reading()

    async def close(self) -> None:
        """Close the wrapped transport, then the log file."""
        try:
            await self._inner.close()
        finally:
            self._close_file()

    # ------------------------------------------------------------------ tapping
    def _tap(self, direction: Literal["in", "out"], frame: Frame) -> None:
        with self._lock:
            if direction == "out":
                self.sent += 1
            else:
                self.received += 1
        watched = self._on_frame is not None or self._frames is not None
        if self._file is None and not watched:
            return
        item = WireFrame.of(direction, frame)
        if self._frames is not None:
            with self._lock:
                self._frames.append(item)
        if self._file is not None:
            entry: dict[str, Any] = {"timestamp": _now(), "direction": direction}
            if item.message is not None or not isinstance(frame, bytes | bytearray | memoryview):
                entry["message"] = item.message
            else:
                entry["raw"] = bytes(frame).decode("utf-8", errors="replace")
            self._write(entry)
        if self._on_frame is not None:
            self._on_frame(item)

    def _note(self, direction: str, note: str) -> None:
        if self._file is not None:
            self._write({"timestamp": _now(), "direction": direction, "note": note})

    def _write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, default=str)
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()

    def _closed(self) -> None:
        self._close_file()
        if self._on_close is not None:
            self._on_close()

    def _close_file(self) -> None:
        with self._lock:
            file, self._file = self._file, None
        if file is not None and file is not self._stream:
            file.close()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
