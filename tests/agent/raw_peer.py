"""A raw JSON-RPC peer over a subprocess's stdio, for exact wire assertions on agents."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WAIT = 15.0


class RawPeer:
    """An agent subprocess spoken to in raw JSON-RPC lines; every frame it writes is queued."""

    def __init__(self, argv: list[str], *, stderr: Any = subprocess.DEVNULL) -> None:
        env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
        )
        self.frames: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.frames.put(json.loads(line))

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"id": rid, "method": method, "params": params})
        frame = self.frames.get(timeout=WAIT)
        assert frame.get("id") == rid, frame
        return frame

    def open_sessions(self, n: int) -> list[str]:
        self.call(0, "initialize", {"protocolVersion": 1})
        return [
            self.call(i + 1, "session/new", {"cwd": "/tmp", "mcpServers": []})["result"][
                "sessionId"
            ]
            for i in range(n)
        ]

    def prompt_all(self, sessions: list[str], text: str) -> list[tuple[str, Any]]:
        """Prompt every session back to back; the frames until all are answered, as
        ``(session id or "answer:<id>", text or result)`` in arrival order."""
        ids = {}
        for i, sid in enumerate(sessions):
            ids[100 + i] = sid
            self.send(
                {
                    "id": 100 + i,
                    "method": "session/prompt",
                    "params": {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
                }
            )
        events: list[tuple[str, Any]] = []
        answered = 0
        while answered < len(sessions):
            frame = self.frames.get(timeout=WAIT)
            if frame.get("method") == "session/update":
                update = frame["params"]["update"]
                events.append((frame["params"]["sessionId"], update.get("content", {}).get("text")))
            else:
                answered += 1
                events.append((ids[frame["id"]], ("answer", frame.get("result"))))
        return events

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(WAIT)
            self._reader.join(WAIT)
            assert self.proc.stdout is not None
            self.proc.stdout.close()
