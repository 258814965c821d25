"""The ACP method names and the rows of the method table (data only).

Re-exported by :mod:`rxacp.schema.methods`, which builds ``METHODS`` from :data:`ALL_METHODS`
and answers questions about it. Constants are named after the keys of ``meta.json`` /
``meta.unstable.json`` upper-cased (``SESSION_PROMPT = "session/prompt"``).
"""

from __future__ import annotations

from typing import Final

from rxacp.schema._method_spec import MethodSpec
from rxacp.schema._method_spec import note as _note
from rxacp.schema._method_spec import req as _req

__all__ = [
    "ALL_METHODS",
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


ALL_METHODS: Final[tuple[MethodSpec, ...]] = (
    # client -> agent
    _req(INITIALIZE, "agent", "InitializeRequest", "InitializeResponse", "initialize"),
    _req(AUTHENTICATE, "agent", "AuthenticateRequest", "AuthenticateResponse", "authenticate"),
    _req(LOGOUT, "agent", "LogoutRequest", "LogoutResponse", "logout", "auth.logout"),
    _req(SESSION_NEW, "agent", "NewSessionRequest", "NewSessionResponse", "new_session"),
    _req(
        SESSION_LOAD,
        "agent",
        "LoadSessionRequest",
        "LoadSessionResponse",
        "load_session",
        "loadSession",
    ),
    _req(
        SESSION_LIST,
        "agent",
        "ListSessionsRequest",
        "ListSessionsResponse",
        "list_sessions",
        "sessionCapabilities.list",
    ),
    _req(
        SESSION_DELETE,
        "agent",
        "DeleteSessionRequest",
        "DeleteSessionResponse",
        "delete_session",
        "sessionCapabilities.delete",
    ),
    _req(
        SESSION_RESUME,
        "agent",
        "ResumeSessionRequest",
        "ResumeSessionResponse",
        "resume_session",
        "sessionCapabilities.resume",
    ),
    _req(
        SESSION_CLOSE,
        "agent",
        "CloseSessionRequest",
        "CloseSessionResponse",
        "close_session",
        "sessionCapabilities.close",
    ),
    _req(
        SESSION_SET_MODE,
        "agent",
        "SetSessionModeRequest",
        "SetSessionModeResponse",
        "set_session_mode",
    ),
    _req(
        SESSION_SET_CONFIG_OPTION,
        "agent",
        "SetSessionConfigOptionRequest",
        "SetSessionConfigOptionResponse",
        "set_session_config_option",
    ),
    _req(SESSION_PROMPT, "agent", "PromptRequest", "PromptResponse", "prompt"),
    _note(SESSION_CANCEL, "agent", "CancelNotification", "cancel"),
    # agent -> client
    _req(
        SESSION_REQUEST_PERMISSION,
        "client",
        "RequestPermissionRequest",
        "RequestPermissionResponse",
        "request_permission",
    ),
    _note(SESSION_UPDATE, "client", "SessionNotification", "session_update"),
    _req(
        FS_READ_TEXT_FILE,
        "client",
        "ReadTextFileRequest",
        "ReadTextFileResponse",
        "read_text_file",
        "fs.readTextFile",
    ),
    _req(
        FS_WRITE_TEXT_FILE,
        "client",
        "WriteTextFileRequest",
        "WriteTextFileResponse",
        "write_text_file",
        "fs.writeTextFile",
    ),
    _req(
        TERMINAL_CREATE,
        "client",
        "CreateTerminalRequest",
        "CreateTerminalResponse",
        "create_terminal",
        "terminal",
    ),
    _req(
        TERMINAL_OUTPUT,
        "client",
        "TerminalOutputRequest",
        "TerminalOutputResponse",
        "terminal_output",
        "terminal",
    ),
    _req(
        TERMINAL_RELEASE,
        "client",
        "ReleaseTerminalRequest",
        "ReleaseTerminalResponse",
        "release_terminal",
        "terminal",
    ),
    _req(
        TERMINAL_WAIT_FOR_EXIT,
        "client",
        "WaitForTerminalExitRequest",
        "WaitForTerminalExitResponse",
        "wait_for_terminal_exit",
        "terminal",
    ),
    _req(
        TERMINAL_KILL,
        "client",
        "KillTerminalRequest",
        "KillTerminalResponse",
        "kill_terminal",
        "terminal",
    ),
    _req(
        ELICITATION_CREATE,
        "client",
        "CreateElicitationRequest",
        "CreateElicitationResponse",
        "create_elicitation",
        "elicitation",
    ),
    _note(
        ELICITATION_COMPLETE,
        "client",
        "CompleteElicitationNotification",
        "complete_elicitation",
        "elicitation.url",
    ),
    # protocol level
    _note(CANCEL_REQUEST, "both", "CancelRequestNotification", "cancel_request"),
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
"""Every method (stable first, then unstable), in the order of ``METHODS``."""
