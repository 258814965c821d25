"""Fixtures for client tests: an in-memory pair with the scripted FakeAgent on the far end."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import pytest
import reactivex
from reactivex import operators as ops

from rxacp.client import AcpAsyncClientBuilder, AcpClient, AcpSyncClient, AcpSyncClientBuilder
from rxacp.schema import SessionNotification
from rxacp.testing import quiesce
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .._notes import chunk_text
from .fake_agent import FakeAgent

T = TypeVar("T")

FAKE_AGENT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_agent.py")


class Rig:
    """A FakeAgent plus builders of clients connected to it (in memory)."""

    def __init__(self) -> None:
        self.pair = InMemoryTransportPair.create()
        self.agent_options: dict[str, Any] = {}
        self._agent: FakeAgent | None = None
        self._closers: list[Callable[[], None]] = []

    @property
    def agent(self) -> FakeAgent:
        if self._agent is None:
            self._agent = FakeAgent(self.pair.agent_transport, **self.agent_options).start()
            self._closers.append(self._agent.close)
        return self._agent

    def async_builder(self) -> AcpAsyncClientBuilder:
        _ = self.agent
        return AcpClient.async_(self.pair.client_transport)

    def sync_builder(self) -> AcpSyncClientBuilder:
        _ = self.agent
        return AcpClient.sync(self.pair.client_transport)

    def on_close(self, fn: Callable[[], None]) -> None:
        self._closers.append(fn)

    def initialized_sync_client(self) -> AcpSyncClient:
        """A sync client with default options, initialized, closed with the rig."""
        client = self.sync_builder().build()
        self.on_close(client.close)
        client.initialize()
        return client

    def close(self) -> None:
        for fn in reversed(self._closers):
            fn()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


flush = quiesce
"""Wait until the session is quiet: loop and worker threads (``rxacp.testing.quiesce``)."""


def stdio_transport() -> StdioAcpClientTransport:
    """A transport that spawns the FakeAgent as a child process over stdio."""
    return StdioAcpClientTransport(AgentParameters(sys.executable, [FAKE_AGENT_SCRIPT]))


def texts(updates: list[SessionNotification]) -> list[str]:
    """The text of every agent_message_chunk in ``updates`` (SessionNotifications)."""
    return [chunk_text(u) for u in updates if u.update.session_update == "agent_message_chunk"]


def to_concurrent_future(source: reactivex.Observable[T]) -> concurrent.futures.Future[T]:
    """``source.pipe(ops.to_future(concurrent.futures.Future))``: the Java SDK's ``toFuture()``
    as users write it (documented in ``rxacp.session.observable``).

    reactivex annotates ``to_future``'s factory as making asyncio futures; the operator only uses
    ``set_result``/``set_exception``/``add_done_callback``/``cancel``, which a
    ``concurrent.futures.Future`` has too, so the factory and the result are cast to what they
    are at runtime.
    """
    factory = cast("Callable[[], asyncio.Future[T]]", concurrent.futures.Future)
    return cast("concurrent.futures.Future[T]", source.pipe(ops.to_future(factory)))
