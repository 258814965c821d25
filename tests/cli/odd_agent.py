"""An ACP agent that misbehaves on request, for ``rxacp prompt`` / ``rxacp check`` tests.

Standard library only (JSON-RPC by hand), never imported by rxacp. ``python odd_agent.py MODE``:

* ``good``            — initialize / session/new / prompt (echo) / session/cancel, all correct;
* ``silent``          — reads stdin, never writes; exits on EOF;
* ``exit``            — writes ``fatal: no config file`` to stderr and exits 7 at once;
* ``crash-on-prompt`` — fine until ``session/prompt``, then ``panic: boom`` on stderr, exit 3;
* ``garbage``         — writes non-JSON lines to stdout before each answer (otherwise good);
* ``escapes``         — answers with terminal escape sequences in its text, a tool call title,
  a plan entry and a permission question (title and option names);
* ``auth``            — advertises auth methods; ``session/new`` is ``-32000`` until
  ``authenticate`` with ``api-key`` or ``login`` succeeded;
* ``updates``         — a prompt streams text interleaved with session_info / usage updates,
  a tool call and its update, a plan and a thought;
* ``slow-init``       — answers ``initialize`` only after ``ODD_DELAY`` seconds (default 3);
* ``internal-error``  — answers a prompt with ``-32603`` whose ``data.details`` says why;
* ``rude``            — answers the ``session/cancel`` notification with an error, and sends an
  error answer without an ``id``; sends ``available_commands_update`` for every session it
  created (also while another session prompts) and one for a session id it never gave out;
* ``crosstalk``       — like ``good`` but every prompt also sends ``available_commands_update``
  for every session it created (legitimate: the ids were given to this client);
* ``newlines``        — raw newlines in its name and version, a tool call title, a session
  title and a prompt's error message and data (each tries to forge a ``PASS`` line);
* ``junk-first``      — prints ``Loading odd-agent... `` to stdout (no newline) before its first
  message, so the ``initialize`` answer arrives glued to it on one line;
* ``echo``            — echoes every stdin line back to stdout prefixed with ``echo: `` (never
  JSON); writes how many lines it read to the file ``$ODD_COUNT_FILE`` on end of input;
* ``bad-version``     — answers ``initialize`` with ``protocolVersion: "one"``;
* ``stderr``          — writes ``debug: step N`` lines to stderr during a prompt turn, then
  waits for the line ``go`` in the file ``$ODD_GATE`` before answering (so a test can see the
  lines arrive while the turn runs);
* ``midtool``         — streams ``Hello, wor``, a tool call, a session title, ``ld!``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
ESC = "\x1b"
state: dict[str, Any] = {"sessions": [], "authed": False}


FORGED = "\nPASS  fake.check  all good\n"


def write(message: dict[str, Any]) -> None:
    if MODE == "garbage" and "id" in message:
        sys.stdout.write("garbage: this is not JSON\n")
    if MODE == "junk-first" and not state.get("junked"):
        state["junked"] = True
        sys.stdout.write("Loading odd-agent... ")
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(rid: Any, result: Any) -> None:
    write({"jsonrpc": "2.0", "id": rid, "result": result})


def error(rid: Any, code: int, message: str, data: Any = None) -> None:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    write({"jsonrpc": "2.0", "id": rid, "error": err})


def update(sid: str, body: dict[str, Any]) -> None:
    write(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": body}}
    )


def chunk(sid: str, text: str, kind: str = "agent_message_chunk") -> None:
    update(sid, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def commands(sid: str) -> None:
    update(sid, {"sessionUpdate": "available_commands_update", "availableCommands": []})


def initialize(rid: Any) -> None:
    if MODE == "slow-init":
        time.sleep(float(os.environ.get("ODD_DELAY", "3")))
    result: dict[str, Any] = {
        "protocolVersion": 1,
        "agentCapabilities": {},
        "agentInfo": {"name": "odd-agent", "version": MODE},
    }
    if MODE == "escapes":
        result["agentInfo"]["name"] = f"odd{ESC}]0;pwned{chr(7)}"
    if MODE == "newlines":
        result["agentInfo"] = {"name": f"odd{FORGED}", "version": f"1{FORGED}"}
    if MODE == "bad-version":
        result["protocolVersion"] = "one"
    if MODE == "auth":
        result["authMethods"] = [
            {"id": "api-key", "name": "API key", "type": "env_var", "varName": "ODD_API_KEY"},
            {"id": "login", "name": "Log in with a browser", "description": "opens a page"},
        ]
    answer(rid, result)


def prompt(rid: Any, params: dict[str, Any]) -> None:
    sid = params["sessionId"]
    text = "".join(b.get("text", "") for b in params.get("prompt", []))
    if MODE == "crash-on-prompt":
        sys.stderr.write("panic: boom\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "newlines":
        update(sid, {"sessionUpdate": "session_info_update", "title": f"Title{FORGED}"})
        update(
            sid,
            {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": f"Run{FORGED}"},
        )
        error(rid, -32603, f"Internal error{FORGED}", {"details": f"why{FORGED}"})
        return
    if MODE == "midtool":
        chunk(sid, "Hello, wor")
        update(sid, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Look"})
        update(sid, {"sessionUpdate": "session_info_update", "title": "Greeting"})
        chunk(sid, "ld!")
        answer(rid, {"stopReason": "end_turn"})
        return
    if MODE == "stderr":
        for n in (1, 2):
            sys.stderr.write(f"debug: step {n}\n")
            sys.stderr.flush()
        gate = os.environ["ODD_GATE"]
        while True:
            with open(gate) as f:
                if f.read().strip() == "go":
                    break
            time.sleep(0.01)
        chunk(sid, "done")
        answer(rid, {"stopReason": "end_turn"})
        return
    if MODE == "internal-error":
        error(rid, -32603, "Internal error", {"details": "stream disconnected before completion"})
        return
    if MODE == "escapes":
        chunk(sid, f"title{ESC}]0;pwned{chr(7)} clear{ESC}[2J bell{chr(7)} ok\n")
        update(
            sid,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": f"Run {ESC}[31mred{ESC}[0m",
                "status": "pending",
            },
        )
        update(
            sid,
            {
                "sessionUpdate": "plan",
                "entries": [{"content": f"step{ESC}[2J", "priority": "high", "status": "pending"}],
            },
        )
        write(
            {
                "jsonrpc": "2.0",
                "id": "perm-1",
                "method": "session/request_permission",
                "params": {
                    "sessionId": sid,
                    "toolCall": {"toolCallId": "t1", "title": f"Deploy{ESC}]0;x{chr(7)}"},
                    "options": [
                        {"optionId": "yes", "name": f"Allow{ESC}[2J", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                    ],
                },
            }
        )
        state["pending_prompt"] = rid
        return
    if MODE == "updates":
        chunk(sid, "Hel")
        update(sid, {"sessionUpdate": "session_info_update", "title": "Greeting"})
        chunk(sid, "lo wor")
        update(sid, {"sessionUpdate": "usage_update", "used": 1200, "size": 200000})
        chunk(sid, "ld\n")
        update(
            sid,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read notes.txt",
                "kind": "read",
                "status": "pending",
            },
        )
        update(
            sid, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
        )
        update(
            sid,
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "say hello", "priority": "high", "status": "completed"}],
            },
        )
        chunk(sid, "pondering", "agent_thought_chunk")
        chunk(sid, "Bye.")
        answer(rid, {"stopReason": "end_turn"})
        return
    if MODE in ("rude", "crosstalk"):
        for other in state["sessions"]:
            commands(other)
    if MODE == "rude":
        commands("never-given")
    if text.startswith("slow"):
        chunk(sid, "working")
        state["pending_prompt"] = rid
        return
    chunk(sid, text)
    answer(rid, {"stopReason": "end_turn"})


def handle(message: dict[str, Any]) -> None:
    method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
    if method is None:  # an answer (permission) → end the held prompt
        held = state.pop("pending_prompt", None)
        if held is not None:
            outcome = (message.get("result") or {}).get("outcome", {})
            chunk(state["sessions"][-1], f"permission: {json.dumps(outcome, sort_keys=True)}\n")
            answer(held, {"stopReason": "end_turn"})
        return
    if method == "initialize":
        initialize(rid)
    elif method == "authenticate":
        if params.get("methodId") in ("api-key", "login"):
            state["authed"] = True
            answer(rid, {})
        else:
            error(rid, -32602, f"unknown auth method {params.get('methodId')!r}")
    elif method == "session/new":
        if MODE == "auth" and not state["authed"]:
            error(rid, -32000, "Authentication required")
            return
        sid = f"odd-{len(state['sessions']) + 1}"
        state["sessions"].append(sid)
        answer(rid, {"sessionId": sid})
        if MODE == "rude":
            commands(sid)
    elif method == "session/prompt":
        prompt(rid, params)
    elif method == "session/cancel":
        if MODE == "rude":
            error(rid, -32601, "Method not found: session/cancel")  # rid is None: a notification
            write({"jsonrpc": "2.0", "error": {"code": -32600, "message": "no id here"}})
        held = state.pop("pending_prompt", None)
        if held is not None:
            answer(held, {"stopReason": "cancelled"})
    elif rid is not None:
        error(rid, -32601, f"Method not found: {method}")


def main() -> None:
    if MODE == "exit":
        sys.stderr.write("fatal: no config file\n")
        sys.stderr.flush()
        sys.exit(7)
    if MODE == "echo":
        count = 0
        for line in sys.stdin:
            count += 1
            sys.stdout.write("echo: " + line)
            sys.stdout.flush()
        with open(os.environ["ODD_COUNT_FILE"], "w") as f:
            f.write(str(count))
        return
    for line in sys.stdin:
        if MODE == "silent" or not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message)


if __name__ == "__main__":
    main()
