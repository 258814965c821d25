"""A scripted ACP agent for client tests, written directly on ``AcpSession`` handlers.

It records every frame it receives (including ``$/cancel_request``, which the engine handles
itself) so tests can make exact wire assertions, and answers every agent-side method of the
method table with a canned, valid response. Prompts are scripted by their text:

  ``echo <text>``      one agent_message_chunk <text>, then end_turn
  ``stream <n>``       n agent_message_chunks "0".."n-1", then end_turn
  ``wait``             holds the turn until session/cancel, sends "after-cancel", answers cancelled
  ``hang``             never answers (for disposal / timeouts)
  ``hang-after <n>``   n agent_message_chunks "0".."n-1", then never answers
  ``permission``       asks session/request_permission; reports "permission:<outcome>" then
                       answers end_turn, or cancelled if the outcome was cancelled
  ``read <path>``      fs/read_text_file; reports "read:<content>" or "error:<code>:<message>"
  ``write <path>``     fs/write_text_file "written"; reports "write:ok" or "error:<code>"
  ``terminal``         create/output/wait_for_exit/kill/release; reports each result
  ``elicit``           elicitation/create (form); reports "elicit:<action>"
  ``ext``              calls the client's ``_test/ping`` extension request; reports the result
  ``stats``            reports JSON counts of the methods received so far (for stdio tests)

Run as a program (``python fake_agent.py``) it serves the same script over stdio.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import operators as ops
from reactivex.subject import AsyncSubject

if __name__ == "__main__":  # pragma: no cover - stdio peer
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import contextlib

from rxacp.schema import (
    InitializeResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
)
from rxacp.schema import methods as m
from rxacp.session import AcpSession, IncomingNotification, IncomingRequest
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed

FULL_CAPABILITIES: dict[str, Any] = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
    "sessionCapabilities": {
        "list": {},
        "delete": {},
        "resume": {},
        "close": {},
        "fork": {},
        "archive": {},
        "status": {},
        "title": {},
    },
    "auth": {"logout": {}, "status": {}},
    "providers": {},
}

# Canned results for agent-side requests (wire JSON, valid against the result models).
CANNED: dict[str, Any] = {
    m.AUTHENTICATE: {},
    m.LOGOUT: {},
    m.SESSION_NEW: {"sessionId": "sess-1"},
    m.SESSION_LOAD: {},
    m.SESSION_LIST: {"sessions": [{"sessionId": "sess-1", "cwd": "/tmp"}]},
    m.SESSION_DELETE: {},
    m.SESSION_RESUME: {},
    m.SESSION_CLOSE: {},
    m.SESSION_SET_MODE: {},
    m.SESSION_SET_CONFIG_OPTION: {"configOptions": []},
    m.SESSION_FORK: {"sessionId": "sess-fork"},
    m.PROVIDERS_LIST: {"providers": []},
    m.PROVIDERS_SET: {},
    m.PROVIDERS_DISABLE: {},
    m.SESSION_ARCHIVE: {},
    m.SESSION_UNARCHIVE: {},
    m.SESSION_STATUS: {"status": "open"},
    m.SESSION_SET_TITLE: {"title": "Renamed"},
    m.AUTH_STATUS: {"state": "authenticated"},
}


def _get(result: Any, key: str) -> Any:
    """A field of a raw JSON result (typed for lambdas in ``pipe``, whose argument mypy cannot
    infer: reactivex's own ``Observable.pipe`` behaves the same)."""
    return result[key]


class _Recording(AcpTransport):
    """Wraps a transport and records each incoming message before the engine sees it."""

    def __init__(self, inner: AcpTransport, record: Callable[[Any], None]) -> None:
        self._inner = inner
        self._record = record
        self.carries_objects = inner.carries_objects

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        record = self._record

        class Tap(FrameReceiver):
            def on_frame(self, frame: Frame) -> None:
                with contextlib.suppress(ValueError):
                    record(json.loads(frame) if isinstance(frame, bytes) else frame)
                receiver.on_frame(frame)

            def on_frame_too_large(self, size: int) -> None:
                receiver.on_frame_too_large(size)

            def on_closed(self, info: TransportClosed) -> None:
                receiver.on_closed(info)

            def on_write_paused(self) -> None:
                receiver.on_write_paused()

            def on_write_resumed(self) -> None:
                receiver.on_write_resumed()

        await self._inner.start(loop, Tap())

    def send(self, frame: Frame) -> None:
        self._inner.send(frame)

    async def close(self) -> None:
        await self._inner.close()


class FakeAgent:
    """The scripted agent; ``received`` is every incoming message in arrival order."""

    def __init__(
        self,
        transport: AcpTransport,
        *,
        capabilities: dict[str, Any] | None = None,
        protocol_version: int = 1,
    ) -> None:
        self.capabilities = FULL_CAPABILITIES if capabilities is None else capabilities
        self.protocol_version = protocol_version
        self.received: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._cancels: dict[str, AsyncSubject[bool]] = {}
        self.session = AcpSession(_Recording(transport, self._record), role="agent")
        for spec in m.METHODS.values():
            if spec.side == "agent" and spec.kind == "request":
                self.session.set_request_handler(spec.name, self._canned)
        self.session.set_request_handler(m.INITIALIZE, self._initialize)
        self.session.set_request_handler(m.SESSION_PROMPT, self._prompt)
        self.session.set_request_handler("_test/echo", lambda req: reactivex.just(req.params))
        self.session.set_request_handler("_test/hang", lambda req: reactivex.never())
        self.session.set_notification_handler(m.SESSION_CANCEL, self._on_cancel, ordered=False)

    # ------------------------------------------------------------------ recording
    def _record(self, msg: Any) -> None:
        with self._cond:
            self.received.append(msg)
            self._cond.notify_all()

    def methods(self) -> list[str]:
        """Methods of the messages received so far (requests and notifications)."""
        with self._cond:
            return [msg["method"] for msg in self.received if "method" in msg]

    def count(self, method: str) -> int:
        return self.methods().count(method)

    def messages(self, method: str) -> list[dict[str, Any]]:
        with self._cond:
            return [msg for msg in self.received if msg.get("method") == method]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 3.0) -> None:
        """Block until ``predicate()`` holds (re-checked on every received message)."""
        with self._cond:
            assert self._cond.wait_for(predicate, timeout), (
                f"timed out; received: {self.received!r}"
            )

    def wait_for_method(self, method: str, count: int = 1, timeout: float = 3.0) -> None:
        self.wait_for(
            lambda: sum(1 for x in self.received if x.get("method") == method) >= count, timeout
        )

    # ------------------------------------------------------------------ handlers
    def _canned(self, req: IncomingRequest) -> reactivex.Observable[Any]:
        return reactivex.just(CANNED[req.method])

    def _initialize(self, req: IncomingRequest) -> reactivex.Observable[Any]:
        return reactivex.just(
            InitializeResponse.ok(
                self.capabilities,
                protocol_version=self.protocol_version,
                agent_info={"name": "fake-agent", "version": "0.0.1"},
            )
        )

    def _on_cancel(self, note: IncomingNotification) -> None:
        session_id = (note.params or {}).get("sessionId", "")
        self._cancel_subject(session_id).on_next(True)
        self._cancel_subject(session_id).on_completed()

    def _cancel_subject(self, session_id: str) -> AsyncSubject[bool]:
        with self._cond:
            subject = self._cancels.get(session_id)
            if subject is None:
                subject = self._cancels[session_id] = AsyncSubject()
            return subject

    def _say(self, session_id: str, text: str) -> None:
        self.session.send_notification(
            m.SESSION_UPDATE, SessionNotification.agent_text(session_id, text)
        )

    def _prompt(self, req: IncomingRequest) -> reactivex.Observable[Any] | None:
        request = PromptRequest.from_wire(req.params)
        sid = request.session_id
        with self._cond:
            self._cancels.pop(sid, None)  # a new turn: forget an old cancel
        text = request.prompt_text()
        command, _, arg = text.partition(" ")
        end = PromptResponse.end_turn()
        if command == "echo":
            self._say(sid, arg)
            return reactivex.just(end)
        if command == "stream":
            for i in range(int(arg)):
                self._say(sid, str(i))
            return reactivex.just(end)
        if command == "wait":
            return self._cancel_subject(sid).pipe(
                ops.take(1),
                ops.do_action(lambda _: self._say(sid, "after-cancel")),
                ops.map(lambda _: PromptResponse.cancelled()),
            )
        if command == "hang":
            return reactivex.never()
        if command == "hang-after":
            for i in range(int(arg)):
                self._say(sid, str(i))
            return reactivex.never()
        if command == "stats":
            self._say(sid, json.dumps(Counter(self.methods())))
            return reactivex.just(end)
        return self._tool(sid, command, arg)

    def _tool(self, sid: str, command: str, arg: str) -> reactivex.Observable[Any]:
        s = self.session

        def report(prefix: str) -> Callable[[Any], PromptResponse]:
            def on_result(result: Any) -> PromptResponse:
                self._say(sid, f"{prefix}:{result}")
                return PromptResponse.end_turn()

            return on_result

        def on_error(error: Any, _: Any) -> reactivex.Observable[Any]:
            self._say(
                sid, f"error:{getattr(error, 'code', '?')}:{getattr(error, 'message', error)}"
            )
            return reactivex.just(PromptResponse.end_turn())

        source: reactivex.Observable[Any]
        if command == "permission":
            params = {
                "sessionId": sid,
                "toolCall": {"toolCallId": "call-1", "title": "Run tool"},
                "options": [
                    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                ],
            }

            def on_permission(result: Any) -> PromptResponse:
                outcome = result["outcome"]
                label = outcome["outcome"]
                if label == "selected":
                    label = f"selected:{outcome['optionId']}"
                self._say(sid, f"permission:{label}")
                if outcome["outcome"] == "cancelled":
                    return PromptResponse.cancelled()
                return PromptResponse.end_turn()

            source = s.send_request(m.SESSION_REQUEST_PERMISSION, params).pipe(
                ops.map(on_permission)
            )
        elif command == "read":
            source = s.send_request(m.FS_READ_TEXT_FILE, {"sessionId": sid, "path": arg}).pipe(
                ops.map(lambda r: report("read")(_get(r, "content")))
            )
        elif command == "write":
            source = s.send_request(
                m.FS_WRITE_TEXT_FILE, {"sessionId": sid, "path": arg, "content": "written"}
            ).pipe(ops.map(lambda r: report("write")(json.dumps(r))))
        elif command == "terminal":
            source = self._terminal(sid)
        elif command == "elicit":
            params = {
                "sessionId": sid,
                "mode": "form",
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            }
            source = s.send_request(m.ELICITATION_CREATE, params).pipe(
                ops.map(lambda r: report("elicit")(_get(r, "action")))
            )
        elif command == "ext":
            source = s.send_request("_test/ping", {"n": 1}).pipe(
                ops.map(lambda r: report("ext")(json.dumps(r, sort_keys=True)))
            )
        else:
            self._say(sid, f"unknown command {command!r}")
            return reactivex.just(PromptResponse.refusal())
        return source.pipe(ops.catch(on_error))

    def _terminal(self, sid: str) -> reactivex.Observable[Any]:
        s = self.session
        results: list[str] = []

        def step(method: str, extra: dict[str, Any]) -> Callable[[Any], reactivex.Observable[Any]]:
            def run(_: Any) -> reactivex.Observable[Any]:
                params = {"sessionId": sid, "terminalId": "term-1", **extra}
                answer: reactivex.Observable[Any] = s.send_request(method, params).pipe(
                    ops.do_action(
                        lambda r: results.append(f"{method}={json.dumps(r, sort_keys=True)}")
                    )
                )
                return answer

            return run

        create = s.send_request(m.TERMINAL_CREATE, {"sessionId": sid, "command": "ls"}).pipe(
            ops.do_action(lambda r: results.append(f"create={_get(r, 'terminalId')}"))
        )
        chain = create.pipe(
            ops.concat_map(step(m.TERMINAL_OUTPUT, {})),
            ops.concat_map(step(m.TERMINAL_WAIT_FOR_EXIT, {})),
            ops.concat_map(step(m.TERMINAL_KILL, {})),
            ops.concat_map(step(m.TERMINAL_RELEASE, {})),
        )

        def done(_: Any) -> PromptResponse:
            self._say(sid, "terminal:" + ";".join(results))
            return PromptResponse.end_turn()

        answer: reactivex.Observable[Any] = chain.pipe(ops.map(done))
        return answer

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeAgent:
        self.session.start()
        return self

    def close(self) -> None:
        self.session.close()


def main() -> None:  # pragma: no cover - runs in a child process
    from rxacp.transport import StdioAcpAgentTransport

    agent = FakeAgent(StdioAcpAgentTransport())
    agent.start()
    agent.session.wait_closed()
    agent.session.close()


if __name__ == "__main__":  # pragma: no cover
    main()
