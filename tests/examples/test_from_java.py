"""The samples ported from the Java SDK (``examples/from_java/``) run over stdio, with the Java
originals' behaviour asserted on the wire (issue 19.10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import pytest

from tests.agent.raw_peer import ROOT, WAIT, RawPeer

pytestmark = pytest.mark.timeout(90)

SAMPLES = os.path.join(ROOT, "examples", "from_java")


def _agent(peers: list[RawPeer], name: str, **kw: Any) -> RawPeer:
    peer = RawPeer([sys.executable, os.path.join(SAMPLES, name)], **kw)
    peers.append(peer)
    return peer


def _prompt(peer: RawPeer, rid: int, sid: str, text: str) -> None:
    peer.send(
        {
            "id": rid,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
        }
    )


def _kind(frame: dict[str, Any]) -> str:
    if frame.get("method") == "session/update":
        update = frame["params"]["update"]
        status = update.get("status")
        kind: str = update["sessionUpdate"]
        return kind + (f":{status}" if status else "")
    return frame.get("method") or "answer"


# ------------------------------------------------------------------------- sync_agent.py
@pytest.mark.parametrize("allow", [True, False])
def test_sync_agent_streams_a_thought_a_tool_call_asks_permission_then_writes(
    peers: list[RawPeer], allow: bool
) -> None:
    peer = _agent(peers, "sync_agent.py")
    caps = {"fs": {"readTextFile": False, "writeTextFile": True}}
    peer.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": caps})
    sid = peer.call(1, "session/new", {"cwd": "/tmp", "mcpServers": []})["result"]["sessionId"]
    _prompt(peer, 2, sid, "write /tmp/notes.txt hello from java")
    kinds: list[str] = []
    written: list[Any] = []
    while True:
        frame = peer.frames.get(timeout=WAIT)
        kinds.append(_kind(frame))
        if frame.get("method") == "session/request_permission":
            options = frame["params"]["options"]
            wanted = "allow_once" if allow else "reject_once"
            chosen = next(o["optionId"] for o in options if o["kind"] == wanted)
            outcome = {"outcome": "selected", "optionId": chosen}
            peer.send({"id": frame["id"], "result": {"outcome": outcome}})
        elif frame.get("method") == "fs/write_text_file":
            written.append(frame["params"])
            peer.send({"id": frame["id"], "result": {}})
        elif frame.get("id") == 2:
            assert frame["result"] == {"stopReason": "end_turn"}
            break
    if allow:
        assert kinds == [
            "agent_thought_chunk",
            "tool_call:pending",
            "session/request_permission",
            "tool_call_update:in_progress",
            "fs/write_text_file",
            "tool_call_update:completed",
            "agent_message_chunk",
            "answer",
        ]
        assert written == [
            {"sessionId": sid, "path": "/tmp/notes.txt", "content": "hello from java"}
        ]
    else:
        assert kinds == [
            "agent_thought_chunk",
            "tool_call:pending",
            "session/request_permission",
            "tool_call_update:failed",
            "agent_message_chunk",
            "answer",
        ]
        assert written == []


# ------------------------------------------------------------------ async_client_cancel.py
def test_async_client_cancels_then_sees_minus_32600_during_the_grace_period_and_max_duration() -> (
    None
):
    with tempfile.TemporaryDirectory() as tmp:
        wire = os.path.join(tmp, "wire.jsonl")
        env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
        run = subprocess.run(
            [sys.executable, os.path.join(SAMPLES, "async_client_cancel.py"), "--log-wire", wire],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == [
            "cancel: answer cancelled",
            "grace: in-between prompt -32600, answer cancelled after the 2 s grace",
            "max duration: error -32800 {'maxPromptDuration': 'PT2S'}",
        ]
        with open(wire, encoding="utf-8") as f:
            frames = [json.loads(line) for line in f]
    seen = [
        (f["direction"], f["message"].get("method"), f["message"].get("id"), f["message"])
        for f in frames
        if f["message"].get("method") != "session/update"
    ]
    prompts = [m["id"] for d, method, _, m in seen if method == "session/prompt"]
    slow, stubborn, between, too_long = prompts
    order = [(d, method or "answer", rid) for d, method, rid, _ in seen]
    # scene 1: prompt, session/cancel, then its answer
    i = order.index(("in", "session/prompt", slow))
    assert order[i + 1 : i + 3] == [("in", "session/cancel", None), ("out", "answer", slow)]
    # scene 2: session/cancel, the in-between prompt refused, then the SDK's answer (grace)
    i = order.index(("in", "session/prompt", stubborn))
    assert order[i + 1 : i + 5] == [
        ("in", "session/cancel", None),
        ("in", "session/prompt", between),
        ("out", "answer", between),
        ("out", "answer", stubborn),
    ]
    answers = {rid: m for d, method, rid, m in seen if d == "out" and method is None}
    assert answers[slow]["result"] == {"stopReason": "cancelled"}
    assert answers[between]["error"]["code"] == -32600
    assert answers[stubborn]["result"] == {"stopReason": "cancelled"}
    assert answers[too_long]["error"]["code"] == -32800
    assert answers[too_long]["error"]["data"] == {"maxPromptDuration": "PT2S"}


# ------------------------------------------------------------------------ annotated_agent.py
def test_annotated_agent_modes_prompt_cancel_exception_handler_and_interceptor(
    peers: list[RawPeer],
) -> None:
    peer = _agent(peers, "annotated_agent.py", stderr=subprocess.PIPE)
    peer.call(0, "initialize", {"protocolVersion": 1})
    created = peer.call(1, "session/new", {"cwd": "/tmp", "mcpServers": []})["result"]
    sid = created["sessionId"]
    assert created["modes"]["currentModeId"] == "chat"
    assert peer.call(2, "session/set_mode", {"sessionId": sid, "modeId": "code"})["result"] == {}
    bad = peer.call(3, "session/set_mode", {"sessionId": sid, "modeId": "turbo"})["error"]
    assert bad["code"] == -32602 and "turbo" in bad["message"]

    _prompt(peer, 4, sid, "count 3")
    texts = []
    while (frame := peer.frames.get(timeout=WAIT)).get("id") != 4:
        texts.append(frame["params"]["update"]["content"]["text"])
    assert texts == ["[code] 1", "[code] 2", "[code] 3"]
    assert frame["result"] == {"stopReason": "end_turn"}

    _prompt(peer, 5, sid, "fail")  # ValueError -> @exception_handler -> refusal
    assert peer.frames.get(timeout=WAIT) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"stopReason": "refusal"},
    }

    _prompt(peer, 6, sid, "count 50")
    assert peer.frames.get(timeout=WAIT)["method"] == "session/update"
    peer.send({"method": "session/cancel", "params": {"sessionId": sid}})
    while (frame := peer.frames.get(timeout=WAIT)).get("id") != 6:
        assert frame["method"] == "session/update"
    assert frame["result"] == {"stopReason": "cancelled"}

    peer.close()
    assert peer.proc.stderr is not None
    stderr = peer.proc.stderr.read().decode()
    peer.proc.stderr.close()
    # the interceptor saw every handler call (the @cancel one too)
    assert "'session/prompt': 3" in stderr and "'session/cancel': 1" in stderr
    assert "'session/set_mode': 2" in stderr and "'session/new': 1" in stderr
