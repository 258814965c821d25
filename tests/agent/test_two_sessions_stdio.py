"""Issue 22 on the wire: a blocking agent runs the turns of two sessions at once (the sync agent
API and the decorator support), over stdio, played by a raw JSON-RPC client."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(60)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "rendezvous_agent.py")
WAIT = 15.0


class RawPeer:
    """An agent subprocess spoken to in raw JSON-RPC lines; every frame it writes is queued."""

    def __init__(self, argv: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
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


@pytest.fixture
def peers() -> Iterator[list[RawPeer]]:
    started: list[RawPeer] = []
    yield started
    for peer in started:
        peer.close()


@pytest.mark.parametrize("api", ["sync", "decorators"])
def test_a_blocking_agent_streams_the_turns_of_two_sessions_at_the_same_time(
    peers: list[RawPeer], api: str
) -> None:
    peer = RawPeer([sys.executable, PEER, "--api", api, "--sessions", "2"])
    peers.append(peer)
    sessions = peer.open_sessions(2)
    events = peer.prompt_all(sessions, "go")
    for sid in sessions:
        texts = [text for s, text in events if s == sid]
        # each handler saw the other one running ("alone" = the turns ran one after another)
        assert texts == [
            "started",
            "met",
            "chunk 0",
            "chunk 1",
            "chunk 2",
            ("answer", {"stopReason": "end_turn"}),
        ]
    first_answer = next(i for i, (_, text) in enumerate(events) if isinstance(text, tuple))
    started = [s for s, text in events[:first_answer] if text == "started"]
    assert sorted(started) == sorted(sessions), "both turns streamed before either ended"


@pytest.mark.parametrize("api", ["sync", "decorators", "async"])
def test_the_reference_agent_streams_slow_turns_of_two_sessions_at_the_same_time(
    peers: list[RawPeer], api: str
) -> None:
    peer = RawPeer([sys.executable, "-m", "rxacp.testing.reference_agent", "--api", api])
    peers.append(peer)
    sessions = peer.open_sessions(2)
    events = peer.prompt_all(sessions, "slow 1.5")
    first_answer = next(i for i, (_, text) in enumerate(events) if isinstance(text, tuple))
    streamed_before = {s for s, _ in events[:first_answer]}
    assert streamed_before == set(sessions), "the second turn waited for the first to end"
    answers = [text for _, text in events if isinstance(text, tuple)]
    assert answers == [("answer", {"stopReason": "end_turn"})] * 2
