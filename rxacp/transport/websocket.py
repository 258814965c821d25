"""WebSocket transports (the optional extra ``rxacp[websocket]``, built on ``websockets``).

* :class:`WebSocketAcpClientTransport` — a client connects to ``ws://`` / ``wss://`` agent.
* :class:`WebSocketAcpAgentServer` — an agent *service*: it accepts many connections and serves
  each one with its own agent, built by ``agent_factory(transport)`` for that connection's
  :class:`WebSocketAcpAgentTransport`; with a limit on concurrent connections, an idle timeout
  and a clean shutdown.
* :class:`WebSocketAcpAgentTransport` — the agent side of *one* connection. The server creates
  one per connection; constructed directly (``WebSocketAcpAgentTransport(host, port, path)``)
  it listens and serves exactly one client, then stops listening, like the Java SDK's
  WebSocket agent transport.

One JSON-RPC message travels as one WebSocket text frame (binary frames are accepted too).
An incoming message over ``max_message_size`` closes *that* connection with code 1009 and a
reason naming the limit; the server keeps serving others. Nothing reconnects automatically:
after a close, build a new transport and client (reconnecting is the caller's choice).

The implementation lives in private modules: ``_websocket_common`` (options, limits, close
descriptions), ``_websocket_connection`` (one connection's frames), ``_websocket_client``,
``_websocket_agent`` (one connection, agent side) and ``_websocket_server``. Import the public
names from here.

Hostile clients: a handshake carrying a browser's ``Origin`` header is refused unless
allow-listed (``allowed_origins=``), ``token=`` requires a bearer token, and silent connections
are closed (``first_message_timeout``, ``idle_timeout``); see ``docs/reliability.md``.

This module is *not* responsible for JSON-RPC, ACP semantics or reconnecting.
"""

from __future__ import annotations

try:
    from rxacp.transport._websocket_agent import AgentFactory, WebSocketAcpAgentTransport
    from rxacp.transport._websocket_client import WebSocketAcpClientTransport
    from rxacp.transport._websocket_common import (
        DEFAULT_FIRST_MESSAGE_TIMEOUT,
        DEFAULT_IDLE_TIMEOUT,
        DEFAULT_MAX_MESSAGE_SIZE,
        DEFAULT_PATH,
    )
    from rxacp.transport._websocket_server import WebSocketAcpAgentServer
except ImportError as _exc:  # pragma: no cover - exercised in a test with websockets hidden
    if (_exc.name or "").split(".")[0] != "websockets":  # a bug, not a missing extra
        raise
    raise ImportError(
        "rxacp.transport.websocket needs the optional 'websockets' package (>= 15); "
        'install it with: pip install "rxacp[websocket]"'
    ) from _exc

__all__ = [
    "DEFAULT_FIRST_MESSAGE_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_PATH",
    "AgentFactory",
    "WebSocketAcpAgentServer",
    "WebSocketAcpAgentTransport",
    "WebSocketAcpClientTransport",
]

# The classes keep presenting themselves as members of this public module (repr, docs).
for _cls in (WebSocketAcpAgentServer, WebSocketAcpAgentTransport, WebSocketAcpClientTransport):
    _cls.__module__ = __name__
del _cls
