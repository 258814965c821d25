"""A hostile raw agent: validation amplification against the client (issue 17 item 1).

``python amplifying_agent.py BYTES``: on ``session/prompt`` it sends a
``session/request_permission`` whose ``options`` list is BYTES of tiny invalid items
(``{"a":{}}``) and waits for the client's answer, then a ``tool_call`` update whose ``content``
is BYTES of the same, then one ``agent_message_chunk`` reporting what the client answered
(``answer_bytes=... code=... entries=...``), then ends the turn. Plain Python, no rxacp import.
"""

import json
import sys

size = int(sys.argv[1])
out = sys.stdout.buffer
ITEM = b'{"a":{}}'


def send(obj: dict[str, object]) -> None:
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def junk_list() -> bytes:
    return b"[" + b",".join([ITEM] * (size // (len(ITEM) + 1))) + b"]"


def prompt(request_id: object) -> None:
    head = b'{"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":'
    params = b'{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":' + junk_list() + b"}"
    out.write(head + params + b"}\n")
    out.flush()
    line = sys.stdin.buffer.readline()
    answer = json.loads(line)
    error = answer.get("error") or {}
    data = error.get("data")
    report = f"answer_bytes={len(line)} code={error.get('code')} "
    report += f"entries={len(data) if isinstance(data, list) else 0}"
    head = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
    update = b'{"sessionUpdate":"tool_call","toolCallId":"t2","title":"x","content":'
    out.write(head + update + junk_list() + b"}}}\n")
    out.flush()
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": report}}
    notification = {"sessionId": "s1", "update": chunk}
    send({"jsonrpc": "2.0", "method": "session/update", "params": notification})
    send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})


for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        prompt(msg["id"])
