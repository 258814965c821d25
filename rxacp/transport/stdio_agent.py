"""The agent side of stdio: serve an agent's own stdin/stdout as an ACP transport.

:class:`StdioAcpAgentTransport` reads frames from stdin (asyncio for pipes, sockets and
terminals; a reader thread otherwise, e.g. a regular file) and writes them to stdout, guarding
stdout so a stray ``print()`` cannot corrupt the protocol stream.

This module is *not* responsible for JSON, JSON-RPC ids or ACP semantics: a frame is one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import selectors
import socket
import stat
import sys
import threading
from typing import Any, BinaryIO, cast

from rxacp.transport.base import (
    DEFAULT_MAX_FRAME_BYTES,
    AcpTransport,
    Frame,
    FrameReceiver,
    TransportClosed,
)
from rxacp.transport.cork import CorkedWrites
from rxacp.transport.flow import WriteFlow
from rxacp.transport.framing import (
    ClosedOnce,
    LineFramer,
    bound_reads,
    call_safely,
    frame_to_line,
)

__all__ = ["StdioAcpAgentTransport"]

_log = logging.getLogger("rxacp.transport.stdio")


def _is_pollable(fd: int) -> bool:
    """True if asyncio's pipe transports can watch ``fd``: a pipe, a socket, or a character
    device the event loop's selector accepts.

    ``/dev/null`` is a character device that epoll refuses (``EPERM``): asyncio's transport then
    never reads it and an agent started with ``< /dev/null`` waited forever instead of seeing
    EOF. Such a device is read (or written) without the selector instead.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def _is_socket(fd: int) -> bool:
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


