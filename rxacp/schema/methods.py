"""ACP method names and the one table that describes every method.

``METHODS`` maps each JSON-RPC method name to a :class:`MethodSpec`: which side handles it,
whether it is a request or a notification, its params/result models, the capability that gates
it and the Python handler name. Client, agent and session layers are table-driven from here.

Constants are named after the keys of ``meta.json`` / ``meta.unstable.json`` upper-cased
(``SESSION_PROMPT = "session/prompt"``); ``CANCEL_REQUEST`` is ``$/cancel_request``.

The rows of the table and the constants are in ``_method_table.py``, :class:`MethodSpec` in
``_method_spec.py``; this module is their public home (import them from here or from
:mod:`rxacp.schema`).

This module is NOT responsible for sending, routing or capability negotiation itself; it only
describes. Unstable methods use the models of :mod:`rxacp.schema.unstable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rxacp.schema._base import AcpModel
from rxacp.schema._method_spec import MethodKind, MethodSide, MethodSpec
from rxacp.schema._method_table import (
    ALL_METHODS,
    AUTH_STATUS,
    AUTH_STATUS_UPDATE,
    AUTHENTICATE,
    CANCEL_REQUEST,
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    FS_READ_TEXT_FILE,
    FS_WRITE_TEXT_FILE,
    INITIALIZE,
    LOGOUT,
    MCP_MESSAGE,
    PROVIDERS_DISABLE,
    PROVIDERS_LIST,
    PROVIDERS_SET,
    SESSION_ARCHIVE,
    SESSION_CANCEL,
    SESSION_CLOSE,
    SESSION_DELETE,
    SESSION_FORK,
    SESSION_LIST,
    SESSION_LOAD,
    SESSION_NEW,
    SESSION_PROMPT,
    SESSION_REQUEST_PERMISSION,
    SESSION_RESUME,
    SESSION_SET_CONFIG_OPTION,
    SESSION_SET_MODE,
    SESSION_SET_TITLE,
    SESSION_STATUS,
    SESSION_UNARCHIVE,
    SESSION_UPDATE,
    TERMINAL_CREATE,
    TERMINAL_KILL,
    TERMINAL_OUTPUT,
    TERMINAL_RELEASE,
    TERMINAL_WAIT_FOR_EXIT,
)

__all__ = [
    "AUTHENTICATE",
    "AUTH_STATUS",
    "AUTH_STATUS_UPDATE",
    "CANCEL_REQUEST",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "FS_READ_TEXT_FILE",
    "FS_WRITE_TEXT_FILE",
    "HUMAN_ANSWERED",
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

METHODS: Final[Mapping[str, MethodSpec]] = {spec.name: spec for spec in ALL_METHODS}
"""Every ACP method (stable and unstable, plus ``$/cancel_request``) by JSON-RPC name."""

HUMAN_ANSWERED: Final[frozenset[str]] = frozenset((SESSION_REQUEST_PERMISSION, ELICITATION_CREATE))
"""Agent→client requests a person answers (a permission dialog, a form): bounded by the
agent's ``human_request_timeout`` instead of its ``request_timeout`` when that is set."""


def method_spec(name: str) -> MethodSpec | None:
    """The :class:`MethodSpec` of ``name``, or ``None`` for an unknown/extension method."""
    return METHODS.get(name)


def methods_for_side(side: MethodSide, include_unstable: bool = False) -> list[MethodSpec]:
    """Methods handled by ``side`` (methods handled by ``"both"`` sides are included).

    Order follows the table (stable first).
    """
    return [
        spec
        for spec in ALL_METHODS
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
