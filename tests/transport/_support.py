"""Shared helpers for the transport tests: a recording FrameReceiver and peer-script paths."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from rxacp.transport import TransportClosed
from rxacp.transport.base import Frame, FrameReceiver

__all__ = [
    "ECHO_AGENT",
    "PEERS",
    "RELAY_AGENT",
    "Recorder",
    "async_test",
    "child_pids",
    "process_state",
]

PEERS = Path(__file__).parent / "peers"
ECHO_AGENT = str(PEERS / "echo_agent.py")
RELAY_AGENT = str(PEERS / "relay_agent.py")
PYTHON = sys.executable


class Recorder(FrameReceiver):
    """Records frames/too-large/closed; lets a test await a frame count or the close."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.too_large: list[int] = []
        self.closed: list[TransportClosed] = []
        self.threads: set[int] = set()
        self._want = 0
        self._changed: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self) -> Recorder:
        """Attach to the running loop (call before awaiting)."""
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        return self

    def _poke(self) -> None:
        self.threads.add(threading.get_ident())
        if self._changed is not None:
            self._changed.set()

    @property
    def lines(self) -> list[bytes]:
        """The frames as the byte lines a byte transport delivers (fails on a decoded one)."""
        assert all(isinstance(f, bytes) for f in self.frames), self.frames
        return [f for f in self.frames if isinstance(f, bytes)]

    def on_frame(self, frame: Frame) -> None:
        self.frames.append(frame)
        self._poke()

    def on_frame_too_large(self, size: int) -> None:
        self.too_large.append(size)
        self._poke()

    def on_closed(self, info: TransportClosed) -> None:
        self.closed.append(info)
        self._poke()

    async def until(self, predicate: object, timeout: float = 5.0) -> None:
        """Wait (bounded) until ``predicate()`` is true; fail with the recorded state if not."""
        assert callable(predicate)
        assert self._changed is not None, "call bind() first"

        async def wait() -> None:
            while not predicate():
                assert self._changed is not None
                self._changed.clear()
                await self._changed.wait()

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait(), timeout)
        assert predicate(), (
            f"condition not met within {timeout} s: {len(self.frames)} frames, "
            f"too_large={self.too_large}, closed={self.closed}"
        )

    async def frames_at_least(self, n: int, timeout: float = 5.0) -> None:
        await self.until(lambda: len(self.frames) >= n, timeout)

    async def wait_closed(self, timeout: float = 5.0) -> TransportClosed:
        await self.until(lambda: bool(self.closed), timeout)
        return self.closed[0]


def child_pids(parent: int | None = None) -> list[int]:
    """Pids of the live or zombie children of ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == parent:
            out.append(int(entry))
    return out


def process_state(pid: int) -> str | None:
    """The /proc state letter of ``pid`` ("Z" zombie...), or None if it no longer exists."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[0]


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an ``async def`` test in a fresh event loop (no pytest plugin needed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return wrapper
