"""Traffic recording and bounded waits shared by :class:`MockAcpAgent` and :class:`MockAcpClient`.

:class:`RecordingTransport` wraps any :class:`~rxacp.transport.AcpTransport` and records every
frame in both directions (before the engine sees an incoming one, so ``$/cancel_request`` and
malformed lines are recorded too) into a :class:`TrafficLog`. The log is thread-safe and lets a
test wait, with a bound, until a condition over what was recorded holds.

This module is *not* responsible for answering anything or for any ACP semantics beyond
decoding a frame's JSON for display.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed

__all__ = ["RecordingTransport", "TrafficLog", "WireFrame", "describe_messages", "summarize"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class WireFrame:
    """One frame as it crossed the transport.

    ``direction`` is ``"in"`` (received by the mock) or ``"out"`` (sent by it); ``raw`` is the
    frame exactly as carried (``bytes`` for serializing transports); ``message`` is its decoded
    JSON (``None`` if it was not valid JSON).
    """

    direction: Literal["in", "out"]
    raw: Any
    message: Any

    @property
    def method(self) -> str | None:
        """The JSON-RPC method of a request/notification (``None`` for answers)."""
        msg = self.message
        if isinstance(msg, dict) and isinstance(msg.get("method"), str):
            return str(msg["method"])
        return None


def _decode(frame: Frame) -> Any:
    if isinstance(frame, bytes | bytearray | memoryview):
        try:
            return json.loads(bytes(frame))
        except ValueError:
            return None
    return frame


class TrafficLog:
    """A thread-safe record of frames plus a condition to wait on (see :meth:`wait_until`)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self._frames: list[WireFrame] = []

    def record(self, direction: Literal["in", "out"], frame: Frame) -> None:
        """Append one frame and wake every waiter."""
        item = WireFrame(direction, frame, _decode(frame))
        with self.cond:
            self._frames.append(item)
            self.cond.notify_all()

    def notify(self) -> None:
        """Wake the waiters (call after changing other state guarded by :attr:`cond`)."""
        with self.cond:
            self.cond.notify_all()

    @property
    def frames(self) -> list[WireFrame]:
        """A snapshot of every frame so far, in order."""
        with self.cond:
            return list(self._frames)

    def received(self) -> list[tuple[str, Any]]:
        """``(method, params)`` of every incoming request and notification, in arrival order."""
        return [
            (f.method, f.message.get("params"))
            for f in self.frames
            if f.direction == "in" and f.method is not None
        ]

    def wait_until(
        self, check: Callable[[], _T | None], timeout: float, describe: Callable[[], str]
    ) -> _T:
        """Wait until ``check()`` returns something other than ``None`` and return it.

        Raises ``AssertionError(describe())`` if ``timeout`` seconds pass first.
        ``check`` runs with :attr:`cond` held; it must be quick and must not block.
        """
        if timeout < 0:
            raise ValueError(f"timeout must be >= 0, got {timeout}")
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                value = check()
                if value is not None:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(left)
        raise AssertionError(describe())


def summarize(names: list[str]) -> str:
    """``agent_message_chunk x3, plan`` for a list of kinds (runs of equal names collapsed)."""
    runs: list[list[Any]] = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
        else:
            runs.append([name, 1])
    return ", ".join(name if n == 1 else f"{name} x{n}" for name, n in runs) or "none"


def describe_messages(items: list[tuple[str, Any]]) -> str:
    """A short readable list of received methods, e.g. ``initialize, session/update x3``."""
    if not items:
        return "nothing"
    return summarize([method for method, _ in items])


class _Tap:
    """The FrameReceiver the inner transport sees: records, then forwards."""

    def __init__(self, log: TrafficLog, receiver: FrameReceiver) -> None:
        self._log = log
        self._receiver = receiver

    def on_frame(self, frame: Frame) -> None:
        self._log.record("in", frame)
        self._receiver.on_frame(frame)

    def on_frame_too_large(self, size: int) -> None:
        self._receiver.on_frame_too_large(size)

    def on_closed(self, info: TransportClosed) -> None:
        self._log.notify()
        self._receiver.on_closed(info)


class RecordingTransport(AcpTransport):
    """Wraps ``inner`` and records every frame it moves into ``log``."""

    def __init__(self, inner: AcpTransport, log: TrafficLog) -> None:
        if not isinstance(inner, AcpTransport):
            raise TypeError(f"expected an AcpTransport, got {type(inner).__name__}")
        self._inner = inner
        self._log = log
        self.carries_objects = inner.carries_objects

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Start the inner transport with a recording receiver."""
        await self._inner.start(loop, _Tap(self._log, receiver))

    def send(self, frame: Frame) -> None:
        """Record ``frame`` as sent, then hand it to the inner transport."""
        self._log.record("out", frame)
        self._inner.send(frame)

    async def close(self) -> None:
        """Close the inner transport."""
        await self._inner.close()

    async def drain(self) -> None:
        """Drain the inner transport."""
        await self._inner.drain()
