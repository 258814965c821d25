"""A minimal raw agent that gets stuck on purpose, so the test can kill it at a known point.

It answers nothing by itself except ``session/new``; it announces on stderr where it is:
``initialize`` → never answered; ``session/prompt`` → one update, never answered;
with ``--permission`` the prompt instead sends ``session/request_permission`` and waits.
Plain Python (no rxacp import) so a trial costs one cheap process start.
"""

import json
import sys

permission = "--permission" in sys.argv
out = sys.stdout


def send(obj: dict[str, object]) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


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
