"""rxacp.client: ACP clients for editors and tools.

``AcpClient.async_(transport)`` builds an :class:`AcpAsyncClient` (cold, awaitable Observables);
``AcpClient.sync(transport)`` an :class:`AcpSyncClient` (blocking). :class:`CancellationSignal`
is the stop button of a prompt turn; :class:`WorkspaceFileSystem` serves ``fs/*`` requests
confined to workspace roots and :class:`LocalTerminals` serves ``terminal/*`` requests by running
commands locally.

This package is *not* responsible for the JSON-RPC engine (``rxacp.session``), transports or the
agent side (``rxacp.agent``).
"""

from __future__ import annotations

from .async_client import (
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpAsyncClient,
    RequestLike,
)
from .builder import (
    AcpAsyncClientBuilder,
    AcpClient,
    AcpClientBuilder,
    AcpSyncClientBuilder,
    AsyncHandler,
    SyncHandler,
)
from .cancellation import CancellationSignal, RequestCancellation
from .fs import WorkspaceFileSystem
from .read_model import Compaction, Message, SessionState, Thought, ToolCallState
from .session_states import fold_session_state
from .sync_client import AcpSyncClient
from .terminals import LocalTerminals

__all__ = [
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AcpAsyncClient",
    "AcpAsyncClientBuilder",
    "AcpClient",
    "AcpClientBuilder",
    "AcpSyncClient",
    "AcpSyncClientBuilder",
    "AsyncHandler",
    "CancellationSignal",
    "Compaction",
    "LocalTerminals",
    "Message",
    "RequestCancellation",
    "RequestLike",
    "SessionState",
    "SyncHandler",
    "Thought",
    "ToolCallState",
    "WorkspaceFileSystem",
    "fold_session_state",
]
