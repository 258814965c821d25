"""The ``--agent`` argument that ``rxacp prompt`` and ``rxacp check`` share.

``--agent`` is either an agent's command line (``"npx my-agent --acp"``, split like a shell
does) or a WebSocket agent's ``ws://`` / ``wss://`` URL (which needs ``rxacp[websocket]``).
:func:`parse_agent` turns it into a command list (``[url]`` for a URL) or writes why it cannot.

This module is *not* responsible for starting or connecting to the agent.
"""

from __future__ import annotations

import argparse
import shlex
from typing import IO

__all__ = ["add_agent_argument", "is_url", "parse_agent"]


def add_agent_argument(parser: argparse.ArgumentParser, example: str) -> None:
    """The required ``--agent "CMD ARGS"`` option (``example``: a command line for the help)."""
    parser.add_argument(
        "--agent",
        required=True,
        metavar='"CMD ARGS"',
        help=f'the agent command line, e.g. "{example}", or a WebSocket agent\'s ws:// / wss:// '
        "URL (needs rxacp[websocket])",
    )


def is_url(agent: str) -> bool:
    """True when ``--agent`` names a WebSocket agent (``ws://`` / ``wss://``)."""
    return agent.strip().startswith(("ws://", "wss://"))


def parse_agent(agent: str, prog: str, err: IO[str]) -> list[str] | None:
    """The command line of ``agent`` (``[url]`` for a valid ws:// URL), or ``None`` after
    writing ``prog: <why>`` to ``err`` (unparsable, empty, another URL scheme, a bad URL or
    no WebSocket support installed)."""
    agent = agent.strip()
    if is_url(agent):
        try:
            from ..transport.websocket import WebSocketAcpClientTransport
        except ImportError as exc:
            err.write(f"{prog}: {exc}\n")
            return None
        try:
            WebSocketAcpClientTransport(agent)
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
            f"{prog}: --agent {command[0]!r}: only a command line (stdio) or a ws:// / wss:// "
            f"URL is supported, not {scheme}://\n"
        )
        return None
    return command
