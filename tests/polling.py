"""Bounded polling for states nothing signals (a worker gone idle, a thread ended).

This module is *not* a way to wait for something that can be awaited or signalled: prefer the
event, the future or :func:`rxacp.testing.quiesce`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["wait_until"]


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until it holds (True) or ``timeout`` seconds pass (False); waits on
    an Event with a growing delay (1 ms to 20 ms), never ``sleep``."""
    tick = threading.Event()
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        tick.wait(delay)
        delay = min(delay * 2, 0.02)
