"""A deliberately broken ACP agent for ``rxacp check``'s tests (standard library only).

It serves initialize / session/new / session/prompt well enough to be checked, and breaks four
rules on purpose:

* it prints a banner that is not JSON to stdout (``stdio.stdout_clean``);
* it answers ``session/cancel`` during a prompt with an *error* instead of stopReason
  ``cancelled`` (``cancel.cancelled``);
* it answers a bare ``session/cancel`` (a notification) with a result (``cancel.bare_no_answer``);
* it ignores stdin EOF and keeps running until it is terminated (``stdio.exit_on_eof``).

Prompts: ``echo <text>`` (one chunk, end_turn); ``slow ...`` (one chunk, then no answer until
``session/cancel``). Not responsible for anything else; never imported by rxacp.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

__all__ = ["main"]


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _chunk(session_id: str, text: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    _write(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


def _handle(message: dict[str, Any], state: dict[str, Any]) -> None:
    method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        result = {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "agentInfo": {"name": "broken-agent", "version": "0.0.1"},
        }
        _write({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "session/new":
        state["sessions"] += 1
        _write({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": f"b-{state['sessions']}"}})
    elif method == "session/prompt":
        sid = params["sessionId"]
        text = "".join(b.get("text", "") for b in params.get("prompt", []))
        _chunk(sid, text)
        if text.startswith("slow"):
            state["pending"][sid] = rid  # answered (wrongly) on session/cancel
        else:
            _write({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    elif method == "session/cancel":
        pending = state["pending"].pop(params.get("sessionId"), None)
        if pending is not None:  # WRONG: must be a result with stopReason "cancelled"
            error = {"code": -32603, "message": "the turn was cancelled"}
            _write({"jsonrpc": "2.0", "id": pending, "error": error})
        else:  # WRONG: a notification is never answered
            _write({"jsonrpc": "2.0", "id": None, "result": {}})
    elif rid is not None:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        _write({"jsonrpc": "2.0", "id": rid, "error": error})


def main() -> None:
    print("broken-agent v0.0.1 starting")  # WRONG: not a JSON-RPC message
    sys.stdout.flush()
    state: dict[str, Any] = {"sessions": 0, "pending": {}}
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            _write(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            )
            continue
        if isinstance(message, dict):
            _handle(message, state)
    threading.Event().wait()  # WRONG: ignores stdin EOF; runs until terminated


if __name__ == "__main__":
    main()
