"""The reusable transport conformance check, run on every rxacp transport pair.

The stdio pair is a real one: a StdioAcpClientTransport spawning peers/relay_agent.py (which
runs StdioAcpAgentTransport on its stdio) and, in this process, a StdioAcpAgentTransport on a
Unix socket the relay connects to; so both stdio classes take part in every check.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from collections.abc import Awaitable, Callable

import pytest

from rxacp.testing.conformance import CHECKS, MakePair, check_transport_pair
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import (
    AcpTransport,
    AgentParameters,
    FrameReceiver,
    StdioAcpAgentTransport,
    StdioAcpClientTransport,
)
from rxacp.transport.base import Frame

from ._support import PYTHON, RELAY_AGENT, async_test


class AcceptingAgentTransport(AcpTransport):
    """StdioAcpAgentTransport over the Unix socket the relay process connects to."""

    def __init__(self, listener: socket.socket, path: str) -> None:
        self._listener = listener
        self._path = path
        self._inner: StdioAcpAgentTransport | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        try:
            conn, _ = await asyncio.wait_for(loop.sock_accept(self._listener), 10)
        finally:
            self._listener.close()
            os.unlink(self._path)
            os.rmdir(os.path.dirname(self._path))
        fd = conn.detach()
        self._inner = StdioAcpAgentTransport(
            open(fd, "rb", buffering=0),  # noqa: SIM115
            open(os.dup(fd), "wb", buffering=0),  # noqa: SIM115
            guard_stdout=False,
            close_streams=True,
        )
        await self._inner.start(loop, receiver)

    def send(self, frame: Frame) -> None:
        assert self._inner is not None
        self._inner.send(frame)

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()


def stdio_pair() -> tuple[AcpTransport, AcpTransport]:
    path = os.path.join(tempfile.mkdtemp(prefix="rxacp-"), "relay.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.setblocking(False)
    params = AgentParameters(PYTHON, [RELAY_AGENT, path], close_timeout=5)
    return StdioAcpClientTransport(params), AcceptingAgentTransport(listener, path)


def memory_pair(serialize: bool) -> MakePair:
    def make() -> tuple[AcpTransport, AcpTransport]:
        pair = InMemoryTransportPair.create(serialize=serialize)
        return pair.client_transport, pair.agent_transport

    return make


PAIRS: dict[str, MakePair] = {
    "memory-bytes": memory_pair(True),
    "memory-objects": memory_pair(False),
    "stdio": stdio_pair,
}


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
@pytest.mark.parametrize("kind", list(PAIRS))
@async_test
async def test_transport_pair_passes_conformance_check(
    kind: str, check: Callable[..., Awaitable[None]]
) -> None:
    await check(PAIRS[kind], timeout=10.0)


def test_whole_conformance_suite_passes_for_the_in_memory_pair_through_the_sync_entry() -> None:
    check_transport_pair(memory_pair(True))


class DroppingTransport(AcpTransport):
    """A broken transport: forwards to an in-memory end but loses every 100th frame."""

    def __init__(self, inner: AcpTransport) -> None:
        self._inner = inner
        self._count = 0

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        await self._inner.start(loop, receiver)

    def send(self, frame: Frame) -> None:
        self._count += 1
        if self._count % 100:
            self._inner.send(frame)

    async def close(self) -> None:
        await self._inner.close()


class DoubleCloseTransport(DroppingTransport):
    """A broken transport: reports on_closed twice."""

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self._receiver = receiver
        await self._inner.start(loop, receiver)

    def send(self, frame: Frame) -> None:
        self._inner.send(frame)

    async def close(self) -> None:
        await self._inner.close()
        await self._inner.close()
        from rxacp.transport import TransportClosed

        self._receiver.on_closed(TransportClosed("again"))


def broken_pair(cls: type[DroppingTransport]) -> MakePair:
    def make() -> tuple[AcpTransport, AcpTransport]:
        pair = InMemoryTransportPair.create()
        return cls(pair.client_transport), pair.agent_transport

    return make


def test_conformance_check_reports_a_transport_that_loses_frames() -> None:
    with pytest.raises(AssertionError, match="ordering a->b"):
        check_transport_pair(broken_pair(DroppingTransport), timeout=0.5)


def test_conformance_check_reports_a_transport_that_closes_twice() -> None:
    with pytest.raises(AssertionError, match="on_closed 2 times"):
        check_transport_pair(broken_pair(DoubleCloseTransport), timeout=2)
