"""Lines on an agent's stdout that are not JSON-RPC: how the command line recognises and shows
them (``rxacp check`` judges them, ``rxacp prompt`` says what arrived).

An agent's stdout must carry JSON-RPC messages only; a log line or a banner printed there is
junk. The common newcomer's case is a banner printed *without* a newline: the first JSON-RPC
message then arrives glued to it on one line, so the answer to ``initialize`` never counts.
:func:`read_line` tells a message from junk; :func:`junk_hint` explains that case.

This module is *not* responsible for answering junk (the session engine answers ``-32700``).
"""

from __future__ import annotations

import json
from typing import Any

from ..transport.base import Frame

__all__ = ["MAX_SHOWN", "junk_hint", "read_line"]

MAX_SHOWN = 200
"""Characters of a junk line that are kept to show."""


def read_line(frame: Frame) -> tuple[dict[str, Any] | None, str | None]:
    """One stdout line: ``(message, None)`` for a JSON-RPC 2.0 message (an object with
    ``"jsonrpc": "2.0"``), else ``(None, text)``: the first :data:`MAX_SHOWN` characters of
    the junk (invalid UTF-8 replaced)."""
    try:
        text = frame.decode("utf-8") if isinstance(frame, bytes) else frame
        message = json.loads(text) if isinstance(text, str) else text
    except (UnicodeDecodeError, ValueError, TypeError):
        message = None
    if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
        return message, None
    raw = frame.decode("utf-8", "replace") if isinstance(frame, bytes) else str(frame)
    return None, raw[:MAX_SHOWN]


def junk_hint(text: str) -> str:
    """Why a junk line may have cost an answer (``""`` when there is nothing to add)."""
    at = text.find('{"jsonrpc"')
    if at > 0:
        return (
            f"a JSON-RPC message follows {text[:at]!r} on this line, so it was lost "
            "(did the agent print that to stdout without a newline?)"
        )
    return ""
