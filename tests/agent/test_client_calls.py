"""The agent→client calls: one surface from the method table on all four agent-side APIs."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex

from rxacp.agent import AcpAsyncAgent, AcpSyncAgent, PromptContext, SyncPromptContext
from rxacp.agent.calls import AsyncClientCalls, Request
from rxacp.schema import (
    CreateTerminalResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    TerminalOutputRequest,
)
from rxacp.schema import methods as m
from tests.agent.harness import SESSION, AgentHarness

SURFACES = (AcpAsyncAgent, AcpSyncAgent, PromptContext, SyncPromptContext)
CLIENT_METHODS = [
    spec.python_name
    for spec in m.methods_for_side("client")
    if spec.side == "client" and spec.name != m.SESSION_UPDATE
]


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.__name__)
def test_every_stable_agent_to_client_method_is_a_table_call_of_every_surface(
    surface: type,
) -> None:
    calls = {name: getattr(surface, name, None) for name in CLIENT_METHODS}
    assert {name: getattr(c, "spec", None) for name, c in calls.items()} == {
        name: m.METHODS[spec_name]
        for name, spec_name in ((s.python_name, s.name) for s in m.METHODS.values())
        if name in calls
    }


def test_the_calls_are_documented_from_the_method_table() -> None:
    for name in CLIENT_METHODS:
        spec = getattr(AsyncClientCalls, name).spec
        for bound_doc in (
            getattr(AsyncClientCalls, name)._fn.__doc__,
            getattr(SyncPromptContext, name)._fn.__doc__,
        ):
            assert bound_doc.startswith(f"``{spec.name}``")
            if spec.capability:
                assert f"needs ``{spec.capability}``" in bound_doc


def test_a_call_whose_declared_types_disagree_with_the_table_is_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="disagree with the method table"):
        Request(m.FS_READ_TEXT_FILE, TerminalOutputRequest, ReadTextFileResponse)


def test_a_call_named_unlike_its_method_is_refused_at_class_creation() -> None:
    call = Request(m.FS_READ_TEXT_FILE, ReadTextFileRequest, ReadTextFileResponse)
    with pytest.raises((TypeError, RuntimeError)) as info:  # 3.11 wraps it in RuntimeError
        type("Drifted", (), {"read_file": call})
    assert "Drifted.read_file: fs/read_text_file is called read_text_file" in str(
        info.value.__cause__ or info.value
    )


def _answer_next(h: AgentHarness, method: str, result: dict[str, Any]) -> dict[str, Any]:
    msg = h.next()
    assert msg["method"] == method
    h.send({"id": msg["id"], "result": result})
    return msg


def test_the_async_agent_takes_the_request_or_its_fields_as_keywords() -> None:
    h = AgentHarness("async", client_capabilities={"fs": {"readTextFile": True}})
    try:
        got: list[ReadTextFileResponse] = []
        h.agent.read_text_file(session_id="s", path="/a", line=3).subscribe(got.append)
        sent = _answer_next(h, "fs/read_text_file", {"content": "A"})
        assert sent["params"] == {"sessionId": "s", "path": "/a", "line": 3}
        h.agent.read_text_file(ReadTextFileRequest(session_id="s", path="/b")).subscribe(got.append)
        sent = _answer_next(h, "fs/read_text_file", {"content": "B"})
        assert sent["params"] == {"sessionId": "s", "path": "/b"}
        h.flush()
        assert [r.content for r in got] == ["A", "B"]
    finally:
        h.close()


def test_the_sync_agent_call_blocks_and_returns_the_response_built_from_keywords() -> None:
    h = AgentHarness("sync", client_capabilities={"terminal": True})
    try:
        box: dict[str, CreateTerminalResponse] = {}
        t = threading.Thread(
            target=lambda: box.setdefault(
                "r", h.agent.create_terminal(session_id="s", command="ls", args=["-l"])
            )
        )
        t.start()
        sent = _answer_next(h, "terminal/create", {"terminalId": "t9"})
        t.join(30)
        assert sent["params"] == {"sessionId": "s", "command": "ls", "args": ["-l"]}
        assert box["r"].terminal_id == "t9"
    finally:
        h.close()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: a.terminal_output("t1"), "takes a TerminalOutputRequest"),
        (
            lambda a: a.terminal_output(session_id="s", terminalid="t1"),
            r"unknown field.*terminalid",
        ),
        (
            lambda a: a.terminal_output(
                TerminalOutputRequest(session_id="s", terminal_id="t"), session_id="s"
            ),
            "a request or keywords, not both",
        ),
    ],
    ids=["positional-id", "misspelt-field", "request-and-keywords"],
)
def test_a_call_with_the_wrong_arguments_raises_type_error_and_sends_nothing(
    call: Any, message: str
) -> None:
    h = AgentHarness("async", client_capabilities={"terminal": True})
    try:
        with pytest.raises(TypeError, match=message):
            call(h.agent)
        assert h.idle()
    finally:
        h.close()


def test_a_context_call_defaults_the_session_and_belongs_to_the_turn() -> None:
    def prompt(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[PromptResponse]:
        return ctx.terminal_output(terminal_id="t1").pipe(
            reactivex.operators.map(lambda _r: PromptResponse.end_turn())
        )

    h = AgentHarness(
        "async",
        configure=lambda b: b.prompt_handler(prompt),
        client_capabilities={"terminal": True},
    )
    try:
        h.prompt()
        sent = h.next()
        assert sent["method"] == "terminal/output"
        assert sent["params"] == {"sessionId": SESSION, "terminalId": "t1"}
        h.cancel()
        # the turn's cancellation disposes its pending call: $/cancel_request for it
        cancel = h.next()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": sent["id"]},
        }
        _, answer = h.next_answer()
        assert answer["result"] == {"stopReason": "cancelled"}
    finally:
        h.close()


def test_a_sync_context_call_and_helper_block_with_the_same_names_as_the_async_ones() -> None:
    seen: list[Any] = []

    def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        seen.append(ctx.read_text_file(path="/x").content)
        seen.append(ctx.read_file("/y"))
        ctx.write_file("/z", "new")
        return PromptResponse.end_turn()

    h = AgentHarness(
        "sync",
        configure=lambda b: b.prompt_handler(prompt),
        client_capabilities={"fs": {"readTextFile": True, "writeTextFile": True}},
    )
    try:
        rid = h.prompt()
        assert _answer_next(h, "fs/read_text_file", {"content": "X"})["params"] == {
            "sessionId": SESSION,
            "path": "/x",
        }
        _answer_next(h, "fs/read_text_file", {"content": "Y"})
        written = _answer_next(h, "fs/write_text_file", {})
        assert written["params"] == {"sessionId": SESSION, "path": "/z", "content": "new"}
        _, answer = h.next_answer()
        assert answer["id"] == rid and answer["result"] == {"stopReason": "end_turn"}
        assert seen == ["X", "Y"]
    finally:
        h.close()


def test_a_blocking_agent_call_on_the_connections_event_loop_raises_instead_of_deadlocking() -> (
    None
):
    h = AgentHarness("sync", client_capabilities={"fs": {"readTextFile": True}})
    try:
        errors: list[BaseException] = []

        def on_loop() -> None:
            try:
                h.agent.read_text_file(session_id="s", path="/x")
            except RuntimeError as exc:
                errors.append(exc)

        h.agent.session.run_on_loop(on_loop)
        h.flush()
        assert len(errors) == 1 and "event loop" in str(errors[0])
        assert h.idle()
    finally:
        h.close()


def test_complete_elicitation_is_a_notification_on_every_surface_gated_on_its_capability() -> None:
    h = AgentHarness("async", client_capabilities={"elicitation": {"url": {}}})
    try:
        h.agent.complete_elicitation(elicitation_id="e1")
        assert h.next() == {
            "jsonrpc": "2.0",
            "method": "elicitation/complete",
            "params": {"elicitationId": "e1"},
        }
    finally:
        h.close()
