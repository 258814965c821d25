"""``WireLogTransport``: a transport wrapper that records every JSON-RPC message it carries.

Each message becomes one JSON line in the log file::

    {"timestamp": "2025-01-01T12:00:00.123456+00:00", "direction": "out", "message": {...}}

``direction`` is ``"out"`` for what this side sends and ``"in"`` for what it receives; a frame
that is not valid JSON is logged as ``{"raw": "<text>"}`` instead of ``message``. The wrapper also
counts messages (``sent`` / ``received``), with or without a file.

This module is *not* responsible for moving frames (the wrapped transport does) nor for their
meaning: it never changes, drops or reorders a frame.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import threading
from typing import IO, Any

from ..transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed

__all__ = ["WireLogTransport"]


class _LoggingReceiver:
    """Forwards every callback to the real receiver, logging incoming frames first."""

    def __init__(self, owner: WireLogTransport, inner: FrameReceiver) -> None:
        self._owner = owner
        self._inner = inner

    def on_frame(self, frame: Frame) -> None:
        self._owner._record("in", frame)
        self._inner.on_frame(frame)

    def on_frame_too_large(self, size: int) -> None:
        self._owner._record_note("in", f"frame of {size} bytes discarded (too large)")
        self._inner.on_frame_too_large(size)

    def on_closed(self, info: TransportClosed) -> None:
        self._owner._close_file()
        self._inner.on_closed(info)


class WireLogTransport(AcpTransport):
    """Wraps ``inner`` and appends one JSON line per message to ``path`` (``None``: count only).

    The file is opened (truncated) when the transport starts and closed when it closes.
    """

    def __init__(self, inner: AcpTransport, path: str | os.PathLike[str] | None) -> None:
        if not isinstance(inner, AcpTransport):
            raise TypeError(f"WireLogTransport wraps an AcpTransport, not {type(inner).__name__}")
        self._inner = inner
        self._path = None if path is None else os.fspath(path)
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self.carries_objects = inner.carries_objects
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
        """The log file (``None``: counting only)."""
        return self._path

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Open the log file, then start the wrapped transport with a logging receiver."""
        if self._path is not None:
            self._file = open(self._path, "w", encoding="utf-8")  # noqa: SIM115 - closed on close
        await self._inner.start(loop, _LoggingReceiver(self, receiver))

    def send(self, frame: Frame) -> None:
        """Log ``frame`` as outgoing, then hand it to the wrapped transport."""
        self._record("out", frame)
        self._inner.send(frame)

    async def drain(self) -> None:
        """Drain the wrapped transport."""
        await self._inner.drain()

    async def close(self) -> None:
        """Close the wrapped transport, then the log file."""
        try:
            await self._inner.close()
        finally:
            self._close_file()

    # -- logging -----------------------------------------------------------------------------
    def _record(self, direction: str, frame: Frame) -> None:
        with self._lock:
            if direction == "out":
                self.sent += 1
            else:
                self.received += 1
        if self._file is None:
            return
        entry: dict[str, Any] = {"timestamp": _now(), "direction": direction}
        if isinstance(frame, bytes | bytearray | memoryview):
            text = bytes(frame).decode("utf-8", errors="replace")
            try:
                entry["message"] = json.loads(text)
            except ValueError:
                entry["raw"] = text
        else:
            entry["message"] = frame
        self._write(entry)

    def _record_note(self, direction: str, note: str) -> None:
        if self._file is not None:
            self._write({"timestamp": _now(), "direction": direction, "note": note})

    def _write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, default=str)
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()

    def _close_file(self) -> None:
        with self._lock:
            file, self._file = self._file, None
        if file is not None:
            file.close()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
