"""The reference agent written with decorators (``rxacp.agent.support``): ``--api decorators``.

Same sessions and same behaviour scripts as the builder versions; only the wiring differs.
Importing this module fails with ``ImportError`` when ``rxacp.agent.support`` is unavailable.

This module is *not* responsible for the behaviours (``_reference_script.py``) or the sessions
(``reference_agent.py``).
"""

from __future__ import annotations

from typing import Any

from .. import schema
from ..agent import AcpAsyncAgent, SyncPromptContext
from ..agent.support import (
    AcpAgentSupport,
    acp_agent,
    close_session,
    list_sessions,
    load_session,
    new_session,
    prompt,
    set_session_mode,
)
from ..transport import AcpTransport
from ._reference_run import run_blocking
from .reference_agent import AGENT_NAME, ReferenceOptions, ReferenceSessions, package_version

__all__ = ["ReferenceDecoratedAgent", "build_decorated"]


@acp_agent(name=AGENT_NAME, version=package_version(), title="rxacp reference agent")
class ReferenceDecoratedAgent:
    """The reference agent's handlers as decorated methods."""

    def __init__(self, sessions: ReferenceSessions) -> None:
        self.sessions = sessions
        self.agent: AcpAsyncAgent | None = None

    def _send(self, note: schema.SessionNotification) -> None:
        assert self.agent is not None
        self.agent.send_session_update(note)

    @new_session
    def new_session(self, request: schema.NewSessionRequest) -> schema.NewSessionResponse:
        """``session/new``."""
        return self.sessions.new_session(request)

    @load_session
    def load_session(self, request: schema.LoadSessionRequest) -> schema.LoadSessionResponse:
        """``session/load`` (replays the history)."""
        return self.sessions.load_session(request, self._send)

    @list_sessions
    def list_sessions(self, request: schema.ListSessionsRequest) -> schema.ListSessionsResponse:
        """``session/list``."""
        return self.sessions.list_sessions(request)

    @close_session
    def close_session(self, request: schema.CloseSessionRequest) -> None:
        """``session/close``."""
        self.sessions.close_session(request)

    @set_session_mode
    def set_mode(self, request: schema.SetSessionModeRequest) -> None:
        """``session/set_mode``."""
        self.sessions.set_mode(request)

    @prompt
    def prompt(
        self, request: schema.PromptRequest, ctx: SyncPromptContext
    ) -> schema.PromptResponse | None:
        """``session/prompt``: the behaviour script selected by the text."""
        return run_blocking(self.sessions.script(request), ctx)


def build_decorated(
    transport: AcpTransport, options: ReferenceOptions, sessions: ReferenceSessions
) -> Any:
    """Build (not start) the decorator version of the reference agent."""
    instance = ReferenceDecoratedAgent(sessions)
    builder = AcpAgentSupport.create(instance).transport(transport)
    options.apply(builder)
    agent = builder.build()
    instance.agent = agent
    return agent
