"""A decorator agent under test whose client is played by the test (exact wire assertions).

Same client side as ``tests/agent/harness.py`` (it subclasses ``AgentHarness``); only the way
the agent is built differs: ``AcpAgentSupport`` instead of the agent builder.
"""

from __future__ import annotations

from typing import Any

from rxacp.agent.support import AcpAgentSupport
from tests.agent.harness import SESSION, AgentHarness

__all__ = ["SESSION", "SupportHarness"]


class SupportHarness(AgentHarness):
    """Builds ``instance`` with ``AcpAgentSupport`` on a scripted transport and a virtual clock."""

    def __init__(self, instance: object, **options: Any) -> None:
        """``options``: those of :class:`AgentHarness` (``grace``, ``configure`` ...)."""
        super().__init__(
            make_builder=lambda peer: AcpAgentSupport.create(instance).transport(peer), **options
        )
