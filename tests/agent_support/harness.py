"""A decorator agent under test whose client is played by the test (exact wire assertions).

Same client side as ``tests/agent/harness.py`` (it subclasses ``AgentHarness``); only the way
the agent is built differs: ``AcpAgentSupport`` instead of the agent builder.
"""

from __future__ import annotations

from typing import Any

from reactivex.testing import TestScheduler

from rxacp.agent.support import AcpAgentSupport, AcpAgentSupportBuilder
from tests.agent.harness import SESSION, AgentHarness
from tests.session.conftest import ScriptedTransport

__all__ = ["SESSION", "SupportHarness"]


class SupportHarness(AgentHarness):
    """Builds ``instance`` with ``AcpAgentSupport`` on a scripted transport and a virtual clock."""

    def __init__(
        self,
        instance: object,
        *,
        grace: float | None = 60.0,
        max_duration: float | None = None,
        configure: Any = None,
        client_capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.peer = ScriptedTransport()
        self.clock = TestScheduler()
        builder: AcpAgentSupportBuilder = AcpAgentSupport.create(instance).transport(self.peer)
        self._start(builder, grace, max_duration, configure, client_capabilities)
