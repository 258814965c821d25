"""A reusable conformance check for :class:`~rxacp.transport.AcpTransport` implementations.

Transport authors call :func:`check_transport_pair` from a test with a factory that returns two
*connected, not yet started* transports (``a``, ``b``)::

    def test_my_transport_conforms():
        check_transport_pair(lambda: make_connected_pair())

Each check creates a fresh pair, starts both ends on one event loop and verifies one behaviour;
a failure raises ``AssertionError`` naming the behaviour. The individual checks are listed in
:data:`CHECKS` so a test suite can run them one per test. Byte frames are one line of JSON each;
transports with ``carries_objects`` get dicts instead.

This module is *not* a test of JSON-RPC or ACP behaviour; it only checks frame transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from rxacp._durations import Duration, wait_seconds
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, JsonValue, TransportClosed

__all__ = [
    "CHECKS",
    "MakePair",
    "acheck_transport_pair",
    "check_close_is_idempotent",
    "check_close_propagates_to_both_sides",
    "check_close_while_busy",
    "check_frames_arrive_in_order",
    "check_frames_arrive_intact",
    "check_send_after_close_is_a_no_op",
    "check_transport_pair",
]

MakePair = Callable[[], tuple[AcpTransport, AcpTransport]]
"""Returns two connected transports that have not been started."""

BIG_FRAME_BYTES = 20 * 1024 * 1024
ORDERED_FRAMES = 10_000


class _Recorder(FrameReceiver):
    """A FrameReceiver that records everything and lets a test await counts."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frames: list[Frame] = []
        self.too_large: list[int] = []
        self.closed: list[TransportClosed] = []
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._closed_waiter: asyncio.Future[None] | None = None

    def on_frame(self, frame: Frame) -> None:
        self.frames.append(frame)
        self._wake()

    def on_frame_too_large(self, size: int) -> None:
        self.too_large.append(size)

    def on_closed(self, info: TransportClosed) -> None:
        self.closed.append(info)
        self._wake()
        if self._closed_waiter is not None and not self._closed_waiter.done():
            self._closed_waiter.set_result(None)

    def _wake(self) -> None:
        for count, fut in self._waiters:
            if not fut.done() and (len(self.frames) >= count or self.closed):
                fut.set_result(None)

    async def wait_frames(self, count: int, timeout: float, what: str) -> None:
        if len(self.frames) < count and not self.closed:
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append((count, fut))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(fut, timeout)
        assert len(self.frames) >= count, (
            f"{what}: side {self.name} received {len(self.frames)} of {count} frames "
            f"within {timeout:g} s (closed: {self.closed!r})"
        )

    async def wait_closed(self, timeout: float, what: str) -> None:
        if not self.closed:
            self._closed_waiter = asyncio.get_running_loop().create_future()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed_waiter, timeout)
        assert self.closed, f"{what}: side {self.name} got no on_closed within {timeout:g} s"


