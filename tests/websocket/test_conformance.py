"""The transport conformance check over WebSocket on loopback, for both agent-side shapes.

* ``standalone``: a client transport and a directly constructed ``WebSocketAcpAgentTransport``
  (it listens and serves one client), both on the check's loop;
* ``server``: a client transport and the per-connection transport a running
  ``WebSocketAcpAgentServer`` (on its own loop thread) hands to its factory, started on the
  check's loop — so every frame crosses between two loops.
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

from rxacp.testing.conformance import CHECKS, MakePair, check_transport_pair
from rxacp.transport import AcpTransport, FrameReceiver
from rxacp.transport.base import Frame
from rxacp.transport.websocket import (
    WebSocketAcpAgentServer,
    WebSocketAcpAgentTransport,
    WebSocketAcpClientTransport,
)

BIG = 32 * 1024 * 1024  # the check sends a 20 MiB frame; the default cap is 16 MiB


def standalone_pair() -> tuple[AcpTransport, AcpTransport]:
    agent = WebSocketAcpAgentTransport(port=0, max_message_size=BIG)
    client = WebSocketAcpClientTransport(agent.url, max_message_size=BIG)
    return client, agent


class AcceptedTransport(AcpTransport):
    """Stands for the server-side transport of the connection the client is about to open."""

    def __init__(self, accepted: queue.Queue[WebSocketAcpAgentTransport]) -> None:
        self._accepted = accepted
        self._inner: WebSocketAcpAgentTransport | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self._inner = await loop.run_in_executor(None, self._accepted.get, True, 10.0)
        await self._inner.start(loop, receiver)

    def send(self, frame: Frame) -> None:
        assert self._inner is not None
        self._inner.send(frame)

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()


@pytest.fixture(scope="module")
def server_pair() -> Iterator[MakePair]:
    accepted: queue.Queue[WebSocketAcpAgentTransport] = queue.Queue()
    server = WebSocketAcpAgentServer(accepted.put, max_message_size=BIG).start()

    def make() -> tuple[AcpTransport, AcpTransport]:
        client = WebSocketAcpClientTransport(server.url, max_message_size=BIG)
        return client, AcceptedTransport(accepted)

    yield make
    server.close()


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_standalone_agent_transport_passes_the_conformance_check(
    check: Callable[..., Coroutine[Any, Any, None]],
) -> None:
    asyncio.run(check(standalone_pair, timeout=10.0))


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_server_made_transport_passes_the_conformance_check_across_loops(
    check: Callable[..., Coroutine[Any, Any, None]], server_pair: MakePair
) -> None:
    asyncio.run(check(server_pair, timeout=10.0))


def test_whole_conformance_suite_passes_through_the_sync_entry() -> None:
    check_transport_pair(standalone_pair)
