"""A minimal raw agent that gets stuck on purpose, so the test can kill it at a known point.

It answers nothing by itself except ``session/new``; it announces on stderr where it is:
``initialize`` → never answered; ``session/prompt`` → one update, never answered;
with ``--permission`` the prompt instead sends ``session/request_permission`` and waits.
Plain Python (no rxacp import) so a trial costs one cheap process start.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from tests.reliability.peers.raw_wire import message_chunk, send

permission = "--permission" in sys.argv


for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    sys.stderr.write(f"doomed agent got {method}\n")
    sys.stderr.flush()
    if method == "session/new":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        if permission:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": "perm-1",
                    "method": "session/request_permission",
                    "params": {"sessionId": "s1", "toolCall": {"toolCallId": "t1"}, "options": []},
                }
            )
        else:
            send(message_chunk("s1", "hi"))
