"""The ACP v2 method table (data only): one :class:`~rxacp.schema.methods.MethodSpec` per method.

The rows v2 shares with v1 are derived from v1's table
(:func:`~rxacp.schema._method_spec.in_version`: the same method with the v2 models of the same
names), from ``spec/v2/meta.json``. v2 removes ``authenticate``/``logout`` (now
``auth/login``/``auth/logout``), ``session/load`` (``session/resume`` with ``replayFrom``),
``session/set_mode``, and the client's ``fs/*`` and ``terminal/*`` methods; it adds
``tool_call/cancel`` and ``terminal/cancel``. ``session/list``, ``session/resume`` and
``session/close`` are baseline (no capability) when the agent advertises
``capabilities.session``; ``session/delete`` is gated by ``session.delete``.

Not responsible for routing (the agent and client use this table) or for the models.
"""

from __future__ import annotations

from typing import Any, Final

from rxacp.schema._method_spec import MethodSpec, in_version
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
from rxacp.schema.methods import METHODS as V1_METHODS
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


def _v1(name: str, **changes: Any) -> MethodSpec:
    """v1's row of ``name`` with the v2 models of the same names (and ``changes``)."""
    return in_version(V1_METHODS[name], s, **changes)


ALL_METHODS: Final[tuple[MethodSpec, ...]] = (
    # client -> agent
    _v1(INITIALIZE),
    _req(AUTH_LOGIN, "agent", s.LoginAuthRequest, s.LoginAuthResponse, "login"),
    _req(AUTH_LOGOUT, "agent", s.LogoutAuthRequest, s.LogoutAuthResponse, "logout"),
    _v1(SESSION_NEW),
    _v1(SESSION_LIST, capability=None),  # baseline with ``capabilities.session``
    _v1(SESSION_RESUME, capability=None),
    _v1(SESSION_CLOSE, capability=None),
    _v1(SESSION_DELETE, capability="session.delete"),
    _v1(SESSION_SET_CONFIG_OPTION),
    _v1(SESSION_PROMPT),
    _v1(SESSION_CANCEL, _params=s.CancelSessionNotification),
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
    _v1(SESSION_REQUEST_PERMISSION),
    _v1(SESSION_UPDATE, _params=s.UpdateSessionNotification),
    _v1(ELICITATION_CREATE),
    _v1(ELICITATION_COMPLETE, capability=None),
    # both
    _v1(CANCEL_REQUEST),
)

METHODS: Final[dict[str, MethodSpec]] = {spec.name: spec for spec in ALL_METHODS}
"""Method name -> :class:`MethodSpec` of every stable ACP v2 method."""
