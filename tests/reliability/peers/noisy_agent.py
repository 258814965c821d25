"""A misbehaving agent: it writes log lines and other junk to its stdout between JSON-RPC
messages (stdout guard off), answering initialize, session/new and session/prompt."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from tests.reliability.peers.raw_wire import message_chunk, send

JUNK = ["starting up...", "DEBUG: loaded 3 plugins", "{not json", "[1, 2", "\x1b[31mred\x1b[0m"]


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
        send(message_chunk("s1", "hi"))
        junk()
        send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
