"""Serve the rxacp reference agent over WebSocket: every connection gets its own agent.

Prompts select the reference agent's behaviours (``echo <text>``, ``stream <N>``, ``slow <s>``,
``stubborn <s>``, ``permission``, ``read <path>``, ``fail``...). Prints the URL to connect to,
then serves until Ctrl-C (or SIGTERM), which closes every connection and agent.

Needs the extra: ``pip install "rxacp[websocket]"``.

Run: ``python examples/websocket_agent.py [--port 8765] [--api sync|async] [--max-connections N]
[--idle-timeout SECONDS] [--cancel-grace SECONDS] [--token] [--allow-origin ORIGIN...]``,
then e.g. ``python examples/websocket_client.py ws://127.0.0.1:8765/acp`` or
``rxacp prompt --agent ws://127.0.0.1:8765/acp "stream 5"``.

Browser pages are refused (any handshake with an ``Origin`` header) unless allowed with
``--allow-origin``; ``--token`` makes up a bearer token every client must send and prints how
to connect with it.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import signal
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport
from rxacp.transport.websocket import WebSocketAcpAgentServer

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Parse the options, serve until interrupted; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free port)")
    parser.add_argument("--api", choices=("sync", "async"), default="sync")
    parser.add_argument("--max-connections", type=int, default=100)
    parser.add_argument(
        "--idle-timeout", type=float, default=3600.0, metavar="SECONDS", help="0: off"
    )
    parser.add_argument("--cancel-grace", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--token", action="store_true", help="require a random bearer token")
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web page origin allowed to connect (e.g. https://editor.example); repeatable",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    options = ReferenceOptions(cancel_grace=args.cancel_grace)
    token = secrets.token_urlsafe(24) if args.token else None

    def agent_factory(transport: AcpTransport) -> Any:
        # Called once per connection, with that connection's transport; the server starts the
        # agent and closes it when the connection ends.
        return build_agent(args.api, transport, options)

    server = WebSocketAcpAgentServer(
        agent_factory,
        host=args.host,
        port=args.port,
        max_connections=args.max_connections,
        idle_timeout=args.idle_timeout,
        allowed_origins=args.allow_origin,
        token=token,
    ).start()
    print(f"ACP reference agent listening on {server.url}", flush=True)
    if token is not None:
        print(
            f'connect with: RXACP_AGENT_TOKEN={token} rxacp prompt --agent {server.url} "hello"'
            " (or WebSocketAcpClientTransport(url, token=...))",
            flush=True,
        )

    def interrupt(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        server.serve_forever()  # closes the server on the way out
    except KeyboardInterrupt:
        print("shutting down", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