class _Pair:
    def __init__(self, a: AcpTransport, b: AcpTransport) -> None:
        self.a, self.b = a, b
        self.ra, self.rb = _Recorder("a"), _Recorder("b")

    async def start(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        # Started together: some pairs (a process and its peer) only connect once both run.
        await asyncio.wait_for(
            asyncio.gather(self.a.start(loop, self.ra), self.b.start(loop, self.rb)), timeout
        )

    async def close(self, timeout: float) -> None:
        await asyncio.wait_for(asyncio.gather(self.a.close(), self.b.close()), timeout)


def _frame(transport: AcpTransport, value: JsonValue) -> Frame:
    if transport.carries_objects:
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


async def _with_pair(
    make_pair: MakePair, timeout: float, body: Callable[[_Pair], Awaitable[None]]
) -> None:
    a, b = make_pair()
    assert isinstance(a, AcpTransport) and isinstance(b, AcpTransport), (
        f"make_pair must return two AcpTransport instances, got {type(a)!r}, {type(b)!r}"
    )
    pair = _Pair(a, b)
    await pair.start(timeout)
    try:
        await body(pair)
    finally:
        await pair.close(timeout)


async def check_frames_arrive_intact(make_pair: MakePair, *, timeout: Duration = 10.0) -> None:
    """Frames (ASCII, non-ASCII, escaped newlines and a 20 MiB frame) arrive unchanged."""
    timeout = wait_seconds(timeout, default=10.0)

    async def body(p: _Pair) -> None:
        for src, dst, name in ((p.a, p.rb, "a->b"), (p.b, p.ra, "b->a")):
            values: list[Any] = [
                {"jsonrpc": "2.0", "method": "ping", "params": {}},
                {"text": "héllo wörld — 日本語 🎉", "n": 1},
                {"text": "line1\nline2\r\n\ttab", "quote": '"'},
                {"big": "x" * BIG_FRAME_BYTES},
                {"after": "big"},
            ]
            frames = [_frame(src, v) for v in values]
            start = len(dst.frames)
            for f in frames:
                src.send(f)
            await dst.wait_frames(start + len(frames), timeout, f"intact frames {name}")
            got = dst.frames[start : start + len(frames)]
            for i, (sent, received) in enumerate(zip(frames, got, strict=True)):
                assert sent == received, (
                    f"intact frames {name}: frame {i} changed in transit "
                    f"(sent {_short(sent)}, received {_short(received)})"
                )

    await _with_pair(make_pair, timeout, body)


async def check_frames_arrive_in_order(make_pair: MakePair, *, timeout: Duration = 10.0) -> None:
    """10,000 frames each way arrive complete and in send order."""
    timeout = wait_seconds(timeout, default=10.0)

    async def body(p: _Pair) -> None:
        for i in range(ORDERED_FRAMES):
            p.a.send(_frame(p.a, {"seq": i}))
            p.b.send(_frame(p.b, {"seq": i}))
        for dst, src, name in ((p.rb, p.a, "a->b"), (p.ra, p.b, "b->a")):
            await dst.wait_frames(ORDERED_FRAMES, timeout, f"ordering {name}")
            expected = [_frame(src, {"seq": i}) for i in range(ORDERED_FRAMES)]
            got = dst.frames[:ORDERED_FRAMES]
            if got != expected:
                bad = next(i for i, (x, y) in enumerate(zip(got, expected, strict=True)) if x != y)
                raise AssertionError(
                    f"ordering {name}: frame {bad} is {_short(got[bad])}, "
                    f"expected {_short(expected[bad])}"
                )

    await _with_pair(make_pair, timeout, body)


async def check_close_propagates_to_both_sides(
    make_pair: MakePair, *, timeout: Duration = 10.0
) -> None:
    """Closing either end → on_closed exactly once on both ends (tried from each side)."""
    timeout = wait_seconds(timeout, default=10.0)
    for first in ("a", "b"):
        a, b = make_pair()
        p = _Pair(a, b)
        await p.start(timeout)
        closer, other = (p.a, p.b) if first == "a" else (p.b, p.a)
        rc, ro = (p.ra, p.rb) if first == "a" else (p.rb, p.ra)
        await asyncio.wait_for(closer.close(), timeout)
        assert len(rc.closed) == 1, (
            f"close from {first}: the closing side got on_closed {len(rc.closed)} times before "
            "close() returned (expected exactly 1)"
        )
        await ro.wait_closed(timeout, f"close from {first}: the peer should see the close")
        await asyncio.wait_for(other.close(), timeout)
        await asyncio.sleep(0.05)  # let any stray duplicate callback run
        for r in (rc, ro):
            assert len(r.closed) == 1, (
                f"close from {first}: side {r.name} got on_closed {len(r.closed)} times: {r.closed}"
            )


async def check_send_after_close_is_a_no_op(
    make_pair: MakePair, *, timeout: Duration = 10.0
) -> None:
    """send() after close() neither raises nor delivers; the peer may send after seeing EOF."""
    timeout = wait_seconds(timeout, default=10.0)

    async def body(p: _Pair) -> None:
        p.a.send(_frame(p.a, {"before": "close"}))
        await asyncio.wait_for(p.a.close(), timeout)
        try:
            p.a.send(_frame(p.a, {"after": "close"}))
        except Exception as exc:
            raise AssertionError(f"send after close raised {exc!r}") from exc
        await p.rb.wait_closed(timeout, "send after close")
        try:
            p.b.send(_frame(p.b, {"to": "closed peer"}))
        except Exception as exc:
            raise AssertionError(f"send to a closed peer raised {exc!r}") from exc
        after = _frame(p.a, {"after": "close"})
        assert after not in p.rb.frames, "a frame sent after close() reached the peer"
        late = _frame(p.b, {"to": "closed peer"})
        assert late not in p.ra.frames, "a frame reached a side after its close()"

    await _with_pair(make_pair, timeout, body)


async def check_close_while_busy(make_pair: MakePair, *, timeout: Duration = 10.0) -> None:
    """close() while many frames are in flight both ways returns promptly and cleanly."""
    timeout = wait_seconds(timeout, default=10.0)

    async def body(p: _Pair) -> None:
        payload = "y" * 8192
        for i in range(2000):
            p.a.send(_frame(p.a, {"i": i, "p": payload}))
            p.b.send(_frame(p.b, {"i": i, "p": payload}))
        try:
            await asyncio.wait_for(p.a.close(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"close() while busy did not return within {timeout:g} s"
            ) from None
        await p.rb.wait_closed(timeout, "close while busy")
        assert len(p.ra.closed) == 1, f"closing side got on_closed {len(p.ra.closed)} times"

    await _with_pair(make_pair, timeout, body)


async def check_close_is_idempotent(make_pair: MakePair, *, timeout: Duration = 10.0) -> None:
    """close() may be called again, and concurrently, without error or a second on_closed."""
    timeout = wait_seconds(timeout, default=10.0)

    async def body(p: _Pair) -> None:
        for t, r in ((p.a, p.ra), (p.b, p.rb)):
            await asyncio.wait_for(t.close(), timeout)
            await asyncio.wait_for(asyncio.gather(t.close(), t.close()), timeout)
            assert len(r.closed) == 1, f"side {r.name} got on_closed {len(r.closed)} times"

    await _with_pair(make_pair, timeout, body)


CHECKS: tuple[Callable[..., Awaitable[None]], ...] = (
    check_frames_arrive_intact,
    check_frames_arrive_in_order,
    check_close_propagates_to_both_sides,
    check_send_after_close_is_a_no_op,
    check_close_while_busy,
    check_close_is_idempotent,
)
"""Every check, in the order :func:`check_transport_pair` runs them."""


async def acheck_transport_pair(make_pair: MakePair, *, timeout: Duration = 10.0) -> None:
    """Run every check in :data:`CHECKS` on the running loop."""
    timeout = wait_seconds(timeout, default=10.0)
    for check in CHECKS:
        await check(make_pair, timeout=timeout)


def check_transport_pair(make_pair: MakePair, *, timeout: Duration = 10.0) -> None:
    """Run every conformance check in a fresh event loop; raise AssertionError on a failure."""
    timeout = wait_seconds(timeout, default=10.0)
    asyncio.run(acheck_transport_pair(make_pair, timeout=timeout))


def _short(frame: Any) -> str:
    text = repr(frame)
    return text if len(text) <= 80 else f"{text[:60]}...({len(text)} chars)"
