"""The agent side: builders, running agents, prompt contexts and the prompt-turn policy.

Not responsible for JSON-RPC mechanics (``rxacp.session``) nor for the client side.
"""

from __future__ import annotations

from ..roles.signal import CancelReason
from .agent import AcpAsyncAgent, AcpSyncAgent
from .builder import AcpAgent, AcpAgentBuilder, AsyncAgentBuilder, SyncAgentBuilder
from .context import CommandResult, PromptContext, SyncPromptContext
from .timeouts import PromptTimeouts

__all__ = [
    "AcpAgent",
    "AcpAgentBuilder",
    "AcpAsyncAgent",
    "AcpSyncAgent",
    "AsyncAgentBuilder",
    "CancelReason",
    "CommandResult",
    "PromptContext",
    "PromptTimeouts",
    "SyncAgentBuilder",
    "SyncPromptContext",
]
