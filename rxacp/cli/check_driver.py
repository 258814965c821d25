"""A raw JSON-RPC driver for ``rxacp check``: one agent process over stdio, every byte visible.

:class:`RawAgent` spawns the agent with :class:`~rxacp.transport.StdioAcpClientTransport` and
speaks JSON-RPC by hand, so the checker can choose request ids of any type, send malformed lines
and see exactly what comes back: every incoming message is kept in :attr:`RawAgent.log` (in
arrival order, with a sequence number), lines that are not JSON-RPC go to :attr:`RawAgent.junk`,
answers are matched to requests by their *exact* id (``1`` and ``"1"`` differ). Requests the
agent sends to the client are answered at once: ``session/request_permission`` with outcome
``cancelled``, anything else with ``-32601`` (the checker advertises no client capabilities).

All methods run on one asyncio loop (the one that called :meth:`RawAgent.start`).

This module is *not* responsible for deciding what is conformant (see :mod:`rxacp.cli.check`)
nor for ACP semantics beyond the permission auto-answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..transport import (
    AcpTransport,
    AgentParameters,
    FrameReceiver,
    StdioAcpClientTransport,
    TransportClosed,
)
from ..transport.base import Frame
from .agent_arg import is_http_url, is_url, url_transport
from .stdout_junk import junk_hint, read_line

__all__ = ["AnswerTimeout", "Incoming", "RawAgent"]


class AnswerTimeout(Exception):
    """No answer with the request's exact id arrived in time (or the agent went away)."""


@dataclass
class Incoming:
    """One message read from the agent's stdout."""

    seq: int
    message: dict[str, Any]
    at: float = field(default_factory=time.monotonic)

    @property
    def method(self) -> str | None:
        method = self.message.get("method")
        return method if isinstance(method, str) else None

    @property
    def is_response(self) -> bool:
        return "method" not in self.message and (
            "result" in self.message or "error" in self.message
        )

    @property
    def session_id(self) -> Any:
        params = self.message.get("params")
        return params.get("sessionId") if isinstance(params, dict) else None


def _key(request_id: Any) -> str:
    """Exact-id key: the JSON text, so ``1``, ``1.0`` and ``"1"`` are all different."""
    return json.dumps(request_id, sort_keys=True)


