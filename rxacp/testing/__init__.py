"""rxacp.testing: test kit for ACP clients and agents.

- :class:`InMemoryTransportPair`: a client and an agent in one process, no pipes.
- :class:`MockAcpAgent`: a scriptable fake agent, to test a client.
- :class:`MockAcpClient`: a scriptable fake client, to test an agent.
- :func:`check_transport_pair`: a conformance check for transport implementations.
- :func:`quiesce`: wait until a connection is quiet (loop and worker threads), so "nothing
  happened" assertions prove something.
- pytest fixtures ``acp_pair``, ``mock_client``, ``mock_agent`` in
  :mod:`rxacp.testing.pytest_plugin` (registered automatically when rxacp is installed).

Imports stay light: the mocks (which load the client and agent packages) are imported on first
use, and the reference agent (``python -m rxacp.testing.reference_agent``) is never imported
from here.

This package is *not* part of the runtime protocol stack; nothing in ``rxacp`` imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .conformance import check_transport_pair
from .memory import InMemoryTransport, InMemoryTransportPair
from .quiesce import quiesce

if TYPE_CHECKING:
    from .mocks import MockAcpAgent, MockAcpClient, RecordingTransport, start_agent

__all__ = [
    "InMemoryTransport",
    "InMemoryTransportPair",
    "MockAcpAgent",
    "MockAcpClient",
    "RecordingTransport",
    "check_transport_pair",
    "quiesce",
    "start_agent",
]

_LAZY = {"MockAcpAgent", "MockAcpClient", "RecordingTransport", "start_agent"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import mocks

        value = getattr(mocks, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rxacp.testing' has no attribute {name!r}")
