"""``StderrCollector``: a spawned agent's stderr, decoded line by line, with a bounded tail.

The client transport always drains the agent's stderr (an agent blocked on a full stderr pipe
would hang): each line goes to ``AgentParameters.on_stderr_line`` (or the
``rxacp.transport.stderr`` logger at DEBUG), and the last lines are kept, bounded in lines and
characters, for error reports (``AcpConnectionException.stderr_tail``).

This module is *not* responsible for reading the pipe.
"""

from __future__ import annotations

import codecs
import collections
import logging
from collections.abc import Callable

from rxacp.transport.framing import call_safely

__all__ = ["StderrCollector"]

_stderr_log = logging.getLogger("rxacp.transport.stderr")

_STDERR_TAIL_LINES = 20
_STDERR_TAIL_CHARS = 8 * 1024
_STDERR_MAX_LINE_CHARS = 64 * 1024


class StderrCollector:
    """Decode stderr incrementally, hand out lines, keep a bounded tail for error messages."""

    def __init__(self, on_line: Callable[[str], None] | None) -> None:
        self._on_line = on_line
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""
        self._tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)

    def feed(self, data: bytes, final: bool = False) -> None:
        """Take one chunk (``final``: the pipe ended); hand out the lines it completed."""
        text = self._partial + self._decoder.decode(data, final)
        lines = text.split("\n")
        self._partial = lines.pop()
        if (final and self._partial) or len(self._partial) > _STDERR_MAX_LINE_CHARS:
            lines.append(self._partial)
            self._partial = ""
        if not lines:
            return
        on_line = self._on_line
        if on_line is None and _stderr_log.isEnabledFor(logging.DEBUG):
            on_line = self._log_line
        if on_line is not None:
            for line in lines:
                call_safely(on_line, line.removesuffix("\r"))
        self._tail.extend(line[-_STDERR_TAIL_CHARS:] for line in lines[-_STDERR_TAIL_LINES:])

    @staticmethod
    def _log_line(line: str) -> None:
        _stderr_log.debug("%s", line)

    def tail(self) -> str | None:
        """The last lines so far (``None``: nothing yet)."""
        lines = [*self._tail, self._partial] if self._partial else list(self._tail)
        text = "\n".join(lines)[-_STDERR_TAIL_CHARS:]
        return text or None
