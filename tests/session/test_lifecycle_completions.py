"""Lifecycle calls return an eager, replayed ``Completion``: ``agent.start()`` alone still starts,
and Java's ``agent.start().block()`` / ``closeGracefully().block(timeout)`` work too."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops

from rxacp import AcpAgent, AcpClient, AcpConnectionException
from rxacp.schema import InitializeResponse
from rxacp.session import Completion
from rxacp.testing import InMemoryTransportPair, MockAcpAgent, MockAcpClient
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver

pytestmark = pytest.mark.timeout(30)

TIMEOUT = timedelta(seconds=5)


class _FailingStart(AcpTransport):
    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        raise OSError("no such agent")

    def send(self, frame: Frame) -> None:
        pass

    async def close(self) -> None:
        pass


# ---------------------------------------------------------------------- Completion itself
def test_a_completion_replays_its_outcome_to_every_subscriber_however_late() -> None:
    completion = Completion("step")
    early: list[Any] = []
    completion.subscribe(early.append, on_completed=lambda: early.append("|"))
    assert not completion.done and early == []
    completion.complete()
    completion.fail(ValueError("too late"))  # the first settle wins
    late: list[Any] = []
    completion.subscribe(late.append, on_completed=lambda: late.append("|"))
    assert early == late == [None, "|"]
    assert completion.block(TIMEOUT) is None and completion.run() is None
    assert asyncio.run(_await(completion)) is None


def test_a_failed_completion_delivers_its_error_to_late_subscribers_block_and_await() -> None:
    completion = Completion.of_failure(AcpConnectionException("gone"), "close")
    errors: list[Exception] = []
    completion.subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["gone"]
    with pytest.raises(AcpConnectionException, match="gone"):
        completion.block(TIMEOUT)
    with pytest.raises(AcpConnectionException, match="gone"):
        asyncio.run(_await(completion))
    assert completion.done and isinstance(completion.error, AcpConnectionException)


def test_all_of_completes_after_every_part_and_fails_with_the_first_failure() -> None:
    a, b = Completion("a"), Completion("b")
    both = Completion.all_of([a, b])
    a.complete()
    assert not both.done
    b.complete()
    assert both.done and both.error is None
    c, d = Completion("c"), Completion("d")
    either = Completion.all_of([c, d])
    d.fail(KeyError("d"))
    assert either.done and isinstance(either.error, KeyError)


def test_a_completion_chains_the_next_step_like_java_then() -> None:
    chained = Completion.of_done().pipe(ops.flat_map(lambda _: reactivex.just("next")))
    assert chained.block(TIMEOUT) == "next"


async def _await(completion: Completion) -> Any:
    return await completion


# ---------------------------------------------------------------------- agents
@pytest.mark.parametrize("kind", ["async", "sync"])
def test_agent_start_starts_at_once_and_returns_a_done_completion(kind: str) -> None:
    pair = InMemoryTransportPair.create()
    builder = (
        AcpAgent.async_(pair.agent_transport)
        if kind == "async"
        else AcpAgent.sync(pair.agent_transport)
    )
    agent = builder.initialize_handler(
        (lambda r: reactivex.just(InitializeResponse.ok()))
        if kind == "async"
        else (lambda r: InitializeResponse.ok())
    ).build()
    started = agent.start()  # a plain call starts the agent
    assert isinstance(started, Completion) and started.done
    assert agent.start().block(TIMEOUT) is None  # Java: agent.start().block()
    seen: list[str] = []
    agent.start().subscribe(on_completed=lambda: seen.append("done"))  # Java: .subscribe()
    assert seen == ["done"]
    with AcpClient.sync(pair.client_transport).build() as client:
        assert client.initialize().protocol_version == 1
    closed = agent.close_gracefully(TIMEOUT)
    assert closed.done and closed.error is None
    assert not agent.session.is_open
    assert agent.close_gracefully().block(TIMEOUT) is None  # again: still done


def test_a_failed_start_raises_from_a_plain_call() -> None:
    agent = AcpAgent.async_(_FailingStart()).build()
    with pytest.raises(AcpConnectionException, match="no such agent"):
        agent.start()
    agent.close()


def test_on_the_connections_own_loop_start_delivers_its_failure_to_awaiters() -> None:
    async def main() -> str:
        loop = asyncio.get_running_loop()
        agent = AcpAgent.async_(_FailingStart()).event_loop(loop).build()
        started = agent.start()  # scheduled: this loop is the connection's
        try:
            await started
        except AcpConnectionException as exc:
            return str(exc)
        finally:
            agent.close()
            await agent.wait_closed_async()
        return "no error"

    assert "no such agent" in asyncio.run(main())


def test_close_gracefully_from_a_handler_on_the_loop_settles_once_the_close_finished() -> None:
    pair = InMemoryTransportPair.create()
    box: dict[str, Any] = {}
    finished = threading.Event()

    def close_from_handler(_params: Any) -> None:
        completion = box["agent"].close_gracefully()
        box["pending_at_call"] = not completion.done
        completion.subscribe(on_completed=finished.set)

    agent = (
        AcpAgent.async_(pair.agent_transport)
        .ext_notification_handler("_test/close", close_from_handler)
        .build()
    )
    box["agent"] = agent
    agent.start()
    with AcpClient.sync(pair.client_transport).build() as client:
        client.initialize()
        client.ext_notification("_test/close", {})
        assert finished.wait(10)
    assert box["pending_at_call"] is True
    assert not agent.session.is_open


# ---------------------------------------------------------------------- clients
def test_async_client_close_gracefully_blocks_with_a_timedelta_like_java() -> None:
    with MockAcpAgent() as mock:
        client = AcpClient.async_(mock.client_transport).build()
        assert client.initialize().block(TIMEOUT) is not None
        assert client.close_gracefully().block(TIMEOUT) is None  # Java: .block(TIMEOUT)
        assert not client.session.is_open


def test_sync_client_close_gracefully_returns_true_like_javas_boolean() -> None:
    with MockAcpAgent() as mock:
        client = AcpClient.sync(mock.client_transport).build()
        client.initialize()
        assert client.close_gracefully(TIMEOUT) is True
        assert not client.session.is_open


# ---------------------------------------------------------------------- transports, pair, kit
def test_pair_close_gracefully_closes_both_started_ends_and_completes() -> None:
    pair = InMemoryTransportPair.create()
    agent = AcpAgent.sync(pair.agent_transport).build()
    agent.start()
    client = AcpClient.sync(pair.client_transport).build()
    client.initialize()
    assert pair.close_gracefully(TIMEOUT).block(TIMEOUT) is None  # Java: pair.closeGracefully()
    assert agent.session.wait_closed(TIMEOUT) and client.session.wait_closed(TIMEOUT)
    client.close()
    agent.close()


def test_a_transport_close_gracefully_ends_the_connection_it_carries() -> None:
    pair = InMemoryTransportPair.create()
    agent = AcpAgent.sync(pair.agent_transport).build()
    agent.start()
    closed = pair.agent_transport.close_gracefully(
        TIMEOUT
    )  # Java: agentTransport.closeGracefully()
    assert closed.done and closed.error is None
    assert agent.session.wait_closed(TIMEOUT)
    agent.close()


def test_a_transport_never_started_has_nothing_to_close() -> None:
    pair = InMemoryTransportPair.create()
    assert pair.client_transport.close_gracefully().done
    pair.close(timedelta(seconds=1))  # the pair's close takes a timedelta too


def test_the_mocks_close_gracefully_returns_a_done_completion() -> None:
    mock_agent = MockAcpAgent()
    assert mock_agent.close_gracefully().block(TIMEOUT) is None
    mock_client = MockAcpClient()
    assert mock_client.close_gracefully(TIMEOUT).done
