"""The bare floor agent: reads, parses and writes the same JSON-RPC lines, with no SDK.

Understands the benchmark prompts (``echo x``, ``stream n``, ``wait``), ``session/cancel`` and
``$/cancel_request``. It is *not* an ACP implementation (no validation, no capabilities).
"""

from __future__ import annotations

import json
import sys

__all__ = ["main"]


def main() -> None:
    """Serve stdin/stdout until EOF."""
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    loads, dumps = json.loads, json.dumps
    sessions = 0
    waiting: dict[str, object] = {}  # session id -> prompt id waiting for a cancel
    by_id: dict[object, str] = {}

    def update(sid: str, text: str) -> None:
        out.write(
            dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": sid,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": text},
                        },
                    },
                }
            ).encode()
            + b"\n"
        )

    def answer(mid: object, result: object) -> None:
        out.write(dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode() + b"\n")

    for line in inp:
        msg = loads(line)
        method = msg.get("method")
        mid = msg.get("id")
        params = msg.get("params") or {}
        if method == "initialize":
            answer(mid, {"protocolVersion": 1, "agentCapabilities": {}})
        elif method == "session/new":
            sessions += 1
            answer(mid, {"sessionId": f"floor-{sessions}"})
        elif method == "session/prompt":
            sid = params["sessionId"]
            text = "".join(b.get("text", "") for b in params["prompt"])
            command, _, arg = text.partition(" ")
            if command == "echo":
                update(sid, arg)
            elif command == "stream":
                for i in range(int(arg)):
                    update(sid, str(i))
            elif command == "wait":
                waiting[sid] = mid
                by_id[mid] = sid
                update(sid, "waiting")
                out.flush()
                continue
            answer(mid, {"stopReason": "end_turn"})
        elif method == "session/cancel":
            pid = waiting.pop(params["sessionId"], None)
            if pid is not None:
                by_id.pop(pid, None)
                answer(pid, {"stopReason": "cancelled"})
        elif method == "$/cancel_request":
            rid = params["requestId"]
            sid = by_id.pop(rid, None)
            if sid is not None:
                waiting.pop(sid, None)
                out.write(
                    dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": rid,
                            "error": {"code": -32800, "message": "Request cancelled"},
                        }
                    ).encode()
                    + b"\n"
                )
        elif mid is not None:
            answer(mid, {})
        out.flush()


if __name__ == "__main__":
    main()