def _same_socket(fd_a: int | None, fd_b: int | None) -> bool:
    """True when both fds are sockets and refer to the same socket."""
    if fd_a is None or fd_b is None:
        return False
    try:
        a, b = os.fstat(fd_a), os.fstat(fd_b)
    except OSError:
        return False
    return stat.S_ISSOCK(a.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _fileno(stream: Any) -> int | None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return fd if isinstance(fd, int) else None


class _ReadProtocol(asyncio.Protocol):
    def __init__(self, owner: StdioAcpAgentTransport) -> None:
        self._owner = owner

    def data_received(self, data: bytes) -> None:
        self._owner._on_data(data)

    def eof_received(self) -> bool | None:
        self._owner._on_eof(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._on_eof(exc)


class _WriteProtocol(asyncio.Protocol):
    """Protocol of the stdout transport; on a socket shared with stdin it also reads input."""

    def __init__(self, owner: StdioAcpAgentTransport, *, reads_input: bool) -> None:
        self._owner = owner
        self._reads_input = reads_input

    def data_received(self, data: bytes) -> None:
        if self._reads_input:
            self._owner._on_data(data)
        else:
            _log.debug("ignored %d bytes received on the stdout socket", len(data))

    def eof_received(self) -> bool | None:
        if self._reads_input:
            self._owner._on_eof(None)
        return True  # half-closed: keep writing

    def pause_writing(self) -> None:
        self._owner._flow.pause_writing()

    def resume_writing(self) -> None:
        self._owner._flow.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._on_stdout_lost(exc)


class StdioAcpAgentTransport(ClosedOnce, CorkedWrites, AcpTransport):
    """Agent side of stdio: read frames from stdin, write frames to stdout.

    Defaults to the process's ``sys.stdin.buffer``/``sys.stdout.buffer``. Pipes, sockets and
    terminals are read with asyncio; anything else (a regular file, ``io.BytesIO``) with a
    reader thread. With ``guard_stdout`` (default) and the real stdout, fd 1 is redirected to
    stderr while the transport runs (``print()`` lands on stderr); the protocol keeps a private
    duplicate of the original stdout. ``close_streams=True`` also closes the given stream objects
    on :meth:`close` (useful when the transport owns them, e.g. a socket's files). Frames sent
    before :meth:`start` has opened stdout are kept and written first.

    Back-pressure: when more than ``write_buffer_high`` bytes wait to be written to stdout (the
    client is not reading), the receiver's :meth:`~FrameReceiver.on_write_paused` is called,
    and :meth:`~FrameReceiver.on_write_resumed` once the buffer drained to ``write_buffer_low``
    (default: a quarter of the high mark). :class:`~rxacp.session.AcpSession` then blocks
    producer threads (see ``docs/reliability.md``); frames are never dropped or reordered.
    While the buffer is over the high mark the transport also stops reading stdin, so a client
    that sends requests and never reads the answers cannot make the agent queue answers
    without limit.
    """

    def __init__(
        self,
        stdin: BinaryIO | None = None,
        stdout: BinaryIO | None = None,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        guard_stdout: bool = True,
        close_streams: bool = False,
        write_buffer_high: int = 256 * 1024,
        write_buffer_low: int | None = None,
    ) -> None:
        low = write_buffer_high // 4 if write_buffer_low is None else write_buffer_low
        for name, value in (("write_buffer_high", write_buffer_high), ("write_buffer_low", low)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        if low > write_buffer_high:
            raise ValueError(f"write_buffer_low ({low}) must not exceed write_buffer_high")
        self._write_high = write_buffer_high
        self._write_low = low
        self._stdin_obj: Any = stdin
        self._stdout_obj: Any = stdout
        self._framer = LineFramer(max_frame_bytes)
        self._guard_stdout = guard_stdout
        self._close_streams = close_streams
        self._loop: asyncio.AbstractEventLoop | None = None
        self._receiver: FrameReceiver | None = None
        self._read_transport: asyncio.ReadTransport | None = None
        self._write_transport: asyncio.WriteTransport | None = None
        self._shared_socket = False  # stdin and stdout are one socket (read by the writer)
        self._sync_out: Any = None  # blocking writer when asyncio cannot watch stdout
        self._init_cork()
        self._flow = WriteFlow(self._on_write_paused, self._on_write_resumed)
        self._thread_stop = threading.Event()
        self._thread_slots = threading.Semaphore(16)
        self._reading = threading.Event()  # cleared while stdout is over its high mark
        self._reading.set()
        self._saved_fd1: int | None = None  # dup of fd 1 to restore after the guard
        self._saved_sys_stdout: Any = None
        # Original fds whose (shared) file description asyncio made non-blocking; restored after.
        self._restore_stdin_blocking: int | None = None
        self._restore_stdout_blocking: int | None = None
        self._closing = False
        self._early: list[bytes] | None = []  # frames sent before stdout was ready
        self._closed_reported = False
        self._started = False

    def started_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop :meth:`start` was called with (``None`` before it)."""
        return self._loop

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Begin reading stdin and set up stdout (and the stdout guard)."""
        if self._started:
            raise RuntimeError("StdioAcpAgentTransport.start() called twice")
        self._started = True
        self._loop = loop
        self._receiver = receiver
        stdin = self._stdin_obj if self._stdin_obj is not None else sys.stdin.buffer
        stdout = self._stdout_obj if self._stdout_obj is not None else sys.stdout.buffer
        shared = self._shared_socket = _same_socket(_fileno(stdin), _fileno(stdout))
        await self._open_stdout(loop, stdout, reads_input=shared)
        early, self._early = self._early, None
        for line in early or ():
            self._write(line)
        if not shared:  # one socket for both directions is read by the stdout transport
            await self._open_stdin(loop, stdin)

    async def _open_stdout(
        self, loop: asyncio.AbstractEventLoop, stdout: Any, *, reads_input: bool
    ) -> None:
        with contextlib.suppress(Exception):
            stdout.flush()
        fd = _fileno(stdout)
        if fd is None:
            self._sync_out = stdout
            return
        if self._guard_stdout and fd == 1:  # the process's real stdout
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            proto_fd = os.dup(1)
            self._saved_fd1 = os.dup(1)
            os.dup2(2, 1)
            self._saved_sys_stdout = sys.stdout
            sys.stdout = sys.stderr
        else:
            proto_fd = os.dup(fd)
        if _is_socket(proto_fd):
            # A pipe transport would take any readable data on a socket for "peer closed", so
            # use a socket transport; it reads from the start, so when stdin is this very
            # socket it is also the reader (a second reader would race it for the data).
            if os.get_blocking(proto_fd):
                self._restore_stdout_blocking = fd
            sock = socket.socket(fileno=proto_fd)
            stransport, _ = await loop.create_connection(
                lambda: _WriteProtocol(self, reads_input=reads_input), sock=sock
            )
            stransport.set_write_buffer_limits(high=self._write_high, low=self._write_low)
            bound_reads(stransport)
            self._write_transport = stransport
        elif _is_pollable(proto_fd):
            if os.get_blocking(proto_fd):
                self._restore_stdout_blocking = fd
            pipe = open(proto_fd, "wb", buffering=0)  # noqa: SIM115, ASYNC230 - an fd, not a disk file
            transport, _ = await loop.connect_write_pipe(
                lambda: _WriteProtocol(self, reads_input=False), pipe
            )
            transport.set_write_buffer_limits(high=self._write_high, low=self._write_low)
            self._write_transport = transport
        else:
            self._sync_out = open(proto_fd, "wb", buffering=0)  # noqa: SIM115, ASYNC230 - an fd

    async def _open_stdin(self, loop: asyncio.AbstractEventLoop, stdin: Any) -> None:
        fd = _fileno(stdin)
        if fd is not None and _is_pollable(fd):
            read_fd = os.dup(fd)
            if os.get_blocking(read_fd):
                self._restore_stdin_blocking = fd
            pipe = open(read_fd, "rb", buffering=0)  # noqa: SIM115, ASYNC230 - an fd, not a disk file
            transport, _ = await loop.connect_read_pipe(lambda: _ReadProtocol(self), pipe)
            bound_reads(transport)
            self._read_transport = transport
            return
        thread = threading.Thread(
            target=self._read_thread, args=(stdin, loop), name="rxacp-stdin-reader", daemon=True
        )
        thread.start()

    def _read_thread(self, stdin: Any, loop: asyncio.AbstractEventLoop) -> None:
        read = getattr(stdin, "read1", None) or stdin.read
        error: Exception | None = None
        try:
            while not self._thread_stop.is_set():
                self._reading.wait()
                if self._thread_stop.is_set():
                    return
                data = read(256 * 1024)
                if not data:
                    break
                self._thread_slots.acquire()
                if self._thread_stop.is_set():
                    return
                loop.call_soon_threadsafe(self._on_thread_data, bytes(data))
        except Exception as exc:  # a broken stream ends the transport with that error
            error = exc
        except BaseException:
            return
        with contextlib.suppress(RuntimeError):  # loop already closed
            loop.call_soon_threadsafe(self._on_eof, error)

    def _on_thread_data(self, data: bytes) -> None:
        self._thread_slots.release()
        self._on_data(data)

    def send(self, frame: Frame) -> None:
        """Write ``frame`` + newline to stdout; dropped after close."""
        line = frame_to_line(frame)
        if self._closing:
            return
        if self._early is not None:  # before (or during) start(): written once stdout is open
            self._early.append(line)
            return
        if not self._hold(line):
            self._write(line)

    def _write_corked(self, data: bytes) -> None:
        self._write(data)

    def _write(self, line: bytes) -> None:
        if self._write_transport is not None:
            if not self._write_transport.is_closing():
                self._write_transport.write(line)
        elif self._sync_out is not None:
            try:
                self._sync_out.write(line)
                self._sync_out.flush()
            except (OSError, ValueError) as exc:
                self._on_stdout_lost(exc)

    async def drain(self) -> None:
        """Wait until buffered stdout data is handed to the OS (bounded to 10 s)."""
        if not self._cork_depth:
            self._flush_corked()
        wt = self._write_transport
        if wt is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(10.0):
                await self._flow.drain(wt)

    async def close(self) -> None:
        """Stop reading, flush and release stdout, undo the stdout guard, report closed."""
        if self._closing:
            self._report(TransportClosed("closed"))
            return
        self._uncork_all()
        self._closing = True
        self._thread_stop.set()
        self._reading.set()
        self._thread_slots.release()
        self._restore_stdout_guard()
        if self._read_transport is not None:
            self._read_transport.close()
            _set_blocking(self._restore_stdin_blocking)
        if self._write_transport is not None:
            # Flushes what is buffered, then closes our fd; blocking mode is restored in
            # _on_stdout_lost once asyncio no longer writes. Drained first (bounded, see drain):
            # an agent's loop ends right after close(), and asyncio's unflushed buffer with it.
            await self.drain()
            self._write_transport.close()
        if self._sync_out is not None and self._sync_out is not self._stdout_obj:
            with contextlib.suppress(OSError, ValueError):
                self._sync_out.close()
        if self._close_streams:
            for stream in (self._stdin_obj, self._stdout_obj):
                if stream is not None:
                    with contextlib.suppress(Exception):
                        stream.close()
        self._report(TransportClosed("closed"))

    def _restore_stdout_guard(self) -> None:
        if self._saved_fd1 is None:
            return
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(self._saved_fd1, 1)
        os.close(self._saved_fd1)
        self._saved_fd1 = None
        if sys.stdout is sys.stderr:
            sys.stdout = self._saved_sys_stdout
        self._saved_sys_stdout = None

    # -- callbacks (on the loop) -------------------------------------------------------------

    def _on_data(self, data: bytes) -> None:
        receiver = self._receiver
        if receiver is None or self._closing:
            return
        self._deliver_corked(self._framer, data, receiver)

    def _on_eof(self, exc: Exception | None) -> None:
        receiver = self._receiver
        if receiver is None or self._closing or self._closed_reported:
            return
        self._framer.deliver(b"", receiver, eof=True)
        self._report(TransportClosed("stdin closed", error=exc))

    def _set_reading(self, on: bool) -> None:
        """Stop (or resume) reading stdin while stdout is over (back under) its marks."""
        if on:
            self._reading.set()
        else:
            self._reading.clear()
        reader: asyncio.ReadTransport | None = self._read_transport
        if reader is None and self._shared_socket:
            # one socket for both directions: its (duck-typed, e.g. uvloop) transport reads too
            reader = cast(asyncio.ReadTransport | None, self._write_transport)
        if reader is None or reader.is_closing():
            return
        with contextlib.suppress(RuntimeError, AttributeError, NotImplementedError):
            if on:
                reader.resume_reading()
            else:
                reader.pause_reading()

    def _on_write_paused(self) -> None:
        self._set_reading(False)
        self._notify_flow(paused=True)

    def _on_write_resumed(self) -> None:
        self._set_reading(True)
        self._notify_flow(paused=False)

    def _notify_flow(self, *, paused: bool) -> None:
        """Tell the receiver about back-pressure (its declared flow-control callbacks)."""
        receiver = self._receiver
        if receiver is not None:
            call_safely(receiver.on_write_paused if paused else receiver.on_write_resumed)

    def _on_stdout_lost(self, exc: Exception | None) -> None:
        self._flow.lost()
        self._set_reading(True)
        self._notify_flow(paused=False)
        if self._closing:
            _set_blocking(self._restore_stdout_blocking)
            self._restore_stdout_blocking = None
        if exc is not None and not self._closing:
            self._report(TransportClosed("stdout closed", error=exc))


def _set_blocking(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.set_blocking(fd, True)
