"""A fake model server on 127.0.0.1 that replays canned answers to production ACP agents.

It speaks just enough of three model APIs for the agents of the field suite to run a turn:

* OpenAI chat completions (``POST .../chat/completions``, streaming SSE or not);
* OpenAI responses (``POST .../responses``, streaming SSE);
* Gemini (``POST .../models/<model>:streamGenerateContent?alt=sse``, ``:generateContent``,
  ``:countTokens``);

plus ``GET .../models`` lists. The answer is chosen from the newest user text that contains a
*cue* (see :func:`cue_of`), so the test picks what the model "says" through its ACP prompt:

=========================  ==================================================================
``field:plain``            a short streamed text (:data:`PLAIN_TEXT`)
``field:slow [TICK]``      :data:`SLOW_CHUNKS` chunks, one every TICK (:data:`SLOW_TICK_S`) s
``field:read PATH``        a call of the agent's own read-file tool on ``PATH``
``field:write PATH TEXT``  a call of the agent's write-file tool (``PATH`` gets ``TEXT``)
``field:shell COMMAND``    a call of the agent's shell tool running ``COMMAND``
=========================  ==================================================================

An agent without a read or write tool gets a shell call doing it (``cat`` / ``printf``).
Once a tool's result is in the conversation (after the cue), the answer is the text
``tool done: <first 600 characters of the result>``. A request without tools (titles, summaries)
gets :data:`SIDE_TEXT`. The agent's tool names and argument names are read from the ``tools`` of
its own request (see :func:`pick_tool`), so the same cue works for every agent.

Every request is recorded (:attr:`FakeModelServer.requests`). The server only answers; it never
opens a connection. A request that is not for this server (an absolute URL through a proxy, or a
``CONNECT``) is refused and counted in :attr:`FakeModelServer.escapes` — the field tests point
every agent's ``HTTP(S)_PROXY`` at this server, so any attempt to reach beyond 127.0.0.1 becomes
a visible, failing fact instead of a silent one.

This module is *not* responsible for starting agents or for any ACP logic.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import shlex
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "PLAIN_TEXT",
    "SIDE_TEXT",
    "SLOW_CHUNKS",
    "SLOW_TICK_S",
    "Cue",
    "FakeModelServer",
    "RecordedRequest",
    "cue_of",
    "pick_tool",
    "sample_of",
    "slow_tick",
]

PLAIN_TEXT = "Canned answer from the field model: all good."
PLAIN_CHUNKS = ("Canned answer ", "from the field model: ", "all good.")
SIDE_TEXT = "Field session"
SLOW_CHUNKS = 80
SLOW_TICK_S = 0.1
"""``field:slow`` streams 80 chunks 0.1 s apart (8 s) unless the agent hangs up."""
TOOL_DONE = "tool done: "
TOOL_RESULT_CHARS = 600

_CUE = re.compile(r"field:(plain|slow|read|write|shell)\b ?(.*)", re.DOTALL)


@dataclass(frozen=True)
class Cue:
    """What the test asked the model to do: ``kind`` and its argument text."""

    kind: str
    arg: str = ""


def cue_of(text: str) -> Cue | None:
    """The cue in ``text`` (``field:<kind> <arg>``), or None."""
    found = _CUE.search(text)
    if found is None:
        return None
    return Cue(found.group(1), found.group(2).strip().splitlines()[0] if found.group(2) else "")


@dataclass
class RecordedRequest:
    """One request the server answered (method, path, parsed JSON body, what it replied)."""

    method: str
    path: str
    body: Any
    reply: str = ""


# --------------------------------------------------------------------------- conversations
@dataclass
class Turn:
    """The parts of a model request the server decides on."""

    cue: Cue | None
    tool_result: str | None
    """The text of the first tool result after the cue (None: no tool ran yet)."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """``[{"name", "parameters"}]`` normalized from the request's tool declarations."""


