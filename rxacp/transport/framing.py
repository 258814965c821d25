"""Incremental newline framing: turn a byte stream into JSON-RPC lines.

:class:`LineFramer` splits chunks of a stream on ``b"\\n"``, strips one trailing ``b"\\r"``,
skips blank (whitespace-only) lines and enforces a cap on the size of one line: a longer line is
discarded up to its newline (memory stays bounded) and reported once, with its size.

It keeps only the unfinished tail of the stream and scans every byte once, so a 64 MiB line costs
O(size) and thousands of small lines per chunk are split by ``bytes.split`` in C.

This module is *not* responsible for reading streams, decoding UTF-8 or parsing JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from rxacp import _compat
from rxacp.transport.base import DEFAULT_MAX_FRAME_BYTES, Frame, FrameReceiver, TransportClosed

__all__ = [
    "READ_CHUNK_BYTES",
    "ClosedOnce",
    "LineFramer",
    "bound_reads",
    "call_safely",
    "frame_to_line",
]

_log = logging.getLogger("rxacp.transport.stdio")


def call_safely(fn: Callable[..., None], *args: Any) -> None:
    """Call a receiver callback; an exception is logged, never breaks the transport's stream."""
    try:
        fn(*args)
    except Exception:
        _log.exception("frame receiver callback %r failed", fn)


class ClosedOnce:
    """Mixin of the byte transports: tell the receiver ``on_closed`` exactly once."""

    _receiver: FrameReceiver | None
    _closed_reported: bool = False

    def _report(self, info: TransportClosed) -> None:
        if self._closed_reported:
            return
        self._closed_reported = True
        if self._receiver is not None:
            call_safely(self._receiver.on_closed, info)


READ_CHUNK_BYTES = 64 * 1024
"""Bytes asked of the OS per read of a pipe or socket.

asyncio's pipe and socket transports read 256 KiB at a time. A buffer that large is above
glibc's mmap threshold, so every read — even of one 200-byte line — maps, remaps and unmaps
memory (three extra syscalls plus page faults: ~25 µs of system time per round trip measured in
``benchmarks/``). 64 KiB stays on the heap and still moves a 64 MiB line in 1,024 reads.
"""

_NL = b"\n"
_CR = b"\r"
_Events = list[tuple[int, int]]


def frame_to_line(frame: Frame) -> bytes:
    """Validate an outgoing byte frame and return it with its ``\\n`` terminator.

    Raises ``TypeError`` for a non-bytes frame and ``ValueError`` for a frame containing a
    newline byte (it would be split into several frames by the peer).
    """
    if not isinstance(frame, bytes | bytearray | memoryview):
        raise TypeError(
            f"a byte transport sends bytes frames (one JSON line), got {type(frame).__name__}"
        )
    data = bytes(frame)
    if b"\n" in data:
        raise ValueError("a frame must not contain a newline byte (ACP stdio is line-delimited)")
    return data + _NL


def bound_reads(transport: Any, size: int = READ_CHUNK_BYTES) -> None:
    """Make an asyncio read transport ask the OS for at most ``size`` bytes per read.

    Sets the ``max_size`` attribute that asyncio's selector pipe and socket transports read
    with (see :data:`READ_CHUNK_BYTES`); any other transport is left as it is.
    """
    _compat.bound_reads(transport, size)


