"""Traffic recording and bounded waits shared by :class:`MockAcpAgent` and :class:`MockAcpClient`.

:class:`RecordingTransport` wraps any :class:`~rxacp.transport.AcpTransport` and records every
frame in both directions (before the engine sees an incoming one, so ``$/cancel_request`` and
malformed lines are recorded too) into a :class:`TrafficLog`. The log is thread-safe and lets a
test wait, with a bound, until a condition over what was recorded holds.

This module is *not* responsible for answering anything or for any ACP semantics beyond
decoding a frame's JSON for display.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import reactivex

from rxacp._durations import Duration, wait_seconds
from rxacp.transport.base import AcpTransport, Frame
from rxacp.transport.tap import WireFrame, WireTapTransport

__all__ = [
    "PendingCall",
    "RecordingTransport",
    "TrafficLog",
    "WireFrame",
    "describe_messages",
    "summarize",
]

_T = TypeVar("_T")


class TrafficLog:
    """A thread-safe record of frames plus a condition to wait on (see :meth:`wait_until`)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self._frames: list[WireFrame] = []

    def record(self, direction: Literal["in", "out"], frame: Frame) -> None:
        """Append one frame and wake every waiter."""
        self.add(WireFrame.of(direction, frame))

    def add(self, item: WireFrame) -> None:
        """Append one decoded frame and wake every waiter."""
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
        self, check: Callable[[], _T | None], timeout: Duration, describe: Callable[[], str]
    ) -> _T:
        """Wait until ``check()`` returns something other than ``None`` and return it.

        Raises ``AssertionError(describe())`` if ``timeout`` (a ``timedelta`` or seconds; ``0``
        checks once) passes first. ``check`` runs with :attr:`cond` held; it must be quick and
        must not block.
        """
        deadline = time.monotonic() + wait_seconds(timeout, default=0.0)
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


class RecordingTransport(WireTapTransport):
    """Wraps ``inner`` and records every frame it moves into ``log`` (a
    :class:`~rxacp.transport.WireTapTransport` reporting to a :class:`TrafficLog`)."""

    def __init__(self, inner: AcpTransport, log: TrafficLog) -> None:
        super().__init__(inner, on_frame=log.add, on_close=log.notify)
        self._log = log


class PendingCall:
    """One subscribed request (an Observable) with a bounded wait for its outcome, woken by the
    :class:`TrafficLog`'s condition."""

    def __init__(self, source: reactivex.Observable[Any], traffic: TrafficLog) -> None:
        self._traffic = traffic
        self._box: dict[str, Any] = {}
        self.done = False
        self._sub = source.subscribe(self._on_next, self._on_error, self._on_completed)

    def _finish(self, key: str | None, value: Any = None) -> None:
        with self._traffic.cond:
            if key is not None:
                self._box[key] = value
            self.done = True
            self._traffic.cond.notify_all()

    def _on_next(self, value: Any) -> None:
        with self._traffic.cond:
            self._box["value"] = value

    def _on_error(self, error: Exception) -> None:
        self._finish("error", error)

    def _on_completed(self) -> None:
        self._finish(None)

    def dispose(self) -> None:
        self._sub.dispose()

    def describe(self) -> str:
        if "error" in self._box:
            return f"error {self._box['error']!r}"
        value = self._box.get("value")
        return f"stop reason {getattr(value, 'stop_reason', value)!r}"

    def result(self, timeout: Duration, describe: Callable[[], str]) -> Any:
        try:
            self._traffic.wait_until(lambda: True if self.done else None, timeout, describe)
        except AssertionError:
            self.dispose()
            raise
        if "error" in self._box:
            raise self._box["error"]
        return self._box.get("value")