class RawAgent(FrameReceiver):
    """An agent process driven with raw JSON-RPC frames (see the module docstring)."""

    def __init__(
        self, command: list[str], *, cwd: str | None = None, eof_timeout: float = 3.0
    ) -> None:
        if not command:
            raise ValueError("the agent command is empty")
        self.command = command
        self.log: list[Incoming] = []
        self.junk: list[str] = []
        self.stderr: list[str] = []
        self.agent_requests: list[dict[str, Any]] = []
        self.closed: TransportClosed | None = None
        self.closed_at: float | None = None
        self._sent: set[str] = set()
        self.sent_notifications: list[tuple[int, str]] = []
        """``(last_seq when sent, method)`` of every notification the checker sent."""
        self._seq = itertools.count(1)
        self._ids = itertools.count(100)
        self._changed = asyncio.Event()
        self.websocket = is_url(command[0])
        """True for a remote agent (a ``ws[s]://`` or ``http[s]://`` URL: no process, no
        stdio)."""
        self.http = is_http_url(command[0])
        """True for a Streamable HTTP agent (``http[s]://``: JSON bodies only)."""
        self.transport: AcpTransport
        self._eof_timeout = eof_timeout
        if self.websocket:
            self.transport = url_transport(command[0])
            return
        params = (
            AgentParameters.builder(command[0])
            .args(*command[1:])
            .on_stderr_line(self._on_stderr)
            .close_timeout(eof_timeout)
            .terminate_timeout(2.0)
        )
        if cwd is not None:
            params = params.cwd(cwd)
        self.transport = StdioAcpClientTransport(params.build())

    # -- FrameReceiver ------------------------------------------------------------------------
    def on_frame(self, frame: Frame) -> None:
        """Classify one stdout line: a JSON-RPC message, or junk."""
        message, junk = read_line(frame)
        if message is None:
            self.junk.append(junk or "")
            self._changed.set()
            return
        self.log.append(Incoming(next(self._seq), message))
        if isinstance(message.get("method"), str) and "id" in message:
            self._answer_agent_request(message)
        self._changed.set()

    def on_frame_too_large(self, size: int) -> None:
        self.junk.append(f"<a line of {size} bytes, over the frame limit>")
        self._changed.set()

    def on_closed(self, info: TransportClosed) -> None:
        self.closed = info
        self.closed_at = time.monotonic()
        self._changed.set()

    def _on_stderr(self, line: str) -> None:
        self.stderr.append(line)
        del self.stderr[:-50]

    def _answer_agent_request(self, message: dict[str, Any]) -> None:
        self.agent_requests.append(message)
        if message["method"] == "session/request_permission":
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"outcome": {"outcome": "cancelled"}},
                }
            )
        else:
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {
                        "code": -32601,
                        "message": f"rxacp check does not serve {message['method']}",
                    },
                }
            )

    # -- sending ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Spawn the agent (raises ``AcpConnectionException`` if it cannot be started)."""
        await self.transport.start(asyncio.get_running_loop(), self)

    def write(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message as one line."""
        self.send_raw(json.dumps(message, ensure_ascii=False).encode("utf-8"))

    def send_raw(self, line: bytes) -> None:
        """Send ``line`` (no newline inside) + newline, whatever it contains."""
        self.transport.send(line)

    def new_id(self) -> int:
        """A fresh integer id."""
        return next(self._ids)

    def send_request(self, method: str, params: Any, request_id: Any = None) -> Any:
        """Write a request (id: ``request_id`` or a fresh int); returns the id used."""
        request_id = self.new_id() if request_id is None else request_id
        self._sent.add(_key(request_id))
        self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method: str, params: Any) -> None:
        """Write a notification."""
        self.sent_notifications.append((self.last_seq, method))
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def notification_before(self, seq: int) -> str | None:
        """The method of the last notification sent before incoming message ``seq``."""
        before = [method for at, method in self.sent_notifications if at < seq]
        return before[-1] if before else None

    def exit_text(self, when: str = "") -> str:
        """``agent exited with code 7 <when>`` plus its stderr tail (a closed connection)."""
        info = self.closed
        if info is None:
            return "the agent is still running"
        code = info.exit_code
        if code is None:  # reported before the exit status was collected: look again
            code = getattr(self.transport, "exit_code", None)
        if self.websocket:
            kind = "Streamable HTTP" if self.http else "WebSocket"
            return f"the {kind} connection ended ({info.reason}) {when}".rstrip()
        text = "agent exited" + (f" with code {code}" if code is not None else f" ({info.reason})")
        if when:
            text += f" {when}"
        lines = self.stderr or (info.stderr_tail or "").splitlines()
        tail = [line for line in lines if line.strip()][-5:]
        if tail:
            text += "; stderr tail: " + " | ".join(line.strip()[:200] for line in tail)
        return text

    async def request(
        self, method: str, params: Any, timeout: float, request_id: Any = None
    ) -> dict[str, Any]:
        """Send a request and wait (bounded) for the answer carrying exactly its id."""
        request_id = self.send_request(method, params, request_id)
        answer = await self.answer(request_id, timeout)
        if answer is None:
            raise AnswerTimeout(self._no_answer(method, request_id, timeout))
        return answer

    async def answer(self, request_id: Any, timeout: float) -> dict[str, Any] | None:
        """Wait (bounded) for the answer to ``request_id``; None if none came."""
        key = _key(request_id)
        found = await self.wait_until(lambda: self._find_answer(key) is not None, timeout)
        return self._find_answer(key) if found else None

    def _find_answer(self, key: str) -> dict[str, Any] | None:
        for item in self.log:
            if item.is_response and _key(item.message.get("id")) == key:
                return item.message
        return None

    def answer_seq(self, request_id: Any) -> int | None:
        """The sequence number of the answer to ``request_id`` (None if not answered)."""
        key = _key(request_id)
        for item in self.log:
            if item.is_response and _key(item.message.get("id")) == key:
                return item.seq
        return None

    def _no_answer(self, method: str, request_id: Any, timeout: float) -> str:
        if self.closed is not None:
            return self.exit_text(f"before answering {method}")
        text = f"no answer to {method} (id {json.dumps(request_id)}) within {timeout:g} s"
        strays = [m for m in self.unsolicited() if m.get("id") is not None]
        if strays:
            text += f"; answers with other ids: {[m.get('id') for m in strays][:5]}"
        if self.junk:
            text += f"; its stdout had {len(self.junk)} line(s) that are not JSON-RPC, the first: "
            text += repr(self.junk[0])
            hint = junk_hint(self.junk[0])
            text += f" ({hint})" if hint else ""
        tail = [line for line in self.stderr if line.strip()][-3:]
        if tail:
            text += "; stderr tail: " + " | ".join(line.strip()[:200] for line in tail)
        return text

    def was_sent(self, request_id: Any) -> bool:
        """True if the checker sent a request with exactly this id."""
        return _key(request_id) in self._sent

    def unsolicited(self, after_seq: int = 0) -> list[dict[str, Any]]:
        """Answers whose id matches no request the checker sent (after ``after_seq``)."""
        return [
            i.message
            for i in self.log
            if i.seq > after_seq and i.is_response and _key(i.message.get("id")) not in self._sent
        ]

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest incoming message (0 if none)."""
        return self.log[-1].seq if self.log else 0

    def notifications(self, method: str, after_seq: int = 0) -> list[Incoming]:
        """Incoming notifications named ``method`` after ``after_seq``."""
        return [
            i
            for i in self.log
            if i.seq > after_seq and i.method == method and "id" not in i.message
        ]

    async def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` holds (re-checked on every incoming message), bounded."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0 or self.closed is not None:  # closed: every line was delivered
                return predicate()
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return predicate()
        return True

    async def close(self) -> tuple[bool, float]:
        """Close stdin and wait for the process (TERM/KILL after the EOF bound).

        Returns (exited by itself after EOF, seconds it took)."""
        started = time.monotonic()
        if self.closed is not None:  # it had already gone: release the pipes, nothing to wait
            await self.transport.close()
            return True, 0.0
        await self.transport.close()
        took = time.monotonic() - started
        code = self.closed.exit_code if self.closed is not None else None
        exited = code is not None and code >= 0 and took < self._eof_timeout
        return exited, took
