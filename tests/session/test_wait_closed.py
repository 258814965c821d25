"""One lifecycle vocabulary: agents, clients and the session each wait for the end of the
connection with ``wait_closed(timeout)`` (blocking) and ``wait_closed_async()``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.schema import NewSessionResponse
from rxacp.testing.memory import InMemoryTransportPair


def _connected(agent_api: str) -> tuple[Any, Any, InMemoryTransportPair]:
    pair = InMemoryTransportPair.create()
    build = AcpAgent.sync if agent_api == "sync" else AcpAgent.async_
    agent = (
        build(pair.agent_transport)
        .new_session_handler(lambda _r: NewSessionResponse(session_id="s1"))
        .build()
    )
    agent.start()
    client = AcpClient.sync(pair.client_transport).build()
    client.initialize()
    return agent, client, pair


@pytest.mark.parametrize("agent_api", ["sync", "async"])
def test_wait_closed_is_false_while_open_and_true_once_the_peer_closed(agent_api: str) -> None:
    agent, client, pair = _connected(agent_api)
    try:
        assert agent.wait_closed(0.01) is False
        assert client.wait_closed(0.01) is False
        assert client.async_client.wait_closed(0.01) is False
        client.close()
        assert client.wait_closed(30) is True
        assert client.async_client.wait_closed(30) is True
        assert agent.wait_closed(30) is True  # the client's close is the agent's EOF
    finally:
        agent.close()
        pair.close()


@pytest.mark.parametrize("agent_api", ["sync", "async"])
def test_wait_closed_async_returns_once_the_connection_ended(agent_api: str) -> None:
    agent, client, pair = _connected(agent_api)

    async def both_ended() -> bool:
        client.close()
        await asyncio.wait_for(agent.wait_closed_async(), 30)
        await asyncio.wait_for(client.async_client.wait_closed_async(), 30)
        return bool(agent.session.closed_error and client.session.closed_error)

    try:
        assert asyncio.run(both_ended()) is True
    finally:
        agent.close()
        pair.close()
