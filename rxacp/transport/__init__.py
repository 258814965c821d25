"""Transports: move newline-framed JSON-RPC messages between an ACP client and an agent.

Exports the contract (:class:`AcpTransport`, :class:`FrameReceiver`, :class:`TransportClosed`)
the stdio implementations and :class:`WireTapTransport` (logs, records or reports every
frame of any transport). This package is *not* responsible for JSON-RPC or ACP semantics.
"""

from __future__ import annotations

from rxacp.transport.base import (
    DEFAULT_MAX_FRAME_BYTES,
    AcpTransport,
    FrameReceiver,
    TransportClosed,
)
from rxacp.transport.stdio import AgentParameters, StdioAcpAgentTransport, StdioAcpClientTransport
from rxacp.transport.tap import WireFrame, WireTapTransport

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "AcpTransport",
    "AgentParameters",
    "FrameReceiver",
    "StdioAcpAgentTransport",
    "StdioAcpClientTransport",
    "TransportClosed",
    "WireFrame",
    "WireTapTransport",
]
