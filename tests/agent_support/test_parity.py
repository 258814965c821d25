"""The same client script against a builder-API agent and a decorator agent: identical wire."""

from __future__ import annotations

import threading
from typing import Any

from rxacp.agent import AcpAgentBuilder, SyncPromptContext
from rxacp.agent.support import (
    AcpAgentSupport,
    acp_agent,
    cancel,
    new_session,
    prompt,
)
from rxacp.schema import (
    CancelNotification,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
    ToolCallUpdate,
)
from tests.agent.harness import SESSION, AgentHarness
from tests.session.conftest import ScriptedTransport

from .harness import SupportHarness


def _text(req: PromptRequest) -> str:
    return "".join(getattr(block, "text", "") for block in req.prompt)


def _permission(session_id: str) -> RequestPermissionRequest:
    return RequestPermissionRequest(
        session_id=session_id,
        tool_call=ToolCallUpdate(tool_call_id="call-write", title="write /tmp/x"),
        options=[
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ],
    )


def run_prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse | str:
    """The prompt behaviour both agents share; returns a str for the last echo chunk."""
    text = _text(req)
    if text.startswith("echo "):
        for word in text.split()[1:-1]:
            ctx.send_message(word)
        return text.split()[-1]
    if text == "wait":
        stop = threading.Event()
        ctx.on_cancel(stop.set)
        ctx.send_message("waiting")
        stop.wait(5)
        return PromptResponse.end_turn()
    if text == "permission":
        answer = ctx.request_permission(_permission(ctx.session_id))
        ctx.send_message(f"chose {answer.outcome.to_wire()}")
        return PromptResponse.end_turn()
    raise ValueError(text)


def script(h: AgentHarness) -> list[dict[str, Any]]:
    """Play the client; return every message the agent wrote, in order."""
    wire: list[dict[str, Any]] = []

    def read() -> dict[str, Any]:
        msg = h.next()
        wire.append(msg)
        return msg

    h.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    read()
    h.send_request("session/new", {"cwd": "/w", "mcpServers": []})
    read()
    rid = h.prompt("echo one two three")
    while "id" not in read() or wire[-1].get("id") != rid:
        pass
    rid = h.prompt("wait")
    assert read()["method"] == "session/update"
    h.cancel()
    assert read() == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    rid = h.prompt("permission")
    ask = read()
    assert ask["method"] == "session/request_permission"
    h.send({"id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}})
    while wire[-1].get("id") != rid:
        read()
    h.send_request("session/load", {"sessionId": "x", "cwd": "/", "mcpServers": []})
    read()
    h.send_request("_vendor/unknown", {})
    read()
    assert h.idle()
    return wire


def test_builder_and_decorator_agents_write_identical_wire_traffic() -> None:
    cancels: dict[str, list[str]] = {"builder": [], "decorators": []}

    def builder_prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        result = run_prompt(req, ctx)
        if isinstance(result, str):
            ctx.send_message(result)
            return PromptResponse.end_turn()
        return result

    def configure(b: AcpAgentBuilder[Any]) -> None:
        b.agent_info(name="parity", version="1.0.0")
        b.new_session_handler(lambda req: NewSessionResponse(session_id=SESSION))
        b.prompt_handler(builder_prompt)
        b.cancel_handler(lambda note: cancels["builder"].append(note.session_id))

    @acp_agent(name="parity", version="1.0.0")
    class ParityAgent:
        @new_session
        def create(self, req: NewSessionRequest) -> NewSessionResponse:
            return NewSessionResponse(session_id=SESSION)

        @prompt
        def answer(self, req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse | str:
            return run_prompt(req, ctx)

        @cancel
        def stop(self, note: CancelNotification) -> None:
            cancels["decorators"].append(note.session_id)

    built = AgentHarness("sync", configure=configure)
    try:
        builder_wire = script(built)
    finally:
        built.close()
    decorated = SupportHarness(ParityAgent())
    try:
        decorator_wire = script(decorated)
    finally:
        decorated.close()

    assert decorator_wire == builder_wire
    assert [m.get("method") for m in builder_wire].count("session/update") == 5
    assert builder_wire[0]["result"]["agentInfo"] == {"name": "parity", "version": "1.0.0"}
    assert builder_wire[-2]["error"]["code"] == -32601
    assert "load_session_handler" in builder_wire[-2]["error"]["message"]
    assert cancels == {"builder": [SESSION], "decorators": [SESSION]}


def test_the_support_builder_accepts_an_agent_class_and_builds_on_its_own_transport() -> None:
    @acp_agent(name="cls", version="0")
    class Empty:
        pass

    agent = AcpAgentSupport.builder().agent(Empty).transport(ScriptedTransport()).build()
    try:
        assert agent.active_turns == 0
    finally:
        agent.close()
