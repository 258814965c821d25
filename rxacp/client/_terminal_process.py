"""One spawned command of :class:`~rxacp.client.LocalTerminals`: its process, captured output
(bounded, trimmed from the start at a UTF-8 character boundary) and exit status.

Two daemon threads per command: one reads its output (``poll`` on the pipe and a stop pipe, so
an escaped descendant that keeps the pipe open cannot hold the reader forever), one reaps it.

This module is *not* responsible for request validation, ids, sessions or limits
(``terminals.py``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
from collections.abc import Callable

from ..schema import TerminalExitStatus, TerminalOutputResponse
from ..transport._reaping import ProcessGroup, fd_identity, pipe_holders

__all__ = ["LocalTerminal", "utf8_complete_end"]

_DRAIN_SECONDS = 2.0
"""After the command exits, how long the exit waits for output still in the pipe (a descendant
that keeps the pipe open does not hold the exit status back longer than this)."""

_CHUNK = 65536


def _utf8_start(buf: bytes | bytearray | memoryview, start: int) -> int:
    """The first index at or after ``start`` that is not a UTF-8 continuation byte."""
    end = min(len(buf), start + 4)
    index = start
    while index < end and (buf[index] & 0xC0) == 0x80:
        index += 1
    return index if index < end or index == len(buf) else start


def utf8_complete_end(buf: bytes | bytearray) -> int:
    """The length of ``buf`` without an incomplete multi-byte character at its very end."""
    length = len(buf)
    for back in range(1, min(4, length) + 1):
        byte = buf[length - back]
        if (byte & 0xC0) == 0x80:
            continue  # continuation: keep looking for the lead byte
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return length - back if back < need else length
        return length  # an ASCII byte: nothing incomplete
    return length


def _fit(text: str, limit: int) -> str:
    """Drop characters from the start until ``text`` encodes to at most ``limit`` bytes."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    start = _utf8_start(data, len(data) - limit)
    return data[start:].decode("utf-8")


class LocalTerminal:
    """One spawned command: its process, captured output and exit status (thread-safe)."""

    def __init__(
        self, terminal_id: str, session_id: str, proc: subprocess.Popen[bytes], limit: int
    ) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.proc = proc
        self.limit = limit
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._truncated = False
        self._returncode: int | None = None
        self._callbacks: list[Callable[[], None]] = []
        self.exited = threading.Event()
        self.released = False
        assert proc.stdout is not None
        self._pipe = fd_identity(proc.stdout.fileno())
        self._stop_r, self._stop_w = os.pipe()
        self._stop_w_open = True
        self._reader = threading.Thread(
            target=self._read, name=f"rxacp-terminal-{terminal_id}-out", daemon=True
        )
        self._waiter = threading.Thread(
            target=self._wait, name=f"rxacp-terminal-{terminal_id}-wait", daemon=True
        )
        self._reader.start()
        self._waiter.start()

    # ------------------------------------------------------------------ threads
    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        fd = stream.fileno()
        poller = select.poll()  # not select(): descriptors above 1024 are fine
        poller.register(fd, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        try:
            while True:
                ready = {ready_fd for ready_fd, _ in poller.poll()}
                if self._stop_r in ready and fd not in ready:
                    return
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    return
                self._append(chunk)
        except OSError:
            return
        finally:
            stream.close()
            os.close(self._stop_r)

    def _append(self, chunk: bytes) -> None:
        with self._lock:
            self._buffer += chunk
            # trim lazily (at twice the limit) so a chatty command costs O(1) per byte
            if len(self._buffer) > 2 * self.limit or (self.limit == 0 and self._buffer):
                self._trim()

    def _trim(self) -> None:
        excess = len(self._buffer) - self.limit
        if excess > 0:
            del self._buffer[: _utf8_start(self._buffer, excess)]
            self._truncated = True

    def _wait(self) -> None:
        returncode = self.proc.wait()
        self._reader.join(_DRAIN_SECONDS)
        with self._lock:
            self._returncode = returncode
            callbacks, self._callbacks = self._callbacks, []
        if not self._reader.is_alive():
            self._close_stop()
        self.exited.set()
        for callback in callbacks:
            callback()

    def _close_stop(self) -> None:
        with self._lock:
            if not self._stop_w_open:
                return
            self._stop_w_open = False
        os.close(self._stop_w)

    # ------------------------------------------------------------------ queries
    def exit_status(self) -> TerminalExitStatus | None:
        code = self._returncode
        if code is None:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return TerminalExitStatus(exit_code=None, signal=name)
        return TerminalExitStatus(exit_code=code, signal=None)

    def output(self) -> TerminalOutputResponse:
        with self._lock:
            self._trim()
            data = bytes(self._buffer)
            truncated = self._truncated
            exited = self._returncode is not None
        if not exited:
            data = data[: utf8_complete_end(data)]
        text = _fit(data.decode("utf-8", errors="replace"), self.limit)
        return TerminalOutputResponse(
            output=text, truncated=truncated, exit_status=self.exit_status()
        )

    def on_exit(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on a terminal thread, or now) once the command exited."""
        with self._lock:
            if self._returncode is None:
                self._callbacks.append(callback)
                return
        callback()

    def remove_on_exit(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    # ------------------------------------------------------------------ control
    def kill(self) -> None:
        """SIGKILL the command's process group, and its descendants that left the group
        (``setsid``): those found below it while it runs, and whoever still holds its output
        pipe (an escaped descendant whose parent already exited)."""
        if self.exited.is_set() and not self._reader.is_alive():
            return  # exited, and nothing holds its output pipe: the group is gone
        group = ProcessGroup(self.proc.pid)
        escaped = group.escaped_descendants() if not self.exited.is_set() else {}
        group.signal(signal.SIGKILL)
        if self._reader.is_alive():
            escaped.update(pipe_holders(self._pipe))
        ProcessGroup.signal_escaped(escaped, signal.SIGKILL)

    def stop_reading(self) -> None:
        """Stop the output reader even if an escaped descendant still holds the pipe."""
        with self._lock:
            if not self._stop_w_open:
                return
            with contextlib.suppress(OSError):
                os.write(self._stop_w, b"x")

    def join(self, timeout: float) -> bool:
        """Wait until the command is reaped and its reader stopped; False on timeout."""
        if not self.exited.wait(timeout):
            return False
        self._reader.join(timeout)
        if self._reader.is_alive():
            return False
        self._close_stop()
        return True
