"""Per-message admission of a WebSocket server's incoming frames into its byte budget.

``websockets`` reads each frame whole (and inflates it, with permessage-deflate) before
``recv()`` returns it, so a budget taken after ``recv()`` cannot bound the frames being read
across connections. :class:`_AdmittedServerConnection` therefore watches the bytes *before*
they reach the library: it reads each data frame's header itself and reserves the frame's
size (for a compressed connection, the most it can inflate to, at most ``max_size``) from the
server-wide :class:`~rxacp.transport._budget.ByteBudget` before the payload is fed in. When
the budget cannot be had, that connection stops reading (the rest of its bytes wait on the
socket) until it can, for at most ``wait`` seconds; past that it is closed with code 1013
(try again later). The reservation travels with the message (``take_message``) and is
released once the agent's engine took it. Frames whose bound is at most ``SMALL_FRAME``
bytes in all (per connection, read and not yet taken) are admitted without waiting, so small
clients are served while large messages wait.

It also counts the server's TCP connections from accept to close, handshakes included, so a
flood of connections that never finish their handshake counts against ``max_connections``
(and ``open_timeout`` ends them).

This module is *not* responsible for parsing or validating frames (``websockets`` does; this
only reads the lengths), nor for what a message means.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from typing import Any, cast

from websockets.asyncio.server import ServerConnection
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import CloseCode
from websockets.protocol import State

from rxacp.transport._budget import ByteBudget
from rxacp.transport._websocket_common import _log

__all__ = ["DEFLATE_RATIO", "READ_COPIES", "SMALL_FRAME", "Admission", "_AdmittedServerConnection"]

SMALL_FRAME = 64 * 1024
"""Bytes of small data frames (by their inflated bound) each connection may hold unread
outside the budget: such frames are admitted without waiting."""

READ_COPIES = 3
"""A frame being read is held about three times at once (the library's read buffer, the payload
cut from it, the unmasked payload): what it reserves is its size times this."""

DEFLATE_RATIO = 1032
"""Deflate inflates one byte to at most 1032 (a 258-byte match in two one-bit codes)."""

_DATA_OPCODES = (0, 1, 2)  # continuation, text, binary


class Admission:
    """What a server's connections share: the byte budget, the most one message may take
    (``max_size``), how long a message may wait for the budget (``wait`` seconds, ``None``:
    for ever), and the count of open TCP connections (handshakes included)."""

    def __init__(self, budget: ByteBudget, max_size: int, wait: float | None) -> None:
        self.budget, self.max_size, self.wait = budget, max_size, wait
        self.open = 0

    def connection_class(self) -> type[ServerConnection]:
        """The ``create_connection`` class for ``websockets.serve`` bound to this admission."""
        return type("_AdmittedConnection", (_AdmittedServerConnection,), {"_admission": self})


class _ReadSwitch:
    """The transport as ``websockets`` sees it: reading is paused while any reason holds
    (the library's frame queue, a full write buffer, a message waiting for the budget)."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.raw = transport
        self._reasons: set[str] = set()
        self.write = transport.write  # what websockets calls per frame: no __getattr__ hop
        self.is_closing = transport.is_closing

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)

    def pause_reading(self) -> None:
        self.pause("library")

    def resume_reading(self) -> None:
        self.resume("library")

    def pause(self, reason: str) -> None:
        if not self._reasons:
            with contextlib.suppress(Exception):  # closing
                self.raw.pause_reading()
        self._reasons.add(reason)

    def resume(self, reason: str) -> None:
        if reason in self._reasons:
            self._reasons.discard(reason)
            if not self._reasons:
                with contextlib.suppress(Exception):
                    self.raw.resume_reading()