class LineFramer:
    """Split a byte stream into lines (frames) without their line terminators.

    Rules, identical for every rxacp byte transport:

    - a frame ends at ``\\n``; one trailing ``\\r`` is removed (CRLF tolerated);
    - empty and whitespace-only lines are skipped;
    - a line longer than ``max_frame_bytes`` (not counting ``\\n`` and an optional final ``\\r``)
      is discarded up to its newline and reported once, when it ends, with its size in bytes
      (without the newline); memory used stays below ``max_frame_bytes`` + one chunk;
    - :meth:`finish` (end of stream) completes a final line that had no newline.

    Example::

        framer = LineFramer(1024)
        framer.feed(b'{"a":1}\\n{"b"')   # -> [b'{"a":1}']
        framer.feed(b':2}\\r\\n\\n')       # -> [b'{"b":2}']
        framer.take_oversized()          # -> [] sizes of lines discarded by feed()/finish()

    Transports use :meth:`dispatch`, which calls back in exact stream order.
    """

    __slots__ = ("_discarded", "_limit", "_max", "_oversized", "_parts", "_size")

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        if isinstance(max_frame_bytes, bool) or not isinstance(max_frame_bytes, int):
            raise TypeError(f"max_frame_bytes must be an int, got {max_frame_bytes!r}")
        if max_frame_bytes < 1:
            raise ValueError(f"max_frame_bytes must be positive, got {max_frame_bytes}")
        self._max = max_frame_bytes
        # A raw line (before removing a final \r) may be one byte longer than the cap.
        self._limit = max_frame_bytes + 1
        self._parts: list[bytes] = []  # unfinished line, in pieces
        self._size = 0  # total length of _parts
        self._discarded = -1  # >= 0 while discarding an oversized line: bytes dropped so far
        self._oversized: list[int] = []

    @property
    def max_frame_bytes(self) -> int:
        """The cap on one line, in bytes."""
        return self._max

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line currently held (0 while discarding one)."""
        return self._size

    def feed(self, data: bytes) -> list[bytes]:
        """Consume one chunk; return the frames it completed, in order.

        Sizes of oversized lines completed by this chunk are collected for
        :meth:`take_oversized`.
        """
        frames, events = self._split(data)
        if events:
            self._oversized.extend(size for _, size in events)
        return frames

    def finish(self) -> list[bytes]:
        """End of stream: return the final unterminated line (if any) as a frame."""
        frames, events = self._finish()
        if events:
            self._oversized.extend(size for _, size in events)
        return frames

    def take_oversized(self) -> list[int]:
        """Return and forget the sizes of oversized lines seen by :meth:`feed`/:meth:`finish`."""
        sizes = self._oversized
        self._oversized = []
        return sizes

    def deliver(self, data: bytes, receiver: FrameReceiver, *, eof: bool = False) -> None:
        """:meth:`dispatch` to ``receiver``'s callbacks, each one called safely."""
        self.dispatch(
            data,
            lambda f: call_safely(receiver.on_frame, f),
            lambda n: call_safely(receiver.on_frame_too_large, n),
            eof=eof,
        )

    def dispatch(
        self,
        data: bytes,
        on_frame: Callable[[bytes], None],
        on_too_large: Callable[[int], None],
        *,
        eof: bool = False,
    ) -> None:
        """Feed ``data`` (then end the stream if ``eof``) and call back in stream order."""
        frames, events = self._split(data) if data else ([], None)
        if eof:
            more, more_events = self._finish()
            if more_events:
                events = (events or []) + [(len(frames), s) for _, s in more_events]
            frames += more
        if not events:
            for frame in frames:
                on_frame(frame)
            return
        start = 0
        for pos, size in events:
            for frame in frames[start:pos]:
                on_frame(frame)
            start = pos
            on_too_large(size)
        for frame in frames[start:]:
            on_frame(frame)

    # -- internals ---------------------------------------------------------------------------

    def _split(self, data: bytes) -> tuple[list[bytes], _Events | None]:
        """Frames completed by ``data`` and ``(index of next frame, size)`` of dropped lines."""
        parts = data.split(_NL)
        if len(parts) == 1:
            self._append(data)
            return [], None
        tail = parts.pop()
        events: _Events | None = None
        if self._parts or self._discarded >= 0:
            first = self._join(parts[0])
            if first is None:  # the line being discarded ended here
                events = [(0, self._discarded + len(parts[0]))]
                self._discarded = -1
                first = b""
            elif first[-1:] == _CR:
                first = first[:-1]
            if len(first) > self._max:
                events = [(0, len(first))]
                first = b""
            parts[0] = first
        if b"\r" in data:
            parts = [p[:-1] if p[-1:] == _CR else p for p in parts]
        frames = [p for p in parts if p and not p.isspace()]
        if len(data) > self._limit:  # a whole line inside this chunk may exceed the cap
            frames, events = self._enforce_cap(frames, events)
        if tail:
            self._append(tail)
        return frames, events

    def _finish(self) -> tuple[list[bytes], _Events | None]:
        if self._discarded >= 0:
            size = self._discarded
            self._discarded = -1
            return [], [(0, size)]
        if not self._parts:
            return [], None
        return self._split(_NL)

    def _append(self, data: bytes) -> None:
        """Add a piece of an unfinished line, switching to discard mode past the cap."""
        if not data:
            return
        if self._discarded >= 0:
            self._discarded += len(data)
            return
        self._size += len(data)
        if self._size > self._limit:
            self._discarded = self._size
            self._parts = []
            self._size = 0
        else:
            self._parts.append(data)

    def _join(self, head: bytes) -> bytes | None:
        """Complete the buffered line with ``head``; None when that line is being discarded."""
        if self._discarded >= 0:
            return None
        self._parts.append(head)
        line = b"".join(self._parts)
        self._parts = []
        self._size = 0
        return line

    def _enforce_cap(
        self, frames: list[bytes], events: _Events | None
    ) -> tuple[list[bytes], _Events | None]:
        """Drop frames over the cap, recording their positions (only for chunks over the cap)."""
        cap = self._max
        if all(len(f) <= cap for f in frames):
            return frames, events
        kept: list[bytes] = []
        out_events: _Events = events if events is not None else []
        for frame in frames:
            if len(frame) > cap:
                out_events.append((len(kept), len(frame)))
            else:
                kept.append(frame)
        return kept, out_events
