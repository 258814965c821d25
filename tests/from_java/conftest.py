"""Transports for the literal ports of the Java SDK's tests: the in-memory pair (as the Java
tests use) and stdio (a real agent process)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rxacp.testing import InMemoryTransportPair
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport, AgentParameters, StdioAcpClientTransport

ROOT = Path(__file__).resolve().parents[2]


def stdio_transport(
    module: str, *args: str, stderr: Callable[[str], None] | None = None
) -> StdioAcpClientTransport:
    """A client transport spawning ``python -m module args`` from the repository root."""
    builder = AgentParameters.builder(sys.executable).arg("-m").arg(module).args(*args)
    builder.cwd(str(ROOT))
    if stderr is not None:
        builder.on_stderr_line(stderr)
    return StdioAcpClientTransport(builder.build())


@pytest.fixture(params=["memory", "stdio"])
def reference_agent_transport(request: pytest.FixtureRequest) -> Iterator[AcpTransport]:
    """A client transport to the reference agent: in memory, or over stdio (a process)."""
    if request.param == "stdio":
        yield stdio_transport("rxacp.testing.reference_agent")
        return
    pair = InMemoryTransportPair.create()
    agent = build_agent("sync", pair.agent_transport, ReferenceOptions())
    agent.start()
    yield pair.client_transport
    agent.close()
