"""``WriteFlow``: an asyncio write transport's pause/resume state, and a drain that never polls.

asyncio tells a protocol ``pause_writing()`` when a transport's write buffer passes its high
mark and ``resume_writing()`` once it is back at its low mark; it has no "buffer empty" callback.
:meth:`WriteFlow.drain` gets one from that public contract: it lowers both marks to 0 for the
wait (so the transport pauses at once if anything is buffered, and resumes exactly when the
buffer is empty), waits on a future, and puts the marks back. A pause or resume caused only by
a drain is not passed on to ``on_pause`` / ``on_resume`` (the engine's back-pressure sees the
real marks only).

This module is *not* responsible for writing, nor for what a pause means to the transport: the
callbacks decide that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["WriteFlow"]


class WriteFlow:
    """Flow-control state of one write transport (loop thread only).

    The transport's protocol forwards ``pause_writing()`` / ``resume_writing()`` here and calls
    :meth:`lost` when the connection is lost.
    """

    __slots__ = ("_drains", "_on_pause", "_on_resume", "_paused", "_quiet", "_saved")

    def __init__(
        self,
        on_pause: Callable[[], None] | None = None,
        on_resume: Callable[[], None] | None = None,
    ) -> None:
        self._on_pause = on_pause
        self._on_resume = on_resume
        self._paused = False
        self._quiet = False  # the current pause was caused by a drain: not announced
        self._drains: list[asyncio.Future[None]] = []
        self._saved: tuple[int, int] | None = None  # the real (low, high) marks during a drain

    @property
    def paused(self) -> bool:
        """True between ``pause_writing()`` and ``resume_writing()``."""
        return self._paused

    def pause_writing(self) -> None:
        """The protocol's ``pause_writing``."""
        self._paused = True
        if self._drains:  # the drain itself lowered the marks: not back-pressure
            self._quiet = True
        elif self._on_pause is not None:
            self._on_pause()

    def resume_writing(self) -> None:
        """The protocol's ``resume_writing``."""
        self._paused = False
        quiet, self._quiet = self._quiet, False
        self._wake()
        if not quiet and self._on_resume is not None:
            self._on_resume()

    def lost(self) -> None:
        """The connection is gone: wake the drains (the owner announces the end itself)."""
        self._paused = self._quiet = False
        self._wake()

    async def drain(self, transport: asyncio.WriteTransport) -> None:
        """Wait until ``transport``'s write buffer is empty (or the transport closes).

        Woken by ``resume_writing()`` / :meth:`lost`; no timer runs while it waits.
        """
        if transport.is_closing() or not transport.get_write_buffer_size():
            return
        waiter = asyncio.get_running_loop().create_future()
        first = not self._drains
        self._drains.append(waiter)
        if first:
            self._saved = transport.get_write_buffer_limits()  # (low, high)
            # Already paused by the real marks: it then resumes at 0 (empty). Otherwise a
            # high mark of 0 pauses it now, quietly (the buffer is not empty).
            transport.set_write_buffer_limits(high=self._saved[1] if self._paused else 0, low=0)
        try:
            if self._paused:  # else: the transport ignores the marks; nothing to wait for
                await waiter
        finally:
            if waiter in self._drains:
                self._drains.remove(waiter)
            if not self._drains:
                self._restore(transport)

    def _restore(self, transport: asyncio.WriteTransport) -> None:
        """Put the real marks back after the last drain."""
        saved, self._saved = self._saved, None
        if saved is None or transport.is_closing():
            return
        low, high = saved
        transport.set_write_buffer_limits(high=high, low=low)
        if self._quiet and transport.get_write_buffer_size() > high:
            self._quiet = False  # a drain given up on left real back-pressure: announce it
            if self._on_pause is not None:
                self._on_pause()

    def _wake(self) -> None:
        drains, self._drains = self._drains, []
        for waiter in drains:
            if not waiter.done():
                waiter.set_result(None)
