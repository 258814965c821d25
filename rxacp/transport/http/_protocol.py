"""The remote transport's wire vocabulary: header names, media types, routing keys.

Header names and MIME types of the Streamable HTTP profile (``Acp-Connection-Id``,
``Acp-Session-Id``), the methods whose POST must name its session, and small pure helpers that
read the routing keys of a JSON-RPC message (its id as a key, its ``params.sessionId``).

This module is *not* responsible for moving messages (``_connection``, ``_app``, ``_client``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ATTACH_METHODS",
    "CONNECTION_ID_HEADER",
    "JSON_MIME",
    "MAX_SESSION_STREAMS",
    "SESSION_HEADER_METHODS",
    "SESSION_ID_HEADER",
    "SSE_MIME",
    "id_key",
    "params_session_id",
]

CONNECTION_ID_HEADER = "Acp-Connection-Id"
SESSION_ID_HEADER = "Acp-Session-Id"
JSON_MIME = "application/json"
SSE_MIME = "text/event-stream"

SESSION_HEADER_METHODS = frozenset(
    {
        "session/prompt",
        "session/cancel",
        "session/set_mode",
        "session/set_config_option",
        "session/set_model",
        "session/close",
    }
)
"""Methods whose POST must carry ``Acp-Session-Id`` (the methods both official SDKs treat as
session-scoped; ``session/load``/``resume`` may carry it, since the TypeScript client sends it
and the Python one does not)."""

ATTACH_METHODS = frozenset({"session/load", "session/resume"})

MAX_SESSION_STREAMS = 256
"""Session streams one connection may have (a GET for another session: ``429``)."""
"""Methods that attach an existing session to the connection (their replay and answer stay in
order on one stream, see ``_connection``)."""


def id_key(value: Any) -> str | None:
    """A JSON-RPC id as a dictionary key (``1`` and ``"1"`` stay distinct), None for none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"n:{value}"
    if isinstance(value, str):
        return f"s:{value}"
    return None


def params_session_id(message: dict[str, Any]) -> str | None:
    """``params.sessionId`` of a request or notification, when it is a string."""
    params = message.get("params")
    if isinstance(params, dict):
        sid = params.get("sessionId")
        if isinstance(sid, str):
            return sid
    return None
