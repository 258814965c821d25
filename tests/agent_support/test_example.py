"""``examples/decorator_agent.py`` runs as a real process speaking ACP over stdio."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "decorator_agent.py"


def test_decorator_agent_example_echoes_counts_and_refuses_over_stdio() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdin, stderr_pipe = proc.stdin, proc.stderr
    lines: queue.Queue[bytes] = queue.Queue()
    stdout = proc.stdout

    def pump() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()

    def request(rid: int, method: str, params: Any) -> list[dict[str, Any]]:
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        stdin.write(json.dumps(msg).encode() + b"\n")
        stdin.flush()
        seen = []
        while True:
            seen.append(json.loads(lines.get(timeout=10)))
            if seen[-1].get("id") == rid and "method" not in seen[-1]:
                return seen

    def prompt(rid: int, text: str) -> list[dict[str, Any]]:
        return request(
            rid, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )

    try:
        init = request(1, "initialize", {"protocolVersion": 1})[-1]["result"]
        assert init["agentInfo"]["name"] == "decorator-agent"
        sid = request(2, "session/new", {"cwd": "/", "mcpServers": []})[-1]["result"]["sessionId"]
        echo = prompt(3, "hello")
        assert echo[0]["params"]["update"]["content"]["text"] == f"echo ({sid[:8]}): hello"
        assert echo[-1]["result"] == {"stopReason": "end_turn"}
        counted = prompt(4, "count 3")
        assert [m["params"]["update"]["content"]["text"] for m in counted[:-1]] == [
            "1 ",
            "2 ",
            "3 ",
        ]
        assert prompt(5, "fail")[-1]["result"] == {"stopReason": "refusal"}
    finally:
        stdin.close()
        rc = proc.wait(timeout=10)
        stderr = stderr_pipe.read().decode()
        stderr_pipe.close()
        proc.stdout.close()
    assert rc == 0, stderr
    assert "-> session/prompt (CountingAgent.answer)" in stderr
    assert "refusing: asked to fail" in stderr