def _texts(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (content may be a string, a list of parts, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("type", "role", "id", "call_id", "tool_call_id", "name"):
                yield from _texts(item)


def _decide(entries: list[tuple[str, str]], tools: list[dict[str, Any]]) -> Turn:
    """``entries``: ``(kind, text)`` in conversation order, kind ``user`` or ``tool``."""
    cue: Cue | None = None
    result: str | None = None
    for kind, text in entries:
        if kind == "user":
            found = cue_of(text)
            if found is not None:
                cue, result = found, None
        elif kind == "tool" and cue is not None and result is None:
            result = text
    return Turn(cue, result, tools)


def _openai_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in body.get("tools") or []:
        fn = tool.get("function", tool)
        if isinstance(fn, dict) and fn.get("name"):
            out.append({"name": fn["name"], "parameters": fn.get("parameters") or {}})
    return out


def chat_turn(body: dict[str, Any]) -> Turn:
    """The turn of an OpenAI chat-completions request."""
    entries = []
    for msg in body.get("messages") or []:
        role = msg.get("role")
        text = "\n".join(_texts(msg.get("content")))
        if role == "user":
            entries.append(("user", text))
        elif role == "tool":
            entries.append(("tool", text))
    return _decide(entries, _openai_tools(body))


def responses_turn(body: dict[str, Any]) -> Turn:
    """The turn of an OpenAI responses request."""
    entries = []
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            entries.append(("user", "\n".join(_texts(item.get("content")))))
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            entries.append(("tool", "\n".join(_texts(item.get("output")))))
    return _decide(entries, _openai_tools(body))


def gemini_turn(body: dict[str, Any]) -> Turn:
    """The turn of a Gemini generateContent request."""
    entries = []
    for content in body.get("contents") or []:
        if content.get("role", "user") != "user":
            continue
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                entries.append(("tool", json.dumps(part["functionResponse"].get("response"))))
            elif "text" in part:
                entries.append(("user", part["text"]))
    tools = []
    for group in body.get("tools") or []:
        for decl in group.get("functionDeclarations") or []:
            params = decl.get("parameters") or decl.get("parametersJsonSchema") or {}
            tools.append({"name": decl.get("name", ""), "parameters": params})
    return _decide(entries, tools)


def slow_tick(arg: str) -> float:
    """Seconds between two ``field:slow`` chunks: the cue's number if it has one (<= 1 s)."""
    try:
        tick = float(arg.split()[0]) if arg.split() else SLOW_TICK_S
    except ValueError:
        return SLOW_TICK_S
    return min(max(tick, 0.0), 1.0)


# ------------------------------------------------------------------------------ tool calls
_TOOL_NAMES = {
    "read": ("read_file", "read", "view", "read_text_file"),
    "write": ("write_file", "write", "create_file", "write_text_file"),
    "shell": ("run_shell_command", "shell", "bash", "exec_command", "execute", "shell_command"),
}


def _props(tool: dict[str, Any]) -> dict[str, Any]:
    props = tool.get("parameters", {}).get("properties")
    return props if isinstance(props, dict) else {}


def _param(props: dict[str, Any], *needles: str) -> str | None:
    for needle in needles:
        for name in props:
            if name.lower() == needle:
                return name
    for needle in needles:
        for name in props:
            if needle in name.lower():
                return name
    return None


def pick_tool(kind: str, arg: str, tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The ``(tool name, arguments)`` that performs cue ``kind`` with the agent's own tools.

    Raises LookupError naming the offered tools when none fits.
    """
    by_name = {t["name"]: t for t in tools}
    tool = next((by_name[n] for n in _TOOL_NAMES[kind] if n in by_name), None)
    if tool is None and kind != "shell":
        # An agent without file tools (codex) works on files through its shell.
        path, _, text = arg.partition(" ")
        command = f"cat {shlex.quote(path)}"
        if kind == "write":
            command = f"printf %s {shlex.quote(text)} > {shlex.quote(path)}"
        with contextlib.suppress(LookupError):
            return pick_tool("shell", command, tools)
    if tool is None:
        offered = ", ".join(sorted(by_name)) or "none"
        raise LookupError(f"no {kind} tool among the agent's tools ({offered})")
    props = _props(tool)
    args: dict[str, Any] = {}
    if kind == "shell":
        name = _param(props, "command", "cmd") or "command"
        schema = props.get(name, {})
        args[name] = ["bash", "-lc", arg] if schema.get("type") == "array" else arg
        desc = _param(props, "description")
        if desc is not None and desc != name:
            args[desc] = "field shell step"
        return tool["name"], args
    path, _, text = arg.partition(" ")
    path_name = _param(props, "file_path", "absolute_path", "filepath", "path") or "path"
    args[path_name] = path
    if kind == "write":
        args[_param(props, "content", "contents", "text") or "content"] = text
    return tool["name"], args


def sample_of(schema: dict[str, Any]) -> Any:
    """A small value of JSON schema ``schema`` (Gemini's upper-case types too)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: sample_of(sub) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "user" if "speaker" in str(schema.get("description", "")).lower() else "canned"


# ---------------------------------------------------------------------------------- server
class _Stop(Exception):
    """The client hung up (or the server is stopping): stop writing this answer."""


class FakeModelServer:
    """The canned-answer model server (``with FakeModelServer() as server: server.base_url``)."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.escapes: list[str] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._slow_started = threading.Condition()
        self._slow_streams = 0
        self._slow_hangups = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_CONNECT(self) -> None:
                owner._escape(f"CONNECT {self.path}")
                self.send_error(403, "the field model server never proxies")

            def do_GET(self) -> None:
                owner._handle(self, "GET")

            def do_POST(self) -> None:
                owner._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-model", daemon=True
        )

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        """The ephemeral port on 127.0.0.1."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeModelServer:
        """Serve in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow streams end at their next chunk."""
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ facts
    @property
    def slow_hangups(self) -> int:
        """How many ``field:slow`` streams ended because the agent hung up."""
        with self._lock:
            return self._slow_hangups

    def wait_slow_streams(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` slow streams have started."""
        with self._slow_started:
            return self._slow_started.wait_for(lambda: self._slow_streams >= count, timeout)

    def model_requests(self) -> list[RecordedRequest]:
        """The POSTs (model calls) so far."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST"]

    def _escape(self, what: str) -> None:
        with self._lock:
            self.escapes.append(what)

    # ------------------------------------------------------------------ dispatch
    def _handle(self, http: BaseHTTPRequestHandler, method: str) -> None:
        raw_path = http.path
        if not raw_path.startswith("/"):
            # An absolute URL: someone used us as a proxy to reach another host.
            self._escape(f"{method} {raw_path}")
            self._send(http, 403, {"error": "the field model server never proxies"})
            return
        length = int(http.headers.get("Content-Length") or 0)
        raw = http.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw[:200].decode("utf-8", "replace")}
        record = RecordedRequest(method, raw_path, body)
        with self._lock:
            self.requests.append(record)
        path = urlsplit(raw_path).path
        try:
            if method == "GET":
                self._get(http, path)
            elif path.endswith("/chat/completions"):
                self._chat(http, body, record)
            elif path.endswith("/responses"):
                self._responses(http, body, record)
            elif ":streamGenerateContent" in path:
                self._gemini(http, body, record, stream=True)
            elif ":generateContent" in path:
                self._gemini(http, body, record, stream=False)
            elif ":countTokens" in path:
                self._send(http, 200, {"totalTokens": 42})
            else:
                self._send(http, 404, {"error": {"message": f"fake model: no route {path}"}})
        except _Stop:
            http.close_connection = True
        except LookupError as exc:
            with self._lock:
                self.errors.append(str(exc))
            with contextlib.suppress(OSError):
                self._send(http, 400, {"error": {"message": f"fake model: {exc}"}})

    def _get(self, http: BaseHTTPRequestHandler, path: str) -> None:
        if path.endswith("/models"):
            models = [{"id": "field-model", "object": "model", "created": 0, "owned_by": "field"}]
            self._send(http, 200, {"object": "list", "data": models, "models": models})
        else:
            self._send(http, 404, {"error": {"message": f"fake model: no route {path}"}})

    # ------------------------------------------------------------------ plans
    def _plan(self, turn: Turn) -> tuple[str, Any]:
        """``("text", chunks)``, ``("slow", chunks)`` or ``("tool", (name, args))``."""
        if not turn.tools or turn.cue is None:
            return "text", [SIDE_TEXT]
        if turn.tool_result is not None:
            return "text", [TOOL_DONE, turn.tool_result[:TOOL_RESULT_CHARS]]
        kind = turn.cue.kind
        if kind == "plain":
            return "text", list(PLAIN_CHUNKS)
        if kind == "slow":
            return "slow", (slow_tick(turn.cue.arg), [f"w{i} " for i in range(SLOW_CHUNKS)])
        return "tool", pick_tool(kind, turn.cue.arg, turn.tools)

    def _chunks(self, kind: str, plan: Any) -> Iterator[str]:
        if kind != "slow":
            yield from plan
            return
        tick, chunks = plan
        with self._slow_started:
            self._slow_streams += 1
            self._slow_started.notify_all()
        try:
            for i, chunk in enumerate(chunks):
                if i and self._stopping.wait(tick):
                    raise _Stop
                yield chunk
        except _Stop:
            with self._lock:
                self._slow_hangups += 1
            raise

    # ------------------------------------------------------------------ wire helpers
    def _send(self, http: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        http.send_response(status)
        http.send_header("Content-Type", "application/json")
        http.send_header("Content-Length", str(len(data)))
        http.end_headers()
        http.wfile.write(data)

    def _sse_start(self, http: BaseHTTPRequestHandler) -> None:
        http.send_response(200)
        http.send_header("Content-Type", "text/event-stream")
        http.send_header("Cache-Control", "no-cache")
        http.send_header("Connection", "close")
        http.end_headers()
        http.close_connection = True

    def _sse(self, http: BaseHTTPRequestHandler, data: Any, event: str | None = None) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
        try:
            http.wfile.write(frame.encode())
            http.wfile.flush()
        except OSError as exc:
            raise _Stop from exc

    # ------------------------------------------------------------------ chat completions
    def _chat(
        self, http: BaseHTTPRequestHandler, body: dict[str, Any], rec: RecordedRequest
    ) -> None:
        kind, plan = self._plan(chat_turn(body))
        rec.reply = kind
        cid = f"chatcmpl-{next(self._ids)}"
        model = body.get("model", "field-model")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        if kind == "tool":
            name, args = plan
            call: dict[str, Any] = {"id": f"call_{next(self._ids)}", "type": "function"}
            call["function"] = {"name": name, "arguments": json.dumps(args)}
            if not body.get("stream"):
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
                self._send(http, 200, _completion(cid, model, choice, usage))
                return
            self._sse_start(http)
            self._sse(
                http,
                chunk({"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}),
            )
            self._sse(http, {**chunk({}, "tool_calls"), "usage": usage})
            self._sse(http, "[DONE]")
            return
        if not body.get("stream"):
            text = "".join(self._chunks(kind, plan))
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            self._send(http, 200, _completion(cid, model, choice, usage))
            return
        self._sse_start(http)
        self._sse(http, chunk({"role": "assistant", "content": ""}))
        for piece in self._chunks(kind, plan):
            self._sse(http, chunk({"content": piece}))
        self._sse(http, {**chunk({}, "stop"), "usage": usage})
        self._sse(http, "[DONE]")

    # ------------------------------------------------------------------ responses
    def _responses(
        self, http: BaseHTTPRequestHandler, body: dict[str, Any], rec: RecordedRequest
    ) -> None:
        kind, plan = self._plan(responses_turn(body))
        rec.reply = kind
        rid = f"resp_{next(self._ids)}"
        model = body.get("model", "field-model")
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
        self._sse_start(http)
        seq = itertools.count()

        def event(name: str, payload: dict[str, Any]) -> None:
            self._sse(http, {"type": name, "sequence_number": next(seq), **payload}, name)

        event("response.created", {"response": {**base, "status": "in_progress", "output": []}})
        if kind == "tool":
            name, args = plan
            item = {
                "type": "function_call",
                "id": f"fc_{next(self._ids)}",
                "call_id": f"call_{next(self._ids)}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
            event("response.output_item.added", {"output_index": 0, "item": item})
            event("response.output_item.done", {"output_index": 0, "item": item})
            output = [item]
        else:
            mid = f"msg_{next(self._ids)}"
            start = {
                "type": "message",
                "id": mid,
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            event("response.output_item.added", {"output_index": 0, "item": start})
            part = {"type": "output_text", "text": "", "annotations": []}
            event(
                "response.content_part.added",
                {"item_id": mid, "output_index": 0, "content_index": 0, "part": part},
            )
            text = ""
            for piece in self._chunks(kind, plan):
                text += piece
                event(
                    "response.output_text.delta",
                    {"item_id": mid, "output_index": 0, "content_index": 0, "delta": piece},
                )
            event(
                "response.output_text.done",
                {"item_id": mid, "output_index": 0, "content_index": 0, "text": text},
            )
            done = {
                **start,
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            event("response.output_item.done", {"output_index": 0, "item": done})
            output = [done]
        event(
            "response.completed",
            {"response": {**base, "status": "completed", "output": output, "usage": usage}},
        )

    # ------------------------------------------------------------------ gemini
    def _gemini(
        self, http: BaseHTTPRequestHandler, body: dict[str, Any], rec: RecordedRequest, stream: bool
    ) -> None:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if config.get("responseMimeType") == "application/json" or schema:
            # Side questions (routing, "who speaks next?") want JSON of a schema: fill it in.
            kind, plan = "text", [json.dumps(sample_of(schema or {}))]
        else:
            kind, plan = self._plan(gemini_turn(body))
        rec.reply = kind
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}

        def response(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
            cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                cand["finishReason"] = finish
            return {"candidates": [cand], "usageMetadata": usage, "modelVersion": "field-model"}

        if kind == "tool":
            name, args = plan
            parts = [{"functionCall": {"name": name, "args": args}}]
            if not stream:
                self._send(http, 200, response(parts, "STOP"))
                return
            self._sse_start(http)
            self._sse(http, response(parts, "STOP"))
            return
        if not stream:
            self._send(http, 200, response([{"text": "".join(self._chunks(kind, plan))}], "STOP"))
            return
        self._sse_start(http)
        count = len(plan[1]) if kind == "slow" else len(plan)
        for i, piece in enumerate(self._chunks(kind, plan)):
            self._sse(http, response([{"text": piece}], "STOP" if i == count - 1 else None))


def _completion(cid: str, model: Any, choice: dict[str, Any], usage: Any) -> dict[str, Any]:
    """A non-streamed OpenAI ``chat.completion`` body with one choice."""
    return {
        "id": cid,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": usage,
    }
