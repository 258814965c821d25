"""pytest fixtures for testing ACP agents and clients with rxacp.

Installed rxacp registers this module as the pytest plugin ``rxacp`` (entry point
``pytest11``), so the fixtures are available in every test with no import::

    def test_echo(mock_client):
        client = mock_client(lambda t: AcpAgent.sync(t).prompt_handler(echo))
        assert client.prompt("hi").stop_reason == "end_turn"

Without the installed entry point, enable it with ``-p rxacp.testing.pytest_plugin`` (or
``pytest_plugins = ["rxacp.testing.pytest_plugin"]`` in a root ``conftest.py``) — not both.

Fixtures:

- ``acp_pair``: an :class:`~rxacp.testing.InMemoryTransportPair`; its ends are closed after
  the test.
- ``mock_client``: a factory ``mock_client(agent, **options)`` that starts ``agent`` (a factory
  ``fn(transport)``, an agent builder's product, or an ``@acp_agent`` object) and returns a
  connected :class:`~rxacp.testing.MockAcpClient`; everything is closed after the test.
- ``mock_agent``: a started :class:`~rxacp.testing.MockAcpAgent`; connect the client under test
  to ``mock_agent.client_transport``. Closed after the test.

Importing this module is cheap (only pytest): the kit is imported when a fixture is first used,
so registering the plugin costs nothing for test suites that do not use it. It defines no hooks.

This module is *not* responsible for the mocks themselves (``mocks.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rxacp.testing.memory import InMemoryTransportPair
    from rxacp.testing.mocks import MockAcpAgent, MockAcpClient

__all__ = ["acp_pair", "mock_agent", "mock_client"]


@pytest.fixture
def acp_pair() -> Iterator[InMemoryTransportPair]:
    """An in-memory client/agent transport pair, closed after the test."""
    from rxacp.testing.memory import InMemoryTransportPair

    pair = InMemoryTransportPair.create()
    yield pair
    pair.close()


@pytest.fixture
def mock_client() -> Iterator[Callable[..., MockAcpClient]]:
    """A factory: ``mock_client(agent, **options)`` → a :class:`MockAcpClient` connected to
    the started ``agent``. Every client (and agent) it made is closed after the test."""
    from rxacp.testing.mocks import MockAcpClient

    made: list[MockAcpClient] = []

    def connect(agent: Any, **options: Any) -> MockAcpClient:
        client = MockAcpClient.connect(agent, **options)
        made.append(client)
        return client

    yield connect
    for client in reversed(made):
        client.close()


@pytest.fixture
def mock_agent() -> Iterator[MockAcpAgent]:
    """A started :class:`MockAcpAgent` (connect your client to ``.client_transport``)."""
    from rxacp.testing.mocks import MockAcpAgent

    agent = MockAcpAgent()
    yield agent
    agent.close()