class _AdmittedServerConnection(ServerConnection):
    """A server connection whose data frames are admitted into the budget before they are
    read (see the module docstring). Subclassed per server by :meth:`Admission.connection_class`."""

    _admission: Admission

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._switch: _ReadSwitch | None = None
        self._in_request = True  # before the end of the handshake request's headers
        self._tail = b""  # the last bytes of the request seen (its end may straddle reads)
        self._head = bytearray()  # a frame header being read
        self._skip = 0  # payload bytes of the current frame still to pass through
        # per data frame read and not yet taken by recv(): (reserved, small, fin)
        self._held: collections.deque[tuple[int, int, bool]] = collections.deque()
        self._small = 0  # bytes of small frames held outside the budget
        self._pending: list[bytes] | None = None  # bytes read while waiting for the budget
        self._waiter: asyncio.Task[None] | None = None
        self._counted = False
        self._deflate: bool | None = None  # permessage-deflate negotiated

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._switch = _ReadSwitch(cast(asyncio.Transport, transport))
        self._admission.open += 1
        self._counted = True
        super().connection_made(cast(asyncio.Transport, self._switch))

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted:
            self._counted = False
            self._admission.open -= 1
        if self._waiter is not None:
            self._waiter.cancel()
        self._pending = None
        self._release_held()
        super().connection_lost(exc)

    def pause_writing(self) -> None:  # a peer that never reads (see _StopReadingWhileBacklogged)
        super().pause_writing()
        if self._switch is not None:
            self._switch.pause("backlog")

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._switch is not None:
            self._switch.resume("backlog")

    def data_received(self, data: bytes) -> None:
        if self._pending is not None:  # waiting for the budget: keep, and stop reading
            self._pending.append(data)
            if self._switch is not None:
                self._switch.pause("budget")
            return
        admitted = self._scan(data)
        if admitted < len(data):
            self._pending = [data[admitted:]]
            data = data[:admitted]
        if data:
            super().data_received(data)

    # -- the reservation of each message -------------------------------------------------
    def take_message(self) -> int:
        """The bytes reserved for the message ``recv()`` just returned (its frames up to the
        final one), now the caller's to release."""
        total = 0
        while self._held:
            size, small, fin = self._held.popleft()
            total += size
            self._small -= small
            if fin:
                break
        return total

    def _release_held(self) -> None:
        total = sum(size for size, _, _ in self._held)
        self._held.clear()
        self._small = 0
        if total:
            self._admission.budget.release(total)

    def _scan(self, data: bytes) -> int:
        """Follow the frames in ``data``; the number of bytes that may be fed now (less than
        ``len(data)`` when a frame's payload must wait for the budget)."""
        pos, end = 0, len(data)
        while pos < end:
            if self._in_request:
                seen = self._tail + data[pos:]
                found = seen.find(b"\r\n\r\n")
                if found < 0:
                    self._tail = seen[-3:]
                    return end
                pos += found + 4 - len(self._tail)
                self._in_request, self._tail = False, b""
                continue
            if self._skip:
                step = min(self._skip, end - pos)
                self._skip -= step
                pos += step
                continue
            need = _header_length(self._head)
            step = min(need - len(self._head), end - pos)
            self._head += data[pos : pos + step]
            pos += step
            if len(self._head) < _header_length(self._head):
                continue
            fin, opcode, length = _parse_header(self._head)
            self._head.clear()
            self._skip = length
            if opcode in _DATA_OPCODES and not self._admit(fin, self._bound(length)):
                return pos
        return end

    def _bound(self, length: int) -> int:
        """The most memory a data frame of ``length`` payload bytes takes once read."""
        admission = self._admission
        if length > admission.max_size:
            return 0  # websockets refuses it (1009) before reading it
        deflate = self._deflate
        if deflate is None:  # known once the handshake is done (a client's frames follow it)
            deflate = any(isinstance(e, PerMessageDeflate) for e in self.protocol.extensions)
            if self.protocol.state is not State.CONNECTING:
                self._deflate = deflate
        if deflate:
            return min(admission.max_size, length * DEFLATE_RATIO + 1024)
        return length

    def _admit(self, fin: bool, bound: int) -> bool:
        """Reserve a frame's ``bound``; False when it must wait (a task then waits)."""
        if self._small + bound <= SMALL_FRAME:
            self._small += bound
            self._held.append((0, bound, fin))
            return True
        budget = self._admission.budget
        size = budget.clamp(bound * READ_COPIES)
        if budget.try_reserve(size):
            self._held.append((size, 0, fin))
            return True
        if self._switch is not None:
            self._switch.pause("budget")
        self._waiter = self.loop.create_task(self._wait_for_budget(size, fin))
        return False

    async def _wait_for_budget(self, size: int, fin: bool) -> None:
        admission = self._admission
        try:
            await asyncio.wait_for(admission.budget.reserve(size), admission.wait)
        except TimeoutError:
            self._waiter = None
            self._refuse(size)
            return
        self._waiter = None
        if self._pending is None:  # the connection was lost meanwhile
            admission.budget.release(size)
            return
        self._held.append((size, 0, fin))
        pending, self._pending = b"".join(self._pending), None
        if self._switch is not None:
            self._switch.resume("budget")
        self.data_received(pending)

    def _refuse(self, size: int) -> None:
        """The budget stayed full for ``wait`` seconds: close with 1013, stop reading."""
        reason = f"server busy: a {size}-byte message waited over {self._admission.wait:g} s"
        _log.warning("closing a WebSocket connection with code 1013: %s", reason)
        self._pending = None
        with contextlib.suppress(Exception):
            self.protocol.fail(CloseCode.TRY_AGAIN_LATER, reason)
            self.send_data()
        if self._switch is not None:
            self._switch.raw.close()


def _header_length(head: bytearray) -> int:
    """Bytes of a client frame's header, once its first two are known (2 before)."""
    if len(head) < 2:
        return 2
    short = head[1] & 0x7F
    extra = 2 if short == 126 else 8 if short == 127 else 0
    return 2 + extra + (4 if head[1] & 0x80 else 0)


def _parse_header(head: bytearray) -> tuple[bool, int, int]:
    """(fin, opcode, payload length) of a complete frame header."""
    fin, opcode, short = bool(head[0] & 0x80), head[0] & 0x0F, head[1] & 0x7F
    if short == 126:
        return fin, opcode, int.from_bytes(head[2:4], "big")
    if short == 127:
        return fin, opcode, int.from_bytes(head[2:10], "big")
    return fin, opcode, short
