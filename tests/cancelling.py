"""Cancelling a prompt from another thread once something happened (a chunk, a question).

:class:`CancelWhen` starts a daemon thread that waits for ``ready()`` (a bounded wait that
returns whether it happened), then notes the time and cancels the signal. Used by the reference
agent's behaviour tests over stdio and over WebSocket.

This module is *not* responsible for what the agent does on cancel (the tests assert that).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rxacp.client import CancellationSignal

__all__ = ["CancelWhen"]


class CancelWhen:
    """Cancels :attr:`stop` from a daemon thread as soon as ``ready()`` returns true."""

    def __init__(self, ready: Callable[[], bool]) -> None:
        self.stop = CancellationSignal()
        """The signal to pass with the prompt."""
        self.at: float | None = None
        """``time.monotonic()`` just before the cancel (``None`` if ``ready()`` never held)."""
        self._ready = ready
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._ready():
            self.at = time.monotonic()
            self.stop.cancel()

    def join(self, timeout: float) -> float:
        """Wait for the thread; returns :attr:`at` (asserting the cancel happened)."""
        self._thread.join(timeout)
        assert self.at is not None, "the condition to cancel on never held"
        return self.at
