"""What the plain-Python raw peers here share: writing a JSON-RPC message, a text chunk update.

No rxacp import (a peer start stays cheap); the sibling scripts put the repository root on
``sys.path`` and import it as ``tests.reliability.peers.raw_wire``.
"""

import json
import sys


def send(obj: dict[str, object]) -> None:
    """Write ``obj`` as one line to stdout and flush."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def message_chunk(session_id: str, text: str) -> dict[str, object]:
    """A ``session/update`` notification carrying the agent message chunk ``text``."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session_id,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        },
    }
