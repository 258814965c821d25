"""Agent builders, defaults, routing, capability gating and the sync shell."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import reactivex

from rxacp.agent import AcpAgent, PromptContext, SyncPromptContext
from rxacp.errors import AcpCapabilityException
from rxacp.schema import (
    Implementation,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
)
from tests.session.conftest import ScriptedTransport

from .harness import SESSION, AgentHarness, Notes


def new_session_sync(req: NewSessionRequest) -> NewSessionResponse:
    return NewSessionResponse(session_id=f"s-{req.cwd}")


def test_default_initialize_answers_version_1_with_capabilities_derived_from_handlers() -> None:
    h = AgentHarness(
        "sync",
        configure=lambda b: (
            b.agent_info(name="probe", version="2.0")
            .load_session_handler(lambda r: None)
            .list_sessions_handler(lambda r: None)
            .close_session_handler(lambda r: None)
            .logout_handler(lambda r: None)
        ),
    )
    try:
        answer = h.request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}
        )
        result = answer["result"]
        assert result["protocolVersion"] == 1
        assert result["agentInfo"] == {"name": "probe", "version": "2.0"}
        caps = result["agentCapabilities"]
        assert caps["loadSession"] is True
        assert caps["sessionCapabilities"] == {"list": {}, "close": {}}
        assert caps["auth"] == {"logout": {}}
        assert h.agent.client_capabilities is not None
        assert h.agent.client_capabilities.supports_terminal()
        assert not h.agent.client_capabilities.supports_read_text_file()
    finally:
        h.close()


def test_initialize_answers_version_1_when_the_client_asks_for_a_newer_one() -> None:
    h = AgentHarness("async")
    try:
        answer = h.request("initialize", {"protocolVersion": 7})
        assert answer["result"]["protocolVersion"] == 1
    finally:
        h.close()


@pytest.mark.parametrize("version", [-1, 65536, 10**30])
def test_initialize_with_a_protocol_version_outside_uint16_is_invalid_params(version: int) -> None:
    h = AgentHarness("sync")
    try:
        answer = h.request("initialize", {"protocolVersion": version, "clientCapabilities": {}})
        assert answer["error"]["code"] == -32602
        assert "protocolVersion" in answer["error"]["message"] + str(answer["error"].get("data"))
        assert h.agent.client_capabilities is None  # nothing was negotiated
    finally:
        h.close()


@pytest.mark.parametrize("api", ["sync", "async"])
def test_unregistered_methods_get_method_not_found_naming_the_builder_method(api: str) -> None:
    h = AgentHarness(api)
    try:
        answer = h.request("session/load", {"sessionId": "x", "cwd": "/", "mcpServers": []})
        assert answer["error"]["code"] == -32601
        assert "load_session_handler" in answer["error"]["message"]
        answer = h.request("session/prompt", {"sessionId": "x", "prompt": []})
        assert answer["error"]["code"] == -32601
        answer = h.request("_vendor/thing", {})
        assert answer["error"]["code"] == -32601
    finally:
        h.close()


@pytest.mark.parametrize("api", ["sync", "async"])
def test_invalid_params_are_answered_invalid_params_naming_the_field(api: str) -> None:
    handler: Any = (
        new_session_sync if api == "sync" else (lambda r: reactivex.of(new_session_sync(r)))
    )
    h = AgentHarness(api, configure=lambda b: b.new_session_handler(handler))
    try:
        answer = h.request("session/new", {"cwd": 42, "mcpServers": []})
        assert answer["error"]["code"] == -32602
        assert "cwd" in answer["error"]["message"]
        ok = h.request("session/new", {"cwd": "/w", "mcpServers": []})
        assert ok["result"] == {"sessionId": "s-/w"}
    finally:
        h.close()


def test_async_handlers_may_be_coroutines_or_return_plain_values() -> None:
    async def new_session(req: NewSessionRequest) -> NewSessionResponse:
        return NewSessionResponse(session_id="from-coroutine")

    h = AgentHarness(
        "async",
        configure=lambda b: b.new_session_handler(new_session).set_session_mode_handler(
            lambda r: None
        ),
    )
    try:
        assert h.request("session/new", {"cwd": "/", "mcpServers": []})["result"] == {
            "sessionId": "from-coroutine"
        }
        answer = h.request("session/set_mode", {"sessionId": "a", "modeId": "m"})
        assert answer["result"] == {}
    finally:
        h.close()


def test_extension_requests_and_notifications_reach_their_handlers() -> None:
    note = Notes()
    h = AgentHarness(
        "sync",
        configure=lambda b: b.ext_request_handler(
            "_acme/echo", lambda p: {"echo": p}
        ).ext_notification_handler("_acme/note", note),
    )
    try:
        assert h.request("_acme/echo", {"x": 1})["result"] == {"echo": {"x": 1}}
        h.send({"method": "_acme/note", "params": {"n": 1}})
        assert note.arrived.wait(5), "the notification handler never ran"  # on a worker
        assert note.seen == [{"n": 1}]
    finally:
        h.close()
    with pytest.raises(ValueError, match="start with '_'"):
        AcpAgent.sync(ScriptedTransport()).ext_request_handler("acme/echo", lambda p: p)


def test_session_close_cancels_the_active_turn_of_that_session() -> None:
    cancelled = threading.Event()

    def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.on_cancel(cancelled.set)
        ctx.send_message("busy")
        cancelled.wait(5)
        return PromptResponse.end_turn()

    h = AgentHarness(
        "sync",
        configure=lambda b: b.prompt_handler(prompt).close_session_handler(lambda r: None),
    )
    try:
        rid = h.prompt()
        h.next()
        close_id = h.send_request("session/close", {"sessionId": SESSION})
        answers = {}
        for _ in range(2):
            _, msg = h.next_answer()
            answers[msg["id"]] = msg
        assert answers[rid]["result"] == {"stopReason": "cancelled"}
        assert answers[close_id]["result"] == {}
        assert cancelled.is_set()
    finally:
        h.close()


def test_agent_calls_are_gated_on_client_capabilities_and_send_nothing() -> None:
    h = AgentHarness("async", client_capabilities={"fs": {"readTextFile": False}})
    try:
        errors: list[Exception] = []
        h.agent.read_text_file(ReadTextFileRequest(session_id="s", path="/x")).subscribe(
            on_error=errors.append
        )
        assert isinstance(errors[0], AcpCapabilityException)
        assert errors[0].capability == "fs.readTextFile"
        assert h.idle()
    finally:
        h.close()


def test_sync_agent_calls_block_and_return_the_typed_answer() -> None:
    h = AgentHarness("sync", client_capabilities={"fs": {"readTextFile": True}})
    try:
        box: dict[str, Any] = {}

        def call() -> None:
            box["r"] = h.agent.read_text_file(ReadTextFileRequest(session_id="s", path="/x"))

        t = threading.Thread(target=call)
        t.start()
        req = h.next()
        assert req["method"] == "fs/read_text_file"
        h.send({"id": req["id"], "result": {"content": "héllo"}})
        t.join(5)
        assert box["r"].content == "héllo"
    finally:
        h.close()


def test_sync_prompt_context_reads_files_through_the_client() -> None:
    def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.send_message(ctx.read_file("/etc/motd", line=2, limit=3))
        return PromptResponse.end_turn()

    h = AgentHarness(
        "sync",
        configure=lambda b: b.prompt_handler(prompt),
        client_capabilities={"fs": {"readTextFile": True}},
    )
    try:
        rid = h.prompt()
        read = h.next()
        assert read["params"] == {"sessionId": SESSION, "path": "/etc/motd", "line": 2, "limit": 3}
        h.send({"id": read["id"], "result": {"content": "ünïcode"}})
        updates, answer = h.next_answer()
        assert updates[0]["params"]["update"]["content"]["text"] == "ünïcode"
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}
    finally:
        h.close()


def test_ask_permission_is_true_only_when_allow_was_selected() -> None:
    results: list[bool] = []

    def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        results.append(ctx.ask_permission("delete everything"))
        return PromptResponse.end_turn()

    h = AgentHarness("sync", configure=lambda b: b.prompt_handler(prompt))
    try:
        for outcome, _want in (
            ({"outcome": "selected", "optionId": "allow"}, True),
            ({"outcome": "cancelled"}, False),
        ):
            h.prompt()
            ask = h.next()
            assert ask["method"] == "session/request_permission"
            assert [o["optionId"] for o in ask["params"]["options"]] == ["allow", "reject"]
            h.send({"id": ask["id"], "result": {"outcome": outcome}})
            h.next_answer()
        assert results == [True, False]
    finally:
        h.close()


def test_sync_agent_run_returns_when_the_client_disconnects() -> None:
    h = AgentHarness("sync")
    done = threading.Event()

    def run() -> None:
        h.agent.run()
        done.set()

    t = threading.Thread(target=run)
    t.start()
    h.peer.eof()
    assert done.wait(3)
    t.join(3)


def _start_execute(
    prompt: Callable[[PromptRequest, PromptContext], reactivex.Observable[Any]],
) -> tuple[AgentHarness, Any, dict[str, Any]]:
    """An async agent with ``prompt`` and a client with terminals: the prompt is sent, its
    ``terminal/create`` answered with ``t1``; returns the harness, the prompt's id and the
    create request."""
    h = AgentHarness(
        "async",
        configure=lambda b: b.prompt_handler(prompt),
        client_capabilities={"terminal": True},
    )
    rid = h.prompt()
    create = h.next()
    assert create["method"] == "terminal/create"
    h.send({"id": create["id"], "result": {"terminalId": "t1"}})
    return h, rid, create


@pytest.mark.parametrize(
    "release_answer",
    [{"result": {}}, {"error": {"code": -32603, "message": "gone"}}],
    ids=["released", "release-failed"],
)
def test_async_agent_prompt_handler_can_use_when_cancelled_with_execute(
    release_answer: dict[str, Any],
) -> None:
    """``execute`` emits its result once the client answered the release (an error answer to
    the release does not lose the result)."""
    outputs: list[Any] = []

    def prompt(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        answer: reactivex.Observable[Any] = ctx.execute("echo", "hi").pipe(
            reactivex.operators.do_action(outputs.append),
            reactivex.operators.map(lambda r: PromptResponse.end_turn()),
        )
        return answer

    h, rid, create = _start_execute(prompt)
    try:
        assert create["params"]["command"] == "echo" and create["params"]["args"] == ["hi"]
        wait = h.next()
        assert wait["method"] == "terminal/wait_for_exit"
        h.send({"id": wait["id"], "result": {"exitCode": 0}})
        out = h.next()
        assert out["method"] == "terminal/output"
        h.send(
            {
                "id": out["id"],
                "result": {"output": "hi\n", "truncated": False, "exitStatus": {"exitCode": 0}},
            }
        )
        release = h.next()  # the result waits for the client's answer to the release
        assert release["method"] == "terminal/release"
        assert release["params"]["terminalId"] == "t1"
        assert outputs == []
        h.send({"id": release["id"], **release_answer})
        answer = h.next()
        assert answer.get("id") == rid
        assert answer["result"] == {"stopReason": "end_turn"}
        assert outputs[0].output == "hi\n" and outputs[0].exit_code == 0
    finally:
        h.close()


def test_a_cancelled_execute_still_releases_its_terminal() -> None:
    """Cancelling the turn while ``execute`` waits for the command: the release goes out anyway
    (not tied to the disposed turn), and the turn answers ``cancelled``."""

    def prompt(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        ops = reactivex.operators
        return ctx.execute("sleep", "60").pipe(
            ops.map(lambda r: PromptResponse.end_turn()),
            ops.take_until(ctx.when_cancelled()),
            ops.default_if_empty(PromptResponse.cancelled()),
        )

    h, rid, _ = _start_execute(prompt)
    try:
        assert h.next()["method"] == "terminal/wait_for_exit"
        h.cancel()
        before, answer = h.next_answer()
        assert answer.get("id") == rid and answer["result"] == {"stopReason": "cancelled"}
        sent = list(before)
        while not any(m.get("method") == "terminal/release" for m in sent):
            sent.append(h.next())  # bounded: next() raises after its timeout
        release = next(m for m in sent if m.get("method") == "terminal/release")
        assert release["params"] == {"sessionId": SESSION, "terminalId": "t1"}
    finally:
        h.close()


def test_agent_info_requires_a_name_and_version() -> None:
    with pytest.raises(ValueError):
        AcpAgent.sync(ScriptedTransport()).agent_info(name="x")
    AcpAgent.sync(ScriptedTransport()).agent_info(Implementation(name="x", version="1"))
