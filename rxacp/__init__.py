"""rxacp: the ReactiveX SDK for the Agent Client Protocol (ACP).

Build ACP clients (editors, tools) and agents in Python with Rx: requests are cold
``reactivex`` Observables whose disposal sends ``$/cancel_request``; prompt handlers notice
cancellation with ``is_cancelled()`` / ``on_cancel()`` / ``when_cancelled()``; every prompt gets
exactly one answer. Blocking (sync) APIs are thin shells over the Rx core.

Layers (each knows only the ones below it): ``rxacp.schema`` (models) → ``rxacp.jsonrpc`` /
``rxacp.errors`` → ``rxacp.transport`` → ``rxacp.session`` (the engine) → ``rxacp.client`` /
``rxacp.agent`` → ``rxacp.agent.support`` (decorators), ``rxacp.testing``.

The most used names are re-exported here, imported on first use (so ``import rxacp.schema``
or the pytest plugin stays cheap); models live in :mod:`rxacp.schema`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent import (
        AcpAgent,
        AcpAsyncAgent,
        AcpSyncAgent,
        CommandResult,
        PromptContext,
        SyncPromptContext,
    )
    from .capabilities import NegotiatedCapabilities
    from .client import AcpAsyncClient, AcpClient, AcpSyncClient, CancellationSignal
    from .errors import (
        AcpCapabilityException,
        AcpConnectionException,
        AcpErrorCodes,
        AcpException,
        AcpProtocolException,
        AcpProtocolVersionException,
        AcpRemoteException,
        AcpTimeoutException,
    )
    from .transport import (
        AcpTransport,
        AgentParameters,
        StdioAcpAgentTransport,
        StdioAcpClientTransport,
    )

if TYPE_CHECKING:
    __version__: str


def _version() -> str:
    # importlib.metadata costs ~15 ms of import time: read on first use (cold start).
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rxacp")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"


_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "AcpAgent",
            "AcpAsyncAgent",
            "AcpSyncAgent",
            "CommandResult",
            "PromptContext",
            "SyncPromptContext",
        ),
        ".agent",
    ),
    "NegotiatedCapabilities": ".capabilities",
    **dict.fromkeys(
        ("AcpAsyncClient", "AcpClient", "AcpSyncClient", "CancellationSignal"), ".client"
    ),
    **dict.fromkeys(
        (
            "AcpCapabilityException",
            "AcpConnectionException",
            "AcpErrorCodes",
            "AcpException",
            "AcpProtocolException",
            "AcpProtocolVersionException",
            "AcpRemoteException",
            "AcpTimeoutException",
        ),
        ".errors",
    ),
    **dict.fromkeys(
        ("AcpTransport", "AgentParameters", "StdioAcpAgentTransport", "StdioAcpClientTransport"),
        ".transport",
    ),
}

__all__ = [
    "AcpAgent",
    "AcpAsyncAgent",
    "AcpAsyncClient",
    "AcpCapabilityException",
    "AcpClient",
    "AcpConnectionException",
    "AcpErrorCodes",
    "AcpException",
    "AcpProtocolException",
    "AcpProtocolVersionException",
    "AcpRemoteException",
    "AcpSyncAgent",
    "AcpSyncClient",
    "AcpTimeoutException",
    "AcpTransport",
    "AgentParameters",
    "CancellationSignal",
    "CommandResult",
    "NegotiatedCapabilities",
    "PromptContext",
    "StdioAcpAgentTransport",
    "StdioAcpClientTransport",
    "SyncPromptContext",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rxacp' has no attribute {name!r}")
    # The import statement's machinery (not importlib.import_module), so that ``-X importtime``
    # reports the submodule on its own line.
    __import__(__name__ + module)
    value = getattr(sys.modules[__name__ + module], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
