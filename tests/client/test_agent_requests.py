"""Agent→client requests and notifications: typed handlers, errors, permissions, consumers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject

from rxacp.client import CancellationSignal
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    CreateElicitationResponse,
    CreateTerminalResponse,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionNotification,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)
from rxacp.schema import methods as m

from .._notes import chunk_text
from .conftest import Rig, texts

SID = "sess-1"
NON_ASCII = "naïve café — 日本語 ✓\nline 2 🚀"


def _run(rig: Rig, builder: Any, command: str) -> tuple[str, list[str]]:
    updates: list[Any] = []
    client = builder.session_update_consumer(updates.append).build()
    rig.on_close(client.close)
    answer = client.prompt(PromptRequest.text(SID, command))
    if not isinstance(answer, reactivex.Observable):
        return answer.stop_reason, texts(updates)
    return answer.run().stop_reason, texts(updates)


# ---------------------------------------------------------------------------- fs
def test_async_read_handler_serves_non_ascii_content(rig: Rig) -> None:
    seen: list[ReadTextFileRequest] = []

    def read(req: ReadTextFileRequest) -> reactivex.Observable[ReadTextFileResponse]:
        seen.append(req)
        return reactivex.just(ReadTextFileResponse(content=NON_ASCII))

    builder = rig.async_builder().read_text_file_handler(read)
    assert _run(rig, builder, "read /tmp/a.txt") == ("end_turn", [f"read:{NON_ASCII}"])
    assert seen[0].path == "/tmp/a.txt" and seen[0].session_id == SID


def test_sync_read_handler_runs_off_the_connection_loop(rig: Rig) -> None:
    threads: list[str] = []

    def read(req: ReadTextFileRequest) -> ReadTextFileResponse:
        threads.append(threading.current_thread().name)
        return ReadTextFileResponse(content="ok")

    builder = rig.sync_builder().read_text_file_handler(read)
    assert _run(rig, builder, "read /x") == ("end_turn", ["read:ok"])
    assert "worker" in threads[0]


def test_a_coroutine_handler_answers_too(rig: Rig) -> None:
    async def read(req: ReadTextFileRequest) -> ReadTextFileResponse:
        await asyncio.sleep(0)
        return ReadTextFileResponse(content="from a coroutine")

    builder = rig.async_builder().read_text_file_handler(read)
    assert _run(rig, builder, "read /x")[1] == ["read:from a coroutine"]


def test_a_handler_returning_none_answers_the_empty_response_when_allowed(rig: Rig) -> None:
    builder = rig.sync_builder().write_text_file_handler(lambda req: None)
    assert _run(rig, builder, "write /tmp/out.txt")[1] == ["write:{}"]


def test_a_handler_returning_none_for_a_required_result_is_an_internal_error(rig: Rig) -> None:
    builder = rig.sync_builder().read_text_file_handler(lambda req: None)
    [report] = _run(rig, builder, "read /x")[1]
    assert report.startswith("error:-32603:")
    assert "ReadTextFileResponse has required fields" in report


def test_handler_protocol_errors_keep_their_code_and_message(rig: Rig) -> None:
    def read(req: ReadTextFileRequest) -> ReadTextFileResponse:
        raise AcpProtocolException.resource_not_found(f"no such file: {req.path}")

    builder = rig.sync_builder().read_text_file_handler(read)
    assert _run(rig, builder, "read /nope")[1] == ["error:-32002:no such file: /nope"]


def test_async_handler_errors_keep_their_code_too(rig: Rig) -> None:
    builder = rig.async_builder().read_text_file_handler(
        lambda req: reactivex.throw(AcpProtocolException(-32042, "custom"))
    )
    assert _run(rig, builder, "read /x")[1] == ["error:-32042:custom"]


def test_other_handler_exceptions_are_internal_errors_without_a_traceback(rig: Rig) -> None:
    def read(req: ReadTextFileRequest) -> ReadTextFileResponse:
        raise KeyError("boom")

    builder = rig.sync_builder().read_text_file_handler(read)
    [report] = _run(rig, builder, "read /x")[1]
    assert report.startswith("error:-32603:") and "Traceback" not in report


def test_invalid_params_are_answered_invalid_params(rig: Rig) -> None:
    client = (
        rig.sync_builder()
        .read_text_file_handler(lambda req: ReadTextFileResponse(content="x"))
        .build()
    )
    rig.on_close(client.close)
    client.initialize()
    errors: list[Exception] = []
    done = threading.Event()

    def on_error(error: Exception) -> None:
        errors.append(error)
        done.set()

    rig.agent.session.send_request(m.FS_READ_TEXT_FILE, {"path": 3}).subscribe(on_error=on_error)
    assert done.wait(3)
    assert isinstance(errors[0], AcpProtocolException) and errors[0].code == -32602


@pytest.mark.parametrize(
    ("command", "method", "setter"),
    [
        ("read /x", m.FS_READ_TEXT_FILE, "read_text_file_handler"),
        ("write /x", m.FS_WRITE_TEXT_FILE, "write_text_file_handler"),
        ("terminal", m.TERMINAL_CREATE, "create_terminal_handler"),
        ("elicit", m.ELICITATION_CREATE, "create_elicitation_handler"),
        ("ext", "_test/ping", "ext_request_handler('_test/ping', fn)"),
    ],
)
def test_a_request_without_a_handler_gets_method_not_found_naming_the_builder_method(
    rig: Rig, command: str, method: str, setter: str
) -> None:
    [report] = _run(rig, rig.async_builder(), command)[1]
    assert report.startswith(f"error:-32601:Method not found: {method}") and setter in report


# ---------------------------------------------------------------------------- permissions
@pytest.mark.parametrize("option", ["allow", "reject"])
def test_the_permission_handler_decides(rig: Rig, option: str) -> None:
    builder = rig.sync_builder().request_permission_handler(
        lambda req: RequestPermissionResponse.selected(option)
    )
    assert _run(rig, builder, "permission") == ("end_turn", [f"permission:selected:{option}"])


def test_without_a_permission_handler_permission_is_refused_never_approved(rig: Rig) -> None:
    [report] = _run(rig, rig.async_builder(), "permission")[1]
    assert report.startswith("error:-32601:") and "request_permission_handler" in report
    assert "refused" in report


def test_session_cancel_answers_pending_permission_requests_cancelled_and_disposes_the_handler(
    rig: Rig,
) -> None:
    asked = threading.Event()
    disposed = threading.Event()

    def ask(req: Any) -> reactivex.Observable[RequestPermissionResponse]:
        asked.set()
        return reactivex.never().pipe(ops.finally_action(disposed.set))

    updates: list[Any] = []
    client = (
        rig.async_builder()
        .request_permission_handler(ask)
        .session_update_consumer(updates.append)
        .build()
    )
    rig.on_close(client.close)
    stop = CancellationSignal()
    result: list[Any] = []
    done = threading.Event()
    client.prompt(PromptRequest.text(SID, "permission"), stop).subscribe(
        result.append, on_completed=done.set
    )
    assert asked.wait(3)
    assert client.pending_permission_requests == 1
    stop.cancel()
    assert disposed.wait(3) and done.wait(3)
    assert result[0].stop_reason == "cancelled"
    assert texts(updates) == ["permission:cancelled"]
    assert client.pending_permission_requests == 0
    assert rig.agent.count(m.SESSION_CANCEL) == 1


def test_cancel_only_answers_permission_requests_of_its_own_session(rig: Rig) -> None:
    asked = threading.Event()

    def never_answer(req: Any) -> reactivex.Observable[Any]:
        asked.set()
        return reactivex.never()

    client = rig.async_builder().request_permission_handler(never_answer).build()
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "permission")).subscribe()
    assert asked.wait(3)
    client.cancel("another-session").subscribe()
    client.ext_method("_test/echo", {}).run()  # a marker: the cancel has arrived
    assert rig.agent.count(m.SESSION_CANCEL) == 1
    assert client.pending_permission_requests == 1


def test_the_cancelled_permission_answers_follow_session_cancel_at_once(rig: Rig) -> None:
    """Both are written in one step on the loop: the agent gets ``session/cancel`` first (so it
    knows why the permission was cancelled), and the client cannot read the turn's answer before
    its own cancelled answers are on the wire (before: a flaky WebSocket test under load)."""
    asked = threading.Event()

    def never_answer(req: Any) -> reactivex.Observable[Any]:
        asked.set()
        return reactivex.never()

    client = rig.async_builder().request_permission_handler(never_answer).build()
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "permission")).subscribe()
    assert asked.wait(3)
    client.cancel(SID).subscribe()
    rig.agent.wait_for(
        lambda: any("outcome" in (x.get("result") or {}) for x in rig.agent.received)
    )
    order = [
        "permission answer" if "outcome" in (msg.get("result") or {}) else msg.get("method")
        for msg in rig.agent.received
    ]
    assert order.index(m.SESSION_CANCEL) == order.index("permission answer") - 1


_PERMISSION_PARAMS = {
    "sessionId": SID,
    "toolCall": {"toolCallId": "c"},
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
}


@pytest.mark.parametrize(
    ("handler", "method", "params"),
    [
        ("request_permission_handler", m.SESSION_REQUEST_PERMISSION, _PERMISSION_PARAMS),
        ("read_text_file_handler", m.FS_READ_TEXT_FILE, {"sessionId": SID, "path": "/tmp/x"}),
    ],
    ids=["permission", "read"],
)
def test_agent_cancel_request_disposes_the_client_handler_and_answers_request_cancelled(
    rig: Rig, handler: str, method: str, params: dict[str, Any]
) -> None:
    asked = threading.Event()
    disposed = threading.Event()

    def never_answers(_req: Any) -> reactivex.Observable[Any]:
        asked.set()
        return reactivex.never().pipe(ops.finally_action(disposed.set))

    builder = rig.async_builder()
    getattr(builder, handler)(never_answers)
    client = builder.build()
    rig.on_close(client.close)
    client.initialize().run()
    client.new_session({"cwd": "/tmp", "mcpServers": []}).run()  # the agent asks in it
    subscription = rig.agent.session.send_request(method, params).subscribe()
    assert asked.wait(3)
    subscription.dispose()  # the agent's engine sends $/cancel_request
    assert disposed.wait(3)
    rig.agent.wait_for(
        lambda: any(x.get("error", {}).get("code") == -32800 for x in rig.agent.received)
    )
    assert client.pending_permission_requests == 0


def test_a_read_handler_whose_observable_answers_later_is_answered_then(rig: Rig) -> None:
    later: Subject[ReadTextFileResponse] = Subject()
    asked = threading.Event()

    def read(_req: Any) -> reactivex.Observable[ReadTextFileResponse]:
        asked.set()
        return later

    client = rig.async_builder().read_text_file_handler(read).build()
    rig.on_close(client.close)
    client.initialize().run()
    client.new_session({"cwd": "/tmp", "mcpServers": []}).run()  # the agent asks in it
    answer = rig.agent.session.send_request(
        m.FS_READ_TEXT_FILE, {"sessionId": SID, "path": "/tmp/x"}
    )
    got: list[Any] = []
    answered = threading.Event()

    def on_answer(value: Any) -> None:
        got.append(value)
        answered.set()

    answer.subscribe(on_answer)
    assert asked.wait(3)
    assert got == []
    client.session.run_on_loop(lambda: later.on_next(ReadTextFileResponse(content="late")))
    assert answered.wait(3)
    assert got[0]["content"] == "late"  # the raw answer (no result type given)


def test_a_read_handler_returning_defer_of_just_is_answered_with_its_value(rig: Rig) -> None:
    def read(_req: Any) -> reactivex.Observable[ReadTextFileResponse]:
        return reactivex.defer(lambda _s: reactivex.just(ReadTextFileResponse(content="now")))

    builder = rig.async_builder().read_text_file_handler(read)
    assert _run(rig, builder, "read /tmp/a.txt") == ("end_turn", ["read:now"])


def test_a_read_handler_observable_that_fails_answers_its_error(rig: Rig) -> None:
    def read(_req: Any) -> reactivex.Observable[ReadTextFileResponse]:
        return reactivex.throw(AcpProtocolException.resource_not_found("no /tmp/a.txt"))

    builder = rig.async_builder().read_text_file_handler(read)
    _stop, [report] = _run(rig, builder, "read /tmp/a.txt")
    assert "-32002" in report or "no /tmp/a.txt" in report


# ------------------------------------------------------------------- terminals, elicitation
def _terminal_builder(builder: Any) -> Any:
    return (
        builder.create_terminal_handler(lambda req: CreateTerminalResponse(terminal_id="term-1"))
        .terminal_output_handler(lambda req: TerminalOutputResponse(output="hi\n", truncated=False))
        .wait_for_terminal_exit_handler(lambda req: WaitForTerminalExitResponse(exit_code=0))
        .kill_terminal_handler(lambda req: None)
        .release_terminal_handler(lambda req: None)
    )


def test_all_terminal_handlers_round_trip(rig: Rig) -> None:
    stop_reason, [report] = _run(rig, _terminal_builder(rig.sync_builder()), "terminal")
    assert stop_reason == "end_turn"
    assert report == (
        'terminal:create=term-1;terminal/output={"output": "hi\\n", "truncated": false};'
        'terminal/wait_for_exit={"exitCode": 0};terminal/kill={};terminal/release={}'
    )


def test_the_elicitation_handler_answers(rig: Rig) -> None:
    builder = rig.async_builder().create_elicitation_handler(
        lambda req: reactivex.just(
            CreateElicitationResponse.from_wire({"action": "accept", "content": {"name": "x"}})
        )
    )
    assert _run(rig, builder, "elicit")[1] == ["elicit:accept"]


def test_ext_request_handler_gets_raw_params_and_answers_raw_json(rig: Rig) -> None:
    builder = rig.sync_builder().ext_request_handler("_test/ping", lambda p: {"pong": p["n"]})
    assert _run(rig, builder, "ext")[1] == ['ext:{"pong": 1}']


# ---------------------------------------------------------------------------- notifications
def test_a_consumer_returning_an_observable_holds_the_next_update(rig: Rig) -> None:
    gate: Subject[Any] = Subject()
    first: list[str] = []
    second: list[str] = []

    def slow(note: SessionNotification) -> reactivex.Observable[Any] | None:
        first.append(chunk_text(note))
        return gate if len(first) == 1 else None

    client = (
        rig.async_builder()
        .session_update_consumer(slow)
        .session_update_consumer(lambda n: second.append(chunk_text(n)))
        .build()
    )
    rig.on_close(client.close)
    done = threading.Event()
    client.prompt(PromptRequest.text(SID, "stream 3")).subscribe(on_completed=done.set)
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    assert not done.wait(0.2)  # bounded: the gate holds everything
    assert first == ["0"] and second == []
    client.session.run_on_loop(gate.on_completed)
    assert done.wait(3)
    assert first == second == ["0", "1", "2"]


def _chunk_note() -> Any:
    """An incoming ``session/update`` notification (an agent message chunk ``hi``)."""
    params = {
        "sessionId": SID,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        },
    }
    return type("Note", (), {"params": params})()


def test_consumers_whose_observables_complete_at_once_do_not_hold_the_inbox() -> None:
    # the documented fast path: an Observable that completes while it is subscribed
    # (reactivex.empty(), just(x), defer of those) is finished then and there
    from rxacp.client.handlers import _consumers_handler
    from rxacp.schema import SessionNotification

    order: list[str] = []

    def consumer(name: str, result: Any) -> Any:
        def consume(_note: Any) -> Any:
            order.append(name)
            return result

        return consume

    handle = _consumers_handler(
        SessionNotification,
        [
            consumer("empty", reactivex.empty()),
            consumer("just", reactivex.just(1)),
            consumer("defer", reactivex.defer(lambda _s: reactivex.just(2))),
            consumer("plain", None),
        ],
    )
    note = _chunk_note()
    assert handle(note) is None  # nothing left for the engine to wait on
    assert order == ["empty", "just", "defer", "plain"]


def test_a_consumer_observable_that_completed_at_once_is_still_disposed_so_finally_runs() -> None:
    # reactivex runs finally_action on disposal: the fast path must dispose what it subscribed
    from rxacp.client.handlers import _consumers_handler
    from rxacp.schema import SessionNotification

    cleaned: list[str] = []

    def consume(_note: Any) -> Any:
        return reactivex.empty().pipe(ops.finally_action(lambda: cleaned.append("finally")))

    handle = _consumers_handler(SessionNotification, [consume])
    params = {
        "sessionId": SID,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        },
    }
    note = type("Note", (), {"params": params})()
    assert handle(note) is None
    assert handle(note) is None
    assert cleaned == ["finally", "finally"]


def test_a_consumer_still_working_holds_the_later_consumers_until_it_completes() -> None:
    from rxacp.client.handlers import _consumers_handler
    from rxacp.schema import SessionNotification

    gate: Subject[Any] = Subject()
    order: list[str] = []
    disposed: list[bool] = []
    held = gate.pipe(ops.finally_action(lambda: disposed.append(True)))

    def slow(_note: Any) -> Any:
        order.append("slow")
        return held

    handle = _consumers_handler(
        SessionNotification,
        [slow, lambda _n: order.append("after")],
    )
    note = _chunk_note()
    waiting = handle(note)
    assert waiting is not None and order == ["slow"]
    completed: list[bool] = []
    waiting.subscribe(on_completed=lambda: completed.append(True))
    assert order == ["slow"] and completed == []
    gate.on_next("ignored")
    gate.on_completed()
    assert order == ["slow", "after"] and completed == [True] and disposed == [True]


def test_a_consumer_observable_that_fails_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from rxacp.client.handlers import _consumers_handler
    from rxacp.schema import SessionNotification

    order: list[str] = []
    handle = _consumers_handler(
        SessionNotification,
        [
            lambda _n: reactivex.throw(RuntimeError("consumer Rx bug")),
            lambda _n: order.append("after"),
        ],
    )
    params = {
        "sessionId": SID,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        },
    }
    assert handle(type("Note", (), {"params": params})()) is None
    assert order == ["after"]
    assert "consumer Rx bug" in caplog.text


def test_disposing_a_held_consumer_disposes_its_work() -> None:
    from rxacp.client.handlers import _consumers_handler
    from rxacp.schema import SessionNotification

    disposed: list[bool] = []
    never = reactivex.never().pipe(ops.finally_action(lambda: disposed.append(True)))
    handle = _consumers_handler(SessionNotification, [lambda _n: never])
    params = {
        "sessionId": SID,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        },
    }
    waiting = handle(type("Note", (), {"params": params})())
    assert waiting is not None
    waiting.subscribe().dispose()
    assert disposed == [True]


def test_a_failing_consumer_does_not_stop_the_others(rig: Rig) -> None:
    seen: list[str] = []

    def broken(note: Any) -> None:
        raise RuntimeError("consumer bug")

    builder = rig.async_builder().session_update_consumer(broken)
    builder.session_update_consumer(lambda n: seen.append(chunk_text(n)))
    client = builder.build()
    rig.on_close(client.close)
    assert client.prompt(PromptRequest.text(SID, "stream 2")).run().stop_reason == "end_turn"
    assert seen == ["0", "1"]


def test_elicitation_complete_and_ext_notifications_reach_their_consumers(rig: Rig) -> None:
    completed: list[Any] = []
    notes: list[Any] = []
    both = threading.Event()

    def on_note(params: Any) -> None:
        notes.append(params)
        both.set()

    client = (
        rig.async_builder()
        .elicitation_complete_consumer(lambda n: completed.append(n.elicitation_id))
        .ext_notification_handler("_test/note", on_note)
        .build()
    )
    rig.on_close(client.close)
    client.initialize().run()
    rig.agent.session.send_notification(m.ELICITATION_COMPLETE, {"elicitationId": "e-1"})
    rig.agent.session.send_notification("_test/note", {"k": "v"})
    assert both.wait(3)
    assert completed == ["e-1"] and notes == [{"k": "v"}]
