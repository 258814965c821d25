"""The ``--agent`` argument that ``rxacp prompt`` and ``rxacp check`` share.

``--agent`` is either an agent's command line (``"npx my-agent --acp"``, split like a shell
does), a WebSocket agent's ``ws://`` / ``wss://`` URL (which needs ``rxacp[websocket]``) or a
remote agent's ``http://`` / ``https://`` URL (Streamable HTTP, which needs ``rxacp[http]``).
:func:`parse_agent` turns it into a command list (``[url]`` for a URL) or writes why it cannot;
:func:`url_transport` is the client transport for a URL.

This module is *not* responsible for starting or connecting to the agent.
"""

from __future__ import annotations

import argparse
import shlex
from typing import IO

from ..transport import AcpTransport

__all__ = ["add_agent_argument", "is_http_url", "is_url", "parse_agent", "url_transport"]

_WS = ("ws://", "wss://")
_HTTP = ("http://", "https://")


def add_agent_argument(parser: argparse.ArgumentParser, example: str) -> None:
    """The required ``--agent "CMD ARGS"`` option (``example``: a command line for the help)."""
    parser.add_argument(
        "--agent",
        required=True,
        metavar='"CMD ARGS"',
        help=f'the agent command line, e.g. "{example}", a WebSocket agent\'s ws:// / wss:// '
        "URL (needs rxacp[websocket]) or a remote agent's http:// / https:// URL, e.g. "
        "http://127.0.0.1:8000/acp (Streamable HTTP; needs rxacp[http])",
    )


def is_url(agent: str) -> bool:
    """True when ``--agent`` names a remote agent (``ws://``, ``wss://``, ``http://``,
    ``https://``) rather than a command line."""
    return agent.strip().startswith(_WS + _HTTP)


def is_http_url(agent: str) -> bool:
    """True when ``--agent`` is an ``http://`` / ``https://`` (Streamable HTTP) URL."""
    return agent.strip().startswith(_HTTP)


def url_transport(url: str, token: str | None = None) -> AcpTransport:
    """The client transport for an agent ``url`` (ws[s]:// or http[s]://); ``token``: its
    bearer token. Raises ``ImportError`` naming the extra to install, ``ValueError`` for a
    bad URL."""
    url = url.strip()
    if is_http_url(url):
        from ..transport.http import HttpAcpClientTransport

        return HttpAcpClientTransport(url, token=token)
    from ..transport.websocket import WebSocketAcpClientTransport

    return WebSocketAcpClientTransport(url, token=token)


def parse_agent(agent: str, prog: str, err: IO[str]) -> list[str] | None:
    """The command line of ``agent`` (``[url]`` for a valid URL), or ``None`` after writing
    ``prog: <why>`` to ``err`` (unparsable, empty, another URL scheme, a bad URL or the extra
    for that URL not installed)."""
    agent = agent.strip()
    if is_url(agent):
        try:
            url_transport(agent)
        except ImportError as exc:
            err.write(f"{prog}: {exc}\n")
            return None
        except ValueError as exc:
            err.write(f"{prog}: --agent: {exc}\n")
            return None
        return [agent]
    try:
        command = shlex.split(agent)
    except ValueError as exc:
        err.write(f"{prog}: cannot parse --agent: {exc}\n")
        return None
    if not command:
        err.write(f"{prog}: --agent is empty; give the agent's command line\n")
        return None
    if "://" in command[0]:
        scheme = command[0].split("://", 1)[0]
        err.write(
            f"{prog}: --agent {command[0]!r}: only a command line (stdio), a ws:// / wss:// "
            f"or an http:// / https:// URL is supported, not {scheme}://\n"
        )
        return None
    return command
