"""WriteFlow: drains wait for the write buffer to empty without polling; back-pressure is exact."""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVarTuple

import pytest

from rxacp.transport import AgentParameters, StdioAcpAgentTransport, StdioAcpClientTransport
from rxacp.transport.flow import WriteFlow

from ._support import Recorder

pytestmark = pytest.mark.selector_loop  # a subclass of asyncio.SelectorEventLoop

_Ts = TypeVarTuple("_Ts")


class _TimerCountingLoop(asyncio.SelectorEventLoop):
    """Counts every timer scheduled (``call_later`` and ``asyncio.sleep(d > 0)`` go through
    ``call_at``): a drain that polled would schedule one per poll."""

    timers = 0

    def call_at(
        self,
        when: float,
        callback: Callable[[*_Ts], object],
        *args: *_Ts,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        self.timers += 1
        return super().call_at(when, callback, *args, context=context)


def _run(main: Callable[[_TimerCountingLoop], Coroutine[Any, Any, None]]) -> None:
    with asyncio.Runner(loop_factory=_TimerCountingLoop) as runner:
        loop = runner.get_loop()
        assert isinstance(loop, _TimerCountingLoop)
        runner.run(main(loop))


class _FakeWriteTransport(asyncio.WriteTransport):
    """asyncio's write-buffer contract by hand: pause above the high mark, resume at the low."""

    def __init__(self, flow: WriteFlow, *, low: int = 16, high: int = 64) -> None:
        super().__init__()
        self.flow = flow
        self.size = 0
        self.low, self.high = low, high
        self.paused = False
        self.closing = False

    def get_write_buffer_size(self) -> int:
        return self.size

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (self.low, self.high)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        assert high is not None and low is not None and high >= low >= 0
        self.high, self.low = high, low
        self._maybe_pause()

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.size += len(data)
        self._maybe_pause()

    def os_took(self, n: int) -> None:
        """The OS accepted ``n`` buffered bytes."""
        self.size -= n
        if self.paused and self.size <= self.low:
            self.paused = False
            self.flow.resume_writing()

    def _maybe_pause(self) -> None:
        if self.size > self.high and not self.paused:
            self.paused = True
            self.flow.pause_writing()


async def _turns(n: int = 50) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def _flow() -> tuple[WriteFlow, list[str]]:
    events: list[str] = []
    return WriteFlow(lambda: events.append("pause"), lambda: events.append("resume")), events


def test_a_drain_ends_when_the_buffer_empties_and_schedules_no_timer_while_it_waits() -> None:
    async def main(loop: _TimerCountingLoop) -> None:
        flow, events = _flow()
        transport = _FakeWriteTransport(flow)
        transport.write(b"x" * 10)  # under the high mark: asyncio would never call back
        timers = loop.timers
        drain = asyncio.ensure_future(flow.drain(transport))
        await _turns()
        assert not drain.done()
        transport.os_took(4)
        await _turns()
        assert not drain.done()  # 6 bytes still buffered
        assert loop.timers == timers  # waiting, not polling
        transport.os_took(6)
        await _turns(2)
        assert drain.done()
        assert transport.get_write_buffer_limits() == (16, 64)  # the real marks are back
        assert events == []  # the drain's own pause is not back-pressure

    _run(main)


def test_a_drain_during_real_back_pressure_ends_only_when_empty_and_reports_the_resume() -> None:
    async def main(loop: _TimerCountingLoop) -> None:
        flow, events = _flow()
        transport = _FakeWriteTransport(flow)
        transport.write(b"x" * 100)
        assert events == ["pause"]
        drain = asyncio.ensure_future(flow.drain(transport))
        await _turns()
        transport.os_took(90)  # at the real low mark (16) the transport would resume ...
        await _turns()
        assert not drain.done() and events == ["pause"]  # ... but the drain waits for empty
        transport.os_took(10)
        await _turns(2)
        assert drain.done() and events == ["pause", "resume"]
        assert transport.get_write_buffer_limits() == (16, 64)

    _run(main)


def test_a_drain_returns_at_once_when_nothing_is_buffered_or_the_transport_closes() -> None:
    async def main(loop: _TimerCountingLoop) -> None:
        flow, _ = _flow()
        transport = _FakeWriteTransport(flow)
        await asyncio.wait_for(flow.drain(transport), 5)
        transport.write(b"x" * 10)
        drain = asyncio.ensure_future(flow.drain(transport))
        await _turns()
        transport.closing = True
        flow.lost()  # the pipe is gone: nothing will be written any more
        await asyncio.wait_for(drain, 5)

    _run(main)


def test_concurrent_drains_all_end_and_leave_the_real_marks() -> None:
    async def main(loop: _TimerCountingLoop) -> None:
        flow, events = _flow()
        transport = _FakeWriteTransport(flow)
        transport.write(b"x" * 10)
        drains = [asyncio.ensure_future(flow.drain(transport)) for _ in range(3)]
        await _turns()
        transport.os_took(10)
        await asyncio.wait_for(asyncio.gather(*drains), 5)
        assert transport.get_write_buffer_limits() == (16, 64) and events == []
        transport.write(b"x" * 65)  # and back-pressure works as before
        assert events == ["pause"]

    _run(main)


def test_a_drain_given_up_on_over_the_high_mark_announces_the_back_pressure() -> None:
    async def main(loop: _TimerCountingLoop) -> None:
        flow, events = _flow()
        transport = _FakeWriteTransport(flow)
        transport.write(b"x" * 10)
        drain = asyncio.ensure_future(flow.drain(transport))
        await _turns()
        transport.write(b"x" * 100)  # more than the real high mark while the drain waits
        drain.cancel()
        await _turns(2)
        assert drain.cancelled() and events == ["pause"]
        transport.os_took(110)
        assert events == ["pause", "resume"]

    _run(main)


def test_the_agent_stdio_drain_waits_for_a_slow_reader_without_polling() -> None:
    """A 1 MiB frame, a pipe that holds 64 KiB and nobody reading: drain() returns when the
    reader has taken everything, and no timer beyond its own bound runs meanwhile."""

    async def main(loop: _TimerCountingLoop) -> None:
        out_r, out_w = os.pipe()
        in_r, in_w = os.pipe()
        stdin, stdout = os.fdopen(in_r, "rb", buffering=0), os.fdopen(out_w, "wb", buffering=0)
        transport = StdioAcpAgentTransport(stdin, stdout, write_buffer_high=8 * 1024 * 1024)
        got = bytearray()
        reader: threading.Thread | None = None
        try:
            await transport.start(loop, Recorder().bind())
            transport.send(b"x" * (1024 * 1024))
            timers = loop.timers
            drain = asyncio.ensure_future(transport.drain())
            await _turns()
            assert not drain.done()  # most of the frame is still in asyncio's buffer

            def read_all() -> None:
                while len(got) < 1024 * 1024 + 1:
                    chunk = os.read(out_r, 65536)
                    if not chunk:
                        return
                    got.extend(chunk)

            reader = threading.Thread(target=read_all, daemon=True)
            reader.start()
            await drain  # bounded by pytest-timeout (a wait_for would add a timer of its own)
            assert loop.timers - timers <= 1  # drain()'s 10 s bound, nothing else
        finally:
            await transport.close()
            if reader is not None:
                reader.join(10)
            os.close(out_r)
            os.close(in_w)
            stdin.close()
            stdout.close()
        assert bytes(got) == b"x" * (1024 * 1024) + b"\n"

    _run(main)


_LATE_READER = """
import signal, sys

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
sys.stdout.write('{"ready":1}\\n'); sys.stdout.flush()
signal.sigwait({signal.SIGUSR1})  # read stdin only when told
n = 0
while n < %d:
    chunk = sys.stdin.buffer.read1(65536)
    if not chunk:
        break
    n += len(chunk)
sys.stdout.write('{"read":%%d}\\n' %% n); sys.stdout.flush()
"""


def test_the_client_stdio_drain_waits_for_an_agent_reading_late_without_polling() -> None:
    """200 KiB for an agent that reads nothing until signalled: under the 256 KiB high mark,
    so asyncio alone would never call back; drain() ends when the agent has read it all."""
    size = 200 * 1024

    async def main(loop: _TimerCountingLoop) -> None:
        script = _LATE_READER % (size + 1)
        transport = StdioAcpClientTransport(AgentParameters(sys.executable, ["-c", script]))
        rec = Recorder().bind()
        await transport.start(loop, rec)
        try:
            await rec.frames_at_least(1, timeout=30)  # the agent blocks SIGUSR1 now
            transport.send(b"x" * size)
            timers = loop.timers
            drain = asyncio.ensure_future(transport.drain())
            await _turns()
            assert not drain.done()  # the pipe holds 64 KiB; the rest waits in asyncio
            assert transport.pid is not None
            os.kill(transport.pid, signal.SIGUSR1)
            await drain  # bounded by pytest-timeout (a wait_for would add a timer of its own)
            assert loop.timers - timers <= 1  # drain()'s bound, nothing else
            await rec.frames_at_least(2, timeout=30)
            assert rec.frames[1] == b'{"read":%d}' % (size + 1)
        finally:
            await transport.close()

    _run(main)
