"""The connection's state machine tested alone: a real loop thread, a transport that only
records its close, and stand-ins for the tables it settles (no wire, no pending requests)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any, cast

import pytest

from rxacp.errors import AcpConnectionException
from rxacp.session.connection import Connection
from rxacp.session.loop import LoopRunner
from rxacp.session.state import CLOSING, OPEN, STARTING, ConnectionState
from rxacp.transport.base import AcpTransport


class _Transport:
    def __init__(self, close_delay: float = 0.0) -> None:
        self.closes = 0
        self.finished = 0
        self.close_finished = threading.Event()
        self._close_delay = close_delay

    async def drain(self) -> None:
        return None

    async def close(self) -> None:
        self.closes += 1
        await asyncio.sleep(self._close_delay)
        self.finished += 1
        self.close_finished.set()


class _Parts:
    """A connection over a fresh loop thread; this object stands in for its wire, gate and
    tables, recording what was settled (``(reason, hard)`` as ``Connection.settle`` was
    called), released and drained."""

    def __init__(
        self,
        *,
        fail_start: BaseException | None = None,
        close_delay: float = 0.0,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.state = ConnectionState()
        self.runner = LoopRunner(loop, name="test-connection")
        self.transport = _Transport(close_delay)
        self.settled: list[tuple[str, bool]] = []
        self.released = 0
        self.drained: list[str] = []  # the phase at each wait for the inbox
        self.opened = 0
        self._fail_start = fail_start
        me = cast(Any, self)
        self.life = Connection(
            self.state,
            self.runner,
            cast(AcpTransport, self.transport),
            wire=me,
            gate=me,
            pending=me,
            in_flight=me,
            inbox=me,
            workers=me,
        )
        settle = self.life.settle

        def recorded(reason: AcpConnectionException, hard: bool) -> None:
            self.settled.append((str(reason), hard))
            settle(reason, hard)

        self.life.settle = recorded  # type: ignore[method-assign]

    # the wire
    async def start(self, loop: asyncio.AbstractEventLoop) -> None:
        assert loop is self.runner.loop
        self.opened += 1
        if self._fail_start is not None:
            raise self._fail_start
        assert self.state.advance(STARTING, OPEN)

    # the inbox
    async def wait_idle(self) -> None:
        self.drained.append(self.state.phase)

    def clear(self) -> list[Any]:
        return []

    # the gate, the pending and in-flight requests
    def open_forever(self) -> None:
        pass

    def fail_all(self, reason: AcpConnectionException, also: list[Any] | None = None) -> None:
        pass

    def abandon_all(self) -> None:
        pass

    # the workers
    def shutdown(self) -> None:
        self.released += 1


@pytest.fixture
def parts() -> Iterator[_Parts]:
    made = _Parts()
    yield made
    made.runner.stop()


def test_start_from_two_threads_opens_the_transport_once() -> None:
    made = _Parts()
    threads = [threading.Thread(target=made.life.start, args=(30.0,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    made.life.start(30.0)
    assert made.opened == 1
    assert made.state.phase == OPEN
    made.life.close(30.0)


def test_a_failed_start_is_raised_to_every_caller_and_settles_the_connection_hard() -> None:
    made = _Parts(fail_start=OSError("no such agent"))
    for _ in range(2):
        with pytest.raises(AcpConnectionException, match="transport failed to start: no such"):
            made.life.start(30.0)
    assert made.opened == 1
    assert made.settled == [("transport failed to start: no such agent", True)]
    made.life.close(30.0)


def test_a_start_failure_without_a_message_is_named_by_its_type() -> None:
    made = _Parts(fail_start=AssertionError())
    with pytest.raises(AcpConnectionException, match="transport failed to start: AssertionError"):
        made.life.start(30.0)
    assert made.settled == [("transport failed to start: AssertionError", True)]
    made.life.close(30.0)


def test_only_the_first_close_runs_and_it_releases_the_workers_and_the_loop(
    parts: _Parts,
) -> None:
    parts.life.start(30.0)
    parts.life.close(30.0)
    parts.life.close_gracefully(30.0)
    parts.life.close(30.0)
    assert parts.settled == [("connection closed", True)]
    assert parts.transport.closes == 1
    assert parts.released == 1
    assert parts.drained == []  # the graceful close never ran


def test_a_graceful_close_marks_closing_waits_for_the_inbox_then_closes(parts: _Parts) -> None:
    parts.life.start(30.0)
    parts.life.close_gracefully(30.0)
    assert parts.drained == [CLOSING]
    assert parts.settled == [("connection closed gracefully", True)]
    assert parts.transport.closes == 1


def test_a_close_started_on_the_loop_is_awaited_by_wait_closed_async_on_that_loop() -> None:
    async def close_from_a_handler() -> tuple[bool, bool]:
        made = _Parts(close_delay=0.05, loop=asyncio.get_running_loop())  # the caller's loop
        await made.life.start_async()
        made.life.close(30.0)  # on the loop: scheduled as a task the lifecycle keeps
        scheduled_only = not made.transport.close_finished.is_set()
        await made.life.wait_closed_async()
        return scheduled_only, made.transport.close_finished.is_set() and made.released == 1

    assert asyncio.run(asyncio.wait_for(close_from_a_handler(), 30)) == (True, True)


def test_after_eof_the_transport_is_closed_by_a_task_it_keeps(parts: _Parts) -> None:
    parts.life.start(30.0)
    parts.runner.call(lambda: parts.life.peer_closed(AcpConnectionException("EOF")))
    assert parts.transport.close_finished.wait(30)
    assert parts.transport.closes == 1


def test_a_close_after_eof_lets_the_eof_close_finish_before_the_loop_stops(parts: _Parts) -> None:
    """Before: ``close()`` once the peer's EOF had ended the connection (what ``AcpAgent.run()``
    and the reference agent do) closed the transport a second time, which returned at once,
    and stopped the loop under the first close's drain: the answers still queued were lost
    (a CI run: 98,131 of 100,000). Now it waits for that close instead of starting another."""
    parts.transport._close_delay = 0.2  # the EOF close drains for a while
    parts.life.start(30.0)
    eof_close_started = threading.Event()

    def on_eof() -> None:
        parts.life.peer_closed(AcpConnectionException("EOF"))
        eof_close_started.set()

    parts.runner.call(on_eof)
    assert eof_close_started.wait(30)
    parts.life.close(30.0)
    assert parts.transport.closes == 1, "close() started a second transport close"
    assert parts.transport.finished == 1, "close() returned before the EOF close finished"


class _StuckParts(_Parts):
    """A peer that stopped reading (the transport's drain never finishes) and an inbox whose
    queued work takes ``inbox_seconds`` (forever when None)."""

    def __init__(self, inbox_seconds: float | None = None) -> None:
        super().__init__()
        self.transport.drain = self._never  # type: ignore[method-assign]
        self._inbox_seconds = inbox_seconds

    async def _never(self) -> None:
        await asyncio.Event().wait()

    async def wait_idle(self) -> None:
        self.drained.append(self.state.phase)
        if self._inbox_seconds is None:
            await self._never()
        else:
            await asyncio.sleep(self._inbox_seconds)  # the queued work the inbox runs


def test_a_graceful_close_past_its_bound_still_settles_and_closes_the_transport() -> None:
    made = _StuckParts(inbox_seconds=0.1)
    made.life.start(30.0)
    made.life.close_gracefully(0.2)
    assert made.drained == [CLOSING]
    assert made.settled == [("connection closed gracefully", True)]
    assert made.transport.closes == 1
    assert made.released == 1


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_a_graceful_close_with_a_bound_over_10_s_shares_one_deadline_and_settles_everything() -> (
    None
):
    """Before: with a bound over 10 s the caller waited ``bound + 10`` s while the close waited up
    to ``bound`` for the inbox and again for the transport's drain; the caller's wait ran out
    first, the close was cancelled and the loop stopped, so nothing settled and the transport
    stayed open (bound 12: the call returned after 22 s with the pending request unsettled)."""
    made = _StuckParts(inbox_seconds=11.0)
    made.life.start(30.0)
    made.life.close_gracefully(12.0)
    assert made.settled == [("connection closed gracefully", True)]
    assert made.transport.closes == 1
    assert made.transport.finished == 1
    assert made.released == 1
