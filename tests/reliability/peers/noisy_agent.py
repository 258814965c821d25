"""A misbehaving agent: it writes log lines and other junk to its stdout between JSON-RPC
messages (stdout guard off), answering initialize, session/new and session/prompt."""

import json
import sys

JUNK = ["starting up...", "DEBUG: loaded 3 plugins", "{not json", "[1, 2", "\x1b[31mred\x1b[0m"]


def send(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def junk() -> None:
    for line in JUNK:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


junk()
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method is None:
        continue  # our -32700 answers to the junk: do not feed them back
    junk()
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "s1",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "hi"},
                    },
                },
            }
        )
        junk()
        send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
