"""Start an agent under test on a transport, whatever form the test gives it in.

Accepted: a factory ``fn(transport)`` returning an agent builder (``AcpAgent.sync(t)...``), a
running or built agent, or a decorator-agent builder; an ``@acp_agent`` object or class; an
``AcpAgentSupportBuilder`` without a transport.

This module is *not* responsible for talking to the agent (``_mock_client.py``).
"""

from __future__ import annotations

from typing import Any, Protocol

from rxacp.transport.base import AcpTransport

__all__ = ["StartedAgent", "start_agent"]

_AGENT_ATTR = "__acp_agent_info__"  # set by rxacp.agent.support.acp_agent


class StartedAgent(Protocol):
    """What :func:`start_agent` returns: something running that can be closed."""

    def close(self) -> None:
        """Stop the agent."""


def _is_decorated(target: Any) -> bool:
    cls = target if isinstance(target, type) else type(target)
    return getattr(cls, _AGENT_ATTR, None) is not None


def start_agent(target: Any, transport: AcpTransport) -> Any:
    """Build (if needed) and start ``target`` on ``transport``; return the running agent.

    Raises ``TypeError`` naming what was given when it is none of the accepted forms.
    """
    from rxacp.agent import AcpAgentBuilder, AcpAsyncAgent, AcpSyncAgent
    from rxacp.agent.support import AcpAgentSupport, AcpAgentSupportBuilder

    if _is_decorated(target):
        return AcpAgentSupport.create(target).transport(transport).start()
    if isinstance(target, AcpAgentSupportBuilder):
        return target.transport(transport).start()
    if not callable(target) or isinstance(target, AcpAgentBuilder):
        raise TypeError(
            "give the agent as a factory taking the transport, e.g. "
            "lambda t: AcpAgent.sync(t).prompt_handler(...), or an @acp_agent object; "
            f"got {type(target).__name__}"
        )
    made = target(transport)
    if isinstance(made, AcpAgentSupportBuilder):
        return made.start()
    if isinstance(made, AcpAgentBuilder):
        made = made.build()
    if isinstance(made, AcpAsyncAgent | AcpSyncAgent):
        made.start()
        return made
    start, close = getattr(made, "start", None), getattr(made, "close", None)
    if callable(start) and callable(close):
        start()
        return made
    raise TypeError(
        "the agent factory must return an agent builder, an agent or a decorator-agent builder "
        f"(something with start() and close()); it returned {type(made).__name__}"
    )
