"""The ACP v2 method table (data only): one :class:`~rxacp.schema.methods.MethodSpec` per method.

The same rows as :mod:`rxacp.schema.methods` for v1, from ``spec/v2/meta.json``, with the v2
models. v2 removes ``authenticate``/``logout`` (now ``auth/login``/``auth/logout``),
``session/load`` (``session/resume`` with ``replayFrom``), ``session/set_mode``, and the client's
``fs/*`` and ``terminal/*`` methods; it adds ``tool_call/cancel`` and ``terminal/cancel``.
``session/list``, ``session/resume`` and ``session/close`` are baseline (no capability) when the
agent advertises ``capabilities.session``; ``session/delete`` is gated by ``session.delete``.

Not responsible for routing (the agent and client use this table) or for the models.
"""

from __future__ import annotations

from typing import Final

from rxacp.schema._method_spec import MethodSpec
from rxacp.schema._method_spec import note as _note
from rxacp.schema._method_spec import req as _req
from rxacp.schema.methods import (
    CANCEL_REQUEST,
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    INITIALIZE,
    SESSION_CANCEL,
    SESSION_CLOSE,
    SESSION_DELETE,
    SESSION_LIST,
    SESSION_NEW,
    SESSION_PROMPT,
    SESSION_REQUEST_PERMISSION,
    SESSION_RESUME,
    SESSION_SET_CONFIG_OPTION,
    SESSION_UPDATE,
)
from rxacp.schema.v2 import _generated as s

__all__ = [
    "ALL_METHODS",
    "AUTH_LOGIN",
    "AUTH_LOGOUT",
    "METHODS",
    "TERMINAL_CANCEL",
    "TOOL_CALL_CANCEL",
]

AUTH_LOGIN: Final = "auth/login"
AUTH_LOGOUT: Final = "auth/logout"
TOOL_CALL_CANCEL: Final = "tool_call/cancel"
TERMINAL_CANCEL: Final = "terminal/cancel"

ALL_METHODS: Final[tuple[MethodSpec, ...]] = (
    # client -> agent
    _req(INITIALIZE, "agent", s.InitializeRequest, s.InitializeResponse, "initialize"),
    _req(AUTH_LOGIN, "agent", s.LoginAuthRequest, s.LoginAuthResponse, "login"),
    _req(AUTH_LOGOUT, "agent", s.LogoutAuthRequest, s.LogoutAuthResponse, "logout"),
    _req(SESSION_NEW, "agent", s.NewSessionRequest, s.NewSessionResponse, "new_session"),
    _req(SESSION_LIST, "agent", s.ListSessionsRequest, s.ListSessionsResponse, "list_sessions"),
    _req(
        SESSION_RESUME, "agent", s.ResumeSessionRequest, s.ResumeSessionResponse, "resume_session"
    ),
    _req(SESSION_CLOSE, "agent", s.CloseSessionRequest, s.CloseSessionResponse, "close_session"),
    _req(
        SESSION_DELETE,
        "agent",
        s.DeleteSessionRequest,
        s.DeleteSessionResponse,
        "delete_session",
        "session.delete",
    ),
    _req(
        SESSION_SET_CONFIG_OPTION,
        "agent",
        s.SetSessionConfigOptionRequest,
        s.SetSessionConfigOptionResponse,
        "set_session_config_option",
    ),
    _req(SESSION_PROMPT, "agent", s.PromptRequest, s.PromptResponse, "prompt"),
    _note(SESSION_CANCEL, "agent", s.CancelSessionNotification, "cancel"),
    _req(
        TOOL_CALL_CANCEL,
        "agent",
        s.CancelToolCallRequest,
        s.CancelToolCallResponse,
        "cancel_tool_call",
    ),
    _req(
        TERMINAL_CANCEL,
        "agent",
        s.CancelTerminalRequest,
        s.CancelTerminalResponse,
        "cancel_terminal",
    ),
    # agent -> client
    _req(
        SESSION_REQUEST_PERMISSION,
        "client",
        s.RequestPermissionRequest,
        s.RequestPermissionResponse,
        "request_permission",
    ),
    _note(SESSION_UPDATE, "client", s.UpdateSessionNotification, "session_update"),
    _req(
        ELICITATION_CREATE,
        "client",
        s.CreateElicitationRequest,
        s.CreateElicitationResponse,
        "create_elicitation",
        "elicitation",
    ),
    _note(
        ELICITATION_COMPLETE, "client", s.CompleteElicitationNotification, "complete_elicitation"
    ),
    # both
    _note(CANCEL_REQUEST, "both", s.CancelRequestNotification, "cancel_request"),
)

METHODS: Final[dict[str, MethodSpec]] = {spec.name: spec for spec in ALL_METHODS}
"""Method name -> :class:`MethodSpec` of every stable ACP v2 method."""
