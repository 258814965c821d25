"""Run in a subprocess by ``plugin_run`` (not collected by our suite: no ``test_`` prefix).

The first test uses every fixture and keeps what it got; the second checks it was closed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rxacp.agent import AcpAgent
from rxacp.schema import NewSessionResponse, PromptResponse
from rxacp.session import AcpSession
from rxacp.testing import InMemoryTransportPair, MockAcpAgent, MockAcpClient

kept: dict[str, Any] = {}


def _agent(transport: Any) -> Any:
    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda r: NewSessionResponse(session_id="s"))
        .prompt_handler(lambda r, c: PromptResponse.end_turn())
    )


def test_uses_every_fixture(
    acp_pair: InMemoryTransportPair,
    mock_client: Callable[..., MockAcpClient],
    mock_agent: MockAcpAgent,
) -> None:
    kept["session"] = AcpSession(acp_pair.agent_transport, role="agent")
    kept["session"].start()
    kept["client"] = mock_client(_agent)
    kept["client"].prompt("x")
    kept["mock_agent"] = mock_agent


def test_everything_was_closed_after_the_first_test() -> None:
    assert kept["session"].wait_closed(5), "the acp_pair end was not closed"
    kept["session"].close()
    assert not kept["client"].client.session.is_open
    assert not kept["client"].agent.session.is_open
    assert not kept["mock_agent"].agent.session.is_open
