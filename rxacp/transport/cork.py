"""``CorkedWrites``: hold outgoing lines between ``cork()`` and ``uncork()``, then write them once.

The engine corks a transport while it handles one incoming chunk or one batch of hand-offs, so
the frames that batch produces (say an update and an answer) go out in one write: one syscall
here, one read for the peer (measured: fewer loop turns on both sides).

This module is *not* responsible for the write itself: a transport implements
:meth:`CorkedWrites._write_corked`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rxacp.transport.base import FrameReceiver
    from rxacp.transport.framing import LineFramer

__all__ = ["CorkedWrites"]


class CorkedWrites:
    """Mixin of byte-line transports (loop thread only)."""

    batches_writes = True
    _cork_depth: int = 0
    _corked: list[bytes]

    def _init_cork(self) -> None:
        self._cork_depth = 0  # > 0: sent lines are held in _corked and written as one
        self._corked = []

    def _deliver_corked(self, framer: LineFramer, data: bytes, receiver: FrameReceiver) -> None:
        """Hand one incoming chunk's frames to ``receiver`` with writes corked, so the answers
        and updates they cause leave in one write."""
        self.cork()
        try:
            framer.deliver(data, receiver)
        finally:
            self.uncork()

    def cork(self) -> None:
        """Hold the lines sent from now on until the matching :meth:`uncork`."""
        self._cork_depth += 1

    def uncork(self) -> None:
        """End one :meth:`cork`; the outermost writes the held lines, in order, at once."""
        self._cork_depth -= 1
        if self._cork_depth <= 0:
            self._cork_depth = 0
            self._flush_corked()

    def _hold(self, line: bytes) -> bool:
        """Keep ``line`` for later if corked; True when it was held."""
        if self._cork_depth:
            self._corked.append(line)
            return True
        return False

    def _flush_corked(self) -> None:
        if self._corked:
            lines, self._corked = self._corked, []
            self._write_corked(lines[0] if len(lines) == 1 else b"".join(lines))

    def _uncork_all(self) -> None:
        """Drop every cork and write what was held (before close or drain)."""
        self._cork_depth = 0
        self._flush_corked()

    def _write_corked(self, data: bytes) -> None:
        raise NotImplementedError
