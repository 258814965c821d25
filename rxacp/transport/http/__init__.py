"""Remote ACP agents: Streamable HTTP and WebSocket on one ``/acp`` endpoint (``rxacp[http]``).

* :class:`AcpAsgiApp` — an ASGI application serving one agent per connection (built by
  ``agent_factory(transport)``) over Streamable HTTP and WebSocket at ``/acp``; runs under
  uvicorn/hypercorn, mounts into Starlette/FastAPI. Plain ASGI: no framework needed.
* :class:`HttpAcpAgentTransport` — the agent side of one such connection.
* :class:`HttpAcpClientTransport` — a client connects to an ``http://``/``https://`` agent
  (needs ``httpx`` and ``httpx-sse``, in the extra).

See ``docs/remote.md``. This package is *not* responsible for JSON-RPC or ACP semantics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxacp.transport._access import ANONYMOUS
from rxacp.transport._budget import DEFAULT_BUDGET_BYTES, ByteBudget
from rxacp.transport.http._app import DEFAULT_MAX_MESSAGE_SIZE, AcpAsgiApp, AgentFactory
from rxacp.transport.http._connection import HttpAcpAgentTransport
from rxacp.transport.http._protocol import CONNECTION_ID_HEADER, SESSION_ID_HEADER

if TYPE_CHECKING:
    from rxacp.transport.http._client import HttpAcpClientTransport

__all__ = [
    "ANONYMOUS",
    "CONNECTION_ID_HEADER",
    "DEFAULT_BUDGET_BYTES",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "SESSION_ID_HEADER",
    "AcpAsgiApp",
    "AgentFactory",
    "ByteBudget",
    "HttpAcpAgentTransport",
    "HttpAcpClientTransport",
]


def __getattr__(name: str) -> object:
    if name == "HttpAcpClientTransport":  # imports httpx: only when asked for
        try:
            from rxacp.transport.http._client import HttpAcpClientTransport
        except ImportError as exc:
            if (exc.name or "").split(".")[0] not in ("httpx", "httpx_sse"):
                raise
            raise ImportError(
                "rxacp.transport.http.HttpAcpClientTransport needs the optional 'httpx' and "
                'httpx-sse packages; install them with: pip install "rxacp[http]"'
            ) from exc
        return HttpAcpClientTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
