"""A raw JSON-RPC agent that cancels the way production agents do (codex-acp, opencode,
gemini-cli), written without rxacp so its wire behaviour is exactly what the script says.

* It implements ``session/cancel`` (the turn ends with stop reason ``cancelled``) but not
  ``$/cancel_request``: depending on ``quirk`` it answers that notification ``-32601`` with no
  ``id`` at all (codex-acp), with ``"id": null`` (opencode), or ignores it (gemini-cli).
* A prompt for a session whose turn has not answered yet is refused ``-32600`` (as rxacp's and
  the Java SDK's agents do by default), so a client that sends its next prompt too early sees it.
* Prompts: ``echo <text>`` (one chunk, then ``end_turn``); ``long`` (one chunk ``started``,
  then holds the turn until ``session/cancel``; the ``cancelled`` answer is sent when
  :meth:`finish_cancelled` is called, or at once when ``cancel_delay`` is 0, or after
  ``cancel_delay`` seconds in the stdio program); ``stats`` (one chunk with the JSON counts of
  methods received).

In memory, :class:`ProductionLikeAgent` sits on an ``InMemoryTransport``; as a program
(``python production_like_agent.py <quirk> <cancel_delay>``) it serves stdio.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

QUIRKS = ("no-id", "null-id", "ignore")
_NOT_FOUND = {"code": -32601, "message": "Method not found"}


class ProductionLikeAgent:
    """The script; ``write`` sends one message object (any thread)."""

    def __init__(self, quirk: str = "no-id", *, cancel_delay: float | None = None) -> None:
        assert quirk in QUIRKS, quirk
        self.quirk = quirk
        self.cancel_delay = cancel_delay  # None: wait for finish_cancelled()
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._turns: dict[str, Any] = {}  # session id -> id of the prompt not answered yet
        self._cancelling: dict[str, Any] = {}  # session id -> prompt id waiting to be answered
        self.write: Callable[[dict[str, Any]], None] = lambda msg: None
        self.schedule: Callable[[float, Callable[[], None]], None] = lambda _d, fn: fn()

    # ------------------------------------------------------------------ recording
    def count(self, method: str) -> int:
        with self._cond:
            return sum(1 for msg in self.received if msg.get("method") == method)

    def messages(self, method: str) -> list[dict[str, Any]]:
        with self._cond:
            return [msg for msg in self.received if msg.get("method") == method]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        with self._cond:
            assert self._cond.wait_for(predicate, timeout), f"timed out; got {self.received!r}"

    def wait_for_method(self, method: str, count: int = 1) -> None:
        self.wait_for(lambda: sum(1 for x in self.received if x.get("method") == method) >= count)

    def _send(self, msg: dict[str, Any]) -> None:
        with self._cond:
            self.sent.append(msg)
        self.write(msg)

    # ------------------------------------------------------------------ the script
    def on_message(self, msg: dict[str, Any]) -> None:
        with self._cond:
            self.received.append(msg)
            self._cond.notify_all()
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method is None:
            return  # an answer to something we never asked
        if method == "$/cancel_request":
            if self.quirk == "no-id":
                self._send({"jsonrpc": "2.0", "error": _NOT_FOUND})
            elif self.quirk == "null-id":
                self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": -32601, "message": "Method not found: $/cancel_request"},
                    }
                )
            return
        if method == "session/cancel":
            self._cancel(params.get("sessionId", ""))
            return
        if "id" not in msg:
            return
        if method == "initialize":
            self._result(rid, {"protocolVersion": 1, "agentCapabilities": {}})
        elif method == "session/new":
            self._result(rid, {"sessionId": "sess-1"})
        elif method == "session/prompt":
            self._prompt(rid, params)
        else:
            self._send({"jsonrpc": "2.0", "id": rid, "error": _NOT_FOUND})

    def _result(self, rid: Any, result: Any) -> None:
        self._send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _say(self, sid: str, text: str) -> None:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        self._send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": sid, "update": update},
            }
        )

    def _prompt(self, rid: Any, params: dict[str, Any]) -> None:
        sid = params.get("sessionId", "")
        text = "".join(b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict))
        with self._cond:
            busy = sid in self._turns
            if not busy:
                self._turns[sid] = rid
        if busy:
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32600, "message": f"session {sid} already has a turn"},
                }
            )
            return
        command, _, arg = text.partition(" ")
        if command == "long":
            self._say(sid, "started")
            return  # until session/cancel
        if command == "echo":
            self._say(sid, arg)
        elif command == "stats":
            with self._cond:
                counts = Counter(m["method"] for m in self.received if "method" in m)
            self._say(sid, json.dumps(counts, sort_keys=True))
        self._end(sid, "end_turn")

    def _end(self, sid: str, stop_reason: str) -> None:
        with self._cond:
            rid = self._turns.pop(sid, None)
            self._cancelling.pop(sid, None)
        if rid is not None:
            self._result(rid, {"stopReason": stop_reason})

    def _cancel(self, sid: str) -> None:
        with self._cond:
            if sid not in self._turns or sid in self._cancelling:
                return
            self._cancelling[sid] = self._turns[sid]
        if self.cancel_delay is not None:
            self.schedule(self.cancel_delay, lambda: self._end(sid, "cancelled"))

    def finish_cancelled(self) -> None:
        """Answer every turn under ``session/cancel`` with ``cancelled`` now."""
        with self._cond:
            sessions = list(self._cancelling)
        for sid in sessions:
            self._end(sid, "cancelled")


class InMemoryPeer:
    """Runs a :class:`ProductionLikeAgent` on one end of an in-memory pair (objects)."""

    def __init__(self, agent: ProductionLikeAgent, transport: Any) -> None:
        self.agent = agent
        self._transport = transport
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

        def write(msg: dict[str, Any]) -> None:
            frame = msg if transport.carries_objects else json.dumps(msg).encode()
            self._loop.call_soon_threadsafe(transport.send, frame)

        agent.write = write

    def start(self) -> InMemoryPeer:
        peer = self

        class Receiver:
            def on_frame(self, frame: Any) -> None:
                peer.agent.on_message(frame if isinstance(frame, dict) else json.loads(frame))

            def on_frame_too_large(self, size: int) -> None:
                pass

            def on_closed(self, info: Any) -> None:
                pass

        self._thread.start()
        asyncio.run_coroutine_threadsafe(
            self._transport.start(self._loop, Receiver()), self._loop
        ).result(5)
        return self

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._transport.close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()


def main() -> None:  # pragma: no cover - runs in a child process
    quirk = sys.argv[1] if len(sys.argv) > 1 else "no-id"
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    agent = ProductionLikeAgent(quirk, cancel_delay=delay)
    lock = threading.Lock()

    def write(msg: dict[str, Any]) -> None:
        with lock:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    def schedule(delay: float, fn: Callable[[], None]) -> None:
        timer = threading.Timer(delay, fn)
        timer.daemon = True
        timer.start()

    agent.write = write
    agent.schedule = schedule
    for line in sys.stdin:
        if line.strip():
            agent.on_message(json.loads(line))


if __name__ == "__main__":  # pragma: no cover
    main()
