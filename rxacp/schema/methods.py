"""ACP method names and the one table that describes every method.

``METHODS`` maps each JSON-RPC method name to a :class:`MethodSpec`: which side handles it,
whether it is a request or a notification, its params/result models, the capability that gates
it and the Python handler name. Client, agent and session layers are table-driven from here.

Constants are named after the keys of ``meta.json`` / ``meta.unstable.json`` upper-cased
(``SESSION_PROMPT = "session/prompt"``); ``CANCEL_REQUEST`` is ``$/cancel_request``.

This module is NOT responsible for sending, routing or capability negotiation itself; it only
describes. Unstable methods use the models of :mod:`rxacp.schema.unstable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from rxacp.schema import _generated as s
from rxacp.schema._base import AcpModel

__all__ = [
    "AUTHENTICATE",
    "AUTH_STATUS",
    "AUTH_STATUS_UPDATE",
    "CANCEL_REQUEST",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "FS_READ_TEXT_FILE",
    "FS_WRITE_TEXT_FILE",
    "INITIALIZE",
    "LOGOUT",
    "MCP_MESSAGE",
    "METHODS",
    "PROVIDERS_DISABLE",
    "PROVIDERS_LIST",
    "PROVIDERS_SET",
    "SESSION_ARCHIVE",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_FORK",
    "SESSION_LIST",
    "SESSION_LOAD",
    "SESSION_NEW",
    "SESSION_PROMPT",
    "SESSION_REQUEST_PERMISSION",
    "SESSION_RESUME",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_SET_MODE",
    "SESSION_SET_TITLE",
    "SESSION_STATUS",
    "SESSION_UNARCHIVE",
    "SESSION_UPDATE",
    "TERMINAL_CREATE",
    "TERMINAL_KILL",
    "TERMINAL_OUTPUT",
    "TERMINAL_RELEASE",
    "TERMINAL_WAIT_FOR_EXIT",
    "MethodKind",
    "MethodSide",
    "MethodSpec",
    "is_capability_enabled",
    "method_spec",
    "methods_for_side",
]

# --- client -> agent (handled by the agent) -------------------------------------------------
INITIALIZE: Final = "initialize"
AUTHENTICATE: Final = "authenticate"
LOGOUT: Final = "logout"
SESSION_NEW: Final = "session/new"
SESSION_LOAD: Final = "session/load"
SESSION_LIST: Final = "session/list"
SESSION_DELETE: Final = "session/delete"
SESSION_RESUME: Final = "session/resume"
SESSION_CLOSE: Final = "session/close"
SESSION_SET_MODE: Final = "session/set_mode"
SESSION_SET_CONFIG_OPTION: Final = "session/set_config_option"
SESSION_PROMPT: Final = "session/prompt"
SESSION_CANCEL: Final = "session/cancel"
# unstable
SESSION_FORK: Final = "session/fork"
SESSION_ARCHIVE: Final = "session/archive"
SESSION_UNARCHIVE: Final = "session/unarchive"
SESSION_STATUS: Final = "session/status"
SESSION_SET_TITLE: Final = "session/set_title"
PROVIDERS_LIST: Final = "providers/list"
PROVIDERS_SET: Final = "providers/set"
PROVIDERS_DISABLE: Final = "providers/disable"
AUTH_STATUS: Final = "auth/status"

# --- agent -> client (handled by the client) ------------------------------------------------
SESSION_REQUEST_PERMISSION: Final = "session/request_permission"
SESSION_UPDATE: Final = "session/update"
FS_READ_TEXT_FILE: Final = "fs/read_text_file"
FS_WRITE_TEXT_FILE: Final = "fs/write_text_file"
TERMINAL_CREATE: Final = "terminal/create"
TERMINAL_OUTPUT: Final = "terminal/output"
TERMINAL_RELEASE: Final = "terminal/release"
TERMINAL_WAIT_FOR_EXIT: Final = "terminal/wait_for_exit"
TERMINAL_KILL: Final = "terminal/kill"
ELICITATION_CREATE: Final = "elicitation/create"
ELICITATION_COMPLETE: Final = "elicitation/complete"
# unstable
AUTH_STATUS_UPDATE: Final = "auth/status_update"

# --- both directions --------------------------------------------------------------------------
MCP_MESSAGE: Final = "mcp/message"
"""Unstable; sent in both directions, as a request or (``notification_type``) a notification."""
CANCEL_REQUEST: Final = "$/cancel_request"
"""Protocol-level: cancel an outstanding request (either side)."""

MethodSide = Literal["agent", "client", "both"]
"""The side that HANDLES a method; ``"both"`` for ``$/cancel_request`` and ``mcp/message``."""
MethodKind = Literal["request", "notification"]

_ModelRef = type[AcpModel] | str | None
"""A model class, or the name of an unstable model (resolved on first use)."""


def _resolve(ref: _ModelRef) -> Any:
    if ref is None or not isinstance(ref, str):
        return ref
    from rxacp.schema import unstable  # unstable models load only when used

    return getattr(unstable, ref)


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """Everything the SDK needs to know about one ACP method.

    Attributes:
        name: the JSON-RPC method name.
        side: the side that handles it (``"agent"``, ``"client"`` or ``"both"``).
        kind: ``"request"`` (expects a result) or ``"notification"``.
        params_type: model of ``params``.
        result_type: model of ``result``; ``None`` for notifications and for a result that may
            be any JSON value (``mcp/message``, whose ``MessageMcpResponse`` is ``Any``).
        capability: dotted wire path into the handling side's capabilities that must be
            present and truthy (``"loadSession"``, ``"sessionCapabilities.list"``,
            ``"fs.readTextFile"``, ``"terminal"``...); ``None`` if the method is ungated.
        python_name: snake_case handler/call name (``"new_session"``, ``"prompt"``...).
        unstable: the method exists only in the unstable schema.
        notification_type: for a method that may also be sent as a notification
            (``mcp/message``), the params model of that form.

    The models of unstable methods live in :mod:`rxacp.schema.unstable`, which is imported the
    first time one of their ``*_type`` attributes is read (not when the table is built).
    """

    name: str
    side: MethodSide
    kind: MethodKind
    _params: _ModelRef
    _result: _ModelRef
    capability: str | None
    python_name: str
    unstable: bool
    _notification: _ModelRef = None

    @property
    def params_type(self) -> type[AcpModel]:
        """Model of ``params``."""
        model: type[AcpModel] = _resolve(self._params)
        return model

    @property
    def result_type(self) -> type[AcpModel] | None:
        """Model of ``result`` (``None``: a notification, or any JSON value)."""
        model: type[AcpModel] | None = _resolve(self._result)
        return model

    @property
    def notification_type(self) -> type[AcpModel] | None:
        """Params model of the notification form of a method that also has one."""
        model: type[AcpModel] | None = _resolve(self._notification)
        return model


def _req(
    name: str,
    side: MethodSide,
    params: _ModelRef,
    result: _ModelRef,
    python_name: str,
    capability: str | None = None,
    *,
    unstable: bool = False,
    notification_type: _ModelRef = None,
) -> MethodSpec:
    return MethodSpec(
        name, side, "request", params, result, capability, python_name, unstable, notification_type
    )


def _note(
    name: str,
    side: MethodSide,
    params: _ModelRef,
    python_name: str,
    capability: str | None = None,
    *,
    unstable: bool = False,
) -> MethodSpec:
    return MethodSpec(name, side, "notification", params, None, capability, python_name, unstable)


_ALL: tuple[MethodSpec, ...] = (
    # client -> agent
    _req(INITIALIZE, "agent", s.InitializeRequest, s.InitializeResponse, "initialize"),
    _req(AUTHENTICATE, "agent", s.AuthenticateRequest, s.AuthenticateResponse, "authenticate"),
    _req(LOGOUT, "agent", s.LogoutRequest, s.LogoutResponse, "logout", "auth.logout"),
    _req(SESSION_NEW, "agent", s.NewSessionRequest, s.NewSessionResponse, "new_session"),
    _req(
        SESSION_LOAD,
        "agent",
        s.LoadSessionRequest,
        s.LoadSessionResponse,
        "load_session",
        "loadSession",
    ),
    _req(
        SESSION_LIST,
        "agent",
        s.ListSessionsRequest,
        s.ListSessionsResponse,
        "list_sessions",
        "sessionCapabilities.list",
    ),
    _req(
        SESSION_DELETE,
        "agent",
        s.DeleteSessionRequest,
        s.DeleteSessionResponse,
        "delete_session",
        "sessionCapabilities.delete",
    ),
    _req(
        SESSION_RESUME,
        "agent",
        s.ResumeSessionRequest,
        s.ResumeSessionResponse,
        "resume_session",
        "sessionCapabilities.resume",
    ),
    _req(
        SESSION_CLOSE,
        "agent",
        s.CloseSessionRequest,
        s.CloseSessionResponse,
        "close_session",
        "sessionCapabilities.close",
    ),
    _req(
        SESSION_SET_MODE,
        "agent",
        s.SetSessionModeRequest,
        s.SetSessionModeResponse,
        "set_session_mode",
    ),
    _req(
        SESSION_SET_CONFIG_OPTION,
        "agent",
        s.SetSessionConfigOptionRequest,
        s.SetSessionConfigOptionResponse,
        "set_session_config_option",
    ),
    _req(SESSION_PROMPT, "agent", s.PromptRequest, s.PromptResponse, "prompt"),
    _note(SESSION_CANCEL, "agent", s.CancelNotification, "cancel"),
    # agent -> client
    _req(
        SESSION_REQUEST_PERMISSION,
        "client",
        s.RequestPermissionRequest,
        s.RequestPermissionResponse,
        "request_permission",
    ),
    _note(SESSION_UPDATE, "client", s.SessionNotification, "session_update"),
    _req(
        FS_READ_TEXT_FILE,
        "client",
        s.ReadTextFileRequest,
        s.ReadTextFileResponse,
        "read_text_file",
        "fs.readTextFile",
    ),
    _req(
        FS_WRITE_TEXT_FILE,
        "client",
        s.WriteTextFileRequest,
        s.WriteTextFileResponse,
        "write_text_file",
        "fs.writeTextFile",
    ),
    _req(
        TERMINAL_CREATE,
        "client",
        s.CreateTerminalRequest,
        s.CreateTerminalResponse,
        "create_terminal",
        "terminal",
    ),
    _req(
        TERMINAL_OUTPUT,
        "client",
        s.TerminalOutputRequest,
        s.TerminalOutputResponse,
        "terminal_output",
        "terminal",
    ),
    _req(
        TERMINAL_RELEASE,
        "client",
        s.ReleaseTerminalRequest,
        s.ReleaseTerminalResponse,
        "release_terminal",
        "terminal",
    ),
    _req(
        TERMINAL_WAIT_FOR_EXIT,
        "client",
        s.WaitForTerminalExitRequest,
        s.WaitForTerminalExitResponse,
        "wait_for_terminal_exit",
        "terminal",
    ),
    _req(
        TERMINAL_KILL,
        "client",
        s.KillTerminalRequest,
        s.KillTerminalResponse,
        "kill_terminal",
        "terminal",
    ),
    _req(
        ELICITATION_CREATE,
        "client",
        s.CreateElicitationRequest,
        s.CreateElicitationResponse,
        "create_elicitation",
        "elicitation",
    ),
    _note(
        ELICITATION_COMPLETE,
        "client",
        s.CompleteElicitationNotification,
        "complete_elicitation",
        "elicitation.url",
    ),
    # protocol level
    _note(CANCEL_REQUEST, "both", s.CancelRequestNotification, "cancel_request"),
    # unstable: client -> agent (models named, resolved on first use)
    _req(
        SESSION_FORK,
        "agent",
        "ForkSessionRequest",
        "ForkSessionResponse",
        "fork_session",
        "sessionCapabilities.fork",
        unstable=True,
    ),
    _req(
        SESSION_ARCHIVE,
        "agent",
        "ArchiveSessionRequest",
        "ArchiveSessionResponse",
        "archive_session",
        "sessionCapabilities.archive",
        unstable=True,
    ),
    _req(
        SESSION_UNARCHIVE,
        "agent",
        "UnarchiveSessionRequest",
        "UnarchiveSessionResponse",
        "unarchive_session",
        "sessionCapabilities.archive",
        unstable=True,
    ),
    _req(
        SESSION_STATUS,
        "agent",
        "SessionStatusRequest",
        "SessionStatusResponse",
        "session_status",
        "sessionCapabilities.status",
        unstable=True,
    ),
    _req(
        SESSION_SET_TITLE,
        "agent",
        "SetSessionTitleRequest",
        "SetSessionTitleResponse",
        "set_session_title",
        "sessionCapabilities.title",
        unstable=True,
    ),
    _req(
        PROVIDERS_LIST,
        "agent",
        "ListProvidersRequest",
        "ListProvidersResponse",
        "list_providers",
        "providers",
        unstable=True,
    ),
    _req(
        PROVIDERS_SET,
        "agent",
        "SetProviderRequest",
        "SetProviderResponse",
        "set_provider",
        "providers",
        unstable=True,
    ),
    _req(
        PROVIDERS_DISABLE,
        "agent",
        "DisableProviderRequest",
        "DisableProviderResponse",
        "disable_provider",
        "providers",
        unstable=True,
    ),
    _req(
        AUTH_STATUS,
        "agent",
        "AuthStatusRequest",
        "AuthStatusResponse",
        "auth_status",
        "auth.status",
        unstable=True,
    ),
    # unstable: agent -> client (sent by agents that advertise ``auth.status``)
    _note(
        AUTH_STATUS_UPDATE,
        "client",
        "AuthStatusUpdateNotification",
        "auth_status_update",
        unstable=True,
    ),
    # unstable: both directions
    _req(
        MCP_MESSAGE,
        "both",
        "MessageMcpRequest",
        None,  # MessageMcpResponse: any JSON value
        "message_mcp",
        unstable=True,
        notification_type="MessageMcpNotification",
    ),
)

METHODS: Final[Mapping[str, MethodSpec]] = {spec.name: spec for spec in _ALL}
"""Every ACP method (stable and unstable, plus ``$/cancel_request``) by JSON-RPC name."""


def method_spec(name: str) -> MethodSpec | None:
    """The :class:`MethodSpec` of ``name``, or ``None`` for an unknown/extension method."""
    return METHODS.get(name)


def methods_for_side(side: MethodSide, include_unstable: bool = False) -> list[MethodSpec]:
    """Methods handled by ``side`` (methods handled by ``"both"`` sides are included).

    Order follows the table (stable first).
    """
    return [
        spec
        for spec in _ALL
        if (spec.side == side or spec.side == "both" or side == "both")
        and (include_unstable or not spec.unstable)
    ]


def is_capability_enabled(capabilities: Any, path: str | None) -> bool:
    """Whether the dotted wire ``path`` is present and truthy in ``capabilities``.

    ``capabilities`` is a capabilities model (``AgentCapabilities``/``ClientCapabilities``) or
    its wire dict. A present capability *object* counts as enabled even when empty (``{}``), as
    the protocol says; ``None``, ``False`` and absent values do not. ``path=None`` is always
    enabled.
    """
    if path is None:
        return True
    node: Any = capabilities
    for part in path.split("."):
        if node is None:
            return False
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, AcpModel):
            node = _model_get(node, part)
        else:
            return False
    if node is None or node is False:
        return False
    return isinstance(node, AcpModel | Mapping) or bool(node)


def _model_get(model: AcpModel, wire_name: str) -> Any:
    for py_name, info in type(model).model_fields.items():
        if (info.alias or py_name) == wire_name or py_name == wire_name:
            return getattr(model, py_name)
    extra = model.model_extra or {}
    return extra.get(wire_name)
