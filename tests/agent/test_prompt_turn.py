"""The prompt-turn rules (DESIGN §5, docs/cancellation.md), each on the wire, sync and async."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.subject import Subject

from rxacp.agent import PromptContext, SyncPromptContext
from rxacp.errors import AcpProtocolException
from rxacp.schema import PromptRequest, PromptResponse
from rxacp.session import AcpObservable

from .harness import SESSION, AgentHarness

API = ["sync", "async"]


class Gate:
    """Lets a sync handler block until the test opens it (bounded)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def wait(self) -> None:
        assert self.event.wait(5), "gate never opened"

    def open(self) -> None:
        self.event.set()


def cooperative(
    api: str, reply: PromptResponse | None = None, fail: Exception | None = None
) -> Any:
    """Sends one update, waits for cancellation, then returns ``reply`` (or raises ``fail``)."""
    answer = reply or PromptResponse.end_turn()
    if api == "sync":

        def sync_handler(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
            ctx.send_message("working")
            cancelled = threading.Event()
            ctx.on_cancel(cancelled.set)
            assert cancelled.wait(5)
            assert ctx.is_cancelled()
            if fail is not None:
                raise fail
            return answer

        return sync_handler

    def async_handler(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        ctx.send_message("working")

        def after(_: Any) -> Any:
            assert ctx.is_cancelled()
            if fail is not None:
                raise fail
            return answer

        return ctx.when_cancelled().pipe(ops.map(after))

    return async_handler


def never_answers(api: str, gate: Gate) -> Any:
    """Ignores cancellation entirely (stubborn)."""
    if api == "sync":

        def sync_handler(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
            ctx.send_message("stubborn")
            gate.wait()
            return PromptResponse.end_turn()

        return sync_handler

    def async_handler(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        ctx.send_message("stubborn")
        return reactivex.never()

    return async_handler


def make(harnesses: list[AgentHarness], api: str, handler: Any, **kw: Any) -> AgentHarness:
    h = AgentHarness(api, configure=lambda b: b.prompt_handler(handler), **kw)
    harnesses.append(h)
    return h


def stubborn_turn(
    harnesses: list[AgentHarness], api: str, id: Any = None, **options: Any
) -> tuple[Gate, AgentHarness, Any]:
    """An agent whose prompt turn (id ``id``) is under way with a handler that ignores
    cancellation until the gate opens; returns the gate, the harness and the prompt's id."""
    gate = Gate()
    h = make(harnesses, api, never_answers(api, gate), **options)
    rid = h.prompt(id=id)
    h.next()
    return gate, h, rid


def is_update(msg: dict[str, Any], text: str) -> bool:
    return (
        msg.get("method") == "session/update" and msg["params"]["update"]["content"]["text"] == text
    )


@pytest.mark.parametrize("api", API)
def test_session_cancel_answers_cancelled_even_when_the_handler_returns_end_turn(
    harnesses: list[AgentHarness], api: str
) -> None:
    h = make(harnesses, api, cooperative(api))
    rid = h.prompt()
    assert is_update(h.next(), "working")
    h.cancel()
    updates, answer = h.next_answer()
    assert updates == []
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}


@pytest.mark.parametrize("api", API)
def test_after_session_cancel_a_handler_failure_is_answered_cancelled(
    harnesses: list[AgentHarness], api: str
) -> None:
    h = make(harnesses, api, cooperative(api, fail=RuntimeError("interrupted")))
    rid = h.prompt()
    h.next()
    h.cancel()
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}


@pytest.mark.parametrize("api", API)
def test_cancelled_answer_keeps_the_meta_of_the_handlers_response(
    harnesses: list[AgentHarness], api: str
) -> None:
    reply = PromptResponse(stop_reason="end_turn", meta={"tokens": 42})
    h = make(harnesses, api, cooperative(api, reply=reply))
    rid = h.prompt()
    h.next()
    h.cancel()
    _, answer = h.next_answer()
    assert answer["id"] == rid
    assert answer["result"] == {"stopReason": "cancelled", "_meta": {"tokens": 42}}


@pytest.mark.parametrize("api", API)
def test_before_cancel_a_handler_failure_is_answered_with_its_own_code(
    harnesses: list[AgentHarness], api: str
) -> None:
    def sync_h(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        raise AcpProtocolException(-32002, "no such file", {"path": "/x"})

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        return reactivex.throw(RuntimeError("bug"))

    h = make(harnesses, api, sync_h if api == "sync" else async_h)
    rid = h.prompt()
    answer = h.next()
    assert answer["id"] == rid
    expected = -32002 if api == "sync" else -32603
    assert answer["error"]["code"] == expected


@pytest.mark.parametrize("api", API)
def test_a_second_prompt_on_a_busy_session_gets_invalid_request_even_after_cancel(
    harnesses: list[AgentHarness], api: str
) -> None:
    gate, h, _ = stubborn_turn(harnesses, api)
    second = h.prompt()
    answer = h.next()
    assert answer["id"] == second and answer["error"]["code"] == -32600
    h.cancel()
    third = h.prompt()
    answer = h.next()
    assert answer["id"] == third and answer["error"]["code"] == -32600
    gate.open()


@pytest.mark.parametrize("api", API)
def test_two_sessions_run_turns_concurrently_and_cancelling_one_leaves_the_other(
    harnesses: list[AgentHarness], api: str
) -> None:
    h = make(harnesses, api, cooperative(api))
    a = h.prompt(session="A")
    b = h.prompt(session="B")
    first, second = h.next(), h.next()
    assert {first["params"]["sessionId"], second["params"]["sessionId"]} == {"A", "B"}
    h.cancel("A")
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": a, "result": {"stopReason": "cancelled"}}
    assert h.idle()
    assert h.agent.active_turns == 1
    h.cancel("B")
    _, answer = h.next_answer()
    assert answer["id"] == b


@pytest.mark.parametrize("api", API)
def test_grace_period_answers_cancelled_for_a_stubborn_handler_in_virtual_time(
    harnesses: list[AgentHarness], api: str
) -> None:
    gate, h, rid = stubborn_turn(harnesses, api, grace=10.0)
    h.cancel()
    h.advance(9.0)
    h.cancel()  # a repeated cancel does not extend the grace period
    assert h.idle()
    h.advance(1.5)
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    assert h.agent.active_turns == 0
    gate.open()
    assert h.idle(), "the abandoned handler's late answer must be discarded"
    nxt = h.prompt()
    assert h.next()["method"] == "session/update"
    h.cancel()
    h.advance(10.5)
    _, answer = h.next_answer()
    assert answer["id"] == nxt


@pytest.mark.parametrize("api", API)
def test_zero_grace_period_disables_the_rescue(harnesses: list[AgentHarness], api: str) -> None:
    gate, h, _ = stubborn_turn(harnesses, api, grace=None)
    h.cancel()
    h.advance(3600)
    assert h.idle() and h.agent.active_turns == 1
    gate.open()


@pytest.mark.parametrize("api", API)
def test_max_prompt_duration_answers_request_cancelled_with_iso_duration(
    harnesses: list[AgentHarness], api: str
) -> None:
    gate, h, rid = stubborn_turn(harnesses, api, max_duration=1800.0)
    h.advance(1799)
    assert h.idle()
    h.advance(2)
    _, answer = h.next_answer()
    assert answer["id"] == rid
    assert answer["error"]["code"] == -32800
    assert answer["error"]["data"] == {"maxPromptDuration": "PT30M"}
    gate.open()


@pytest.mark.parametrize("api", API)
def test_max_prompt_duration_answers_cancelled_when_already_cancelling(
    harnesses: list[AgentHarness], api: str
) -> None:
    gate, h, rid = stubborn_turn(harnesses, api, grace=100.0, max_duration=30.0)
    h.advance(10)
    h.cancel()
    h.advance(25)
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    gate.open()


@pytest.mark.parametrize("api", API)
def test_cancel_request_for_the_prompt_answers_request_cancelled_at_once(
    harnesses: list[AgentHarness], api: str
) -> None:
    gate, h, rid = stubborn_turn(harnesses, api, id="p-1")
    h.cancel_request("p-1")
    _, answer = h.next_answer()
    assert answer["id"] == rid and answer["error"]["code"] == -32800
    assert h.agent.active_turns == 0
    gate.open()
    assert h.idle()


@pytest.mark.parametrize("api", API)
def test_cancel_request_after_session_cancel_answers_cancelled(
    harnesses: list[AgentHarness], api: str
) -> None:
    gate, h, rid = stubborn_turn(harnesses, api)
    h.cancel()
    h.flush()
    h.cancel_request(rid)
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    gate.open()


@pytest.mark.parametrize("api", API)
def test_session_cancel_without_an_active_turn_has_no_answer_and_no_effect(
    harnesses: list[AgentHarness], api: str
) -> None:
    def quick_sync(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        return PromptResponse.end_turn()

    def quick_async(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        return reactivex.of(PromptResponse.end_turn())

    h = make(harnesses, api, quick_sync if api == "sync" else quick_async)
    h.cancel()
    assert h.idle()
    rid = h.prompt()
    assert h.next() == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}


@pytest.mark.parametrize("api", API)
def test_all_triggers_look_the_same_from_inside_the_handler(
    harnesses: list[AgentHarness], api: str
) -> None:
    seen: list[tuple[bool, bool, bool]] = []
    done = threading.Event()

    def sync_h(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        called = threading.Event()
        ctx.on_cancel(called.set)
        ctx.send_message("go")
        assert called.wait(5)
        late: list[bool] = []
        ctx.on_cancel(lambda: late.append(True))  # already cancelled: runs at once
        seen.append((ctx.is_cancelled(), called.is_set(), bool(late)))
        done.set()
        return PromptResponse.end_turn()

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        ctx.send_message("go")
        called: list[bool] = []
        ctx.on_cancel(lambda: called.append(True))

        def record(_: Any) -> None:
            late: list[str] = []
            ctx.when_cancelled().subscribe(late.append)  # late subscriber still sees it
            seen.append((ctx.is_cancelled(), bool(called), bool(late)))
            done.set()

        # Observed outside the handler's own chain: $/cancel_request and the maximum duration
        # dispose that chain before the signal fires (the SDK's answer is decided first).
        ctx.when_cancelled().subscribe(record)
        return reactivex.never()

    triggers = ["session/cancel", "$/cancel_request", "grace", "max"]
    for trigger in triggers:
        done.clear()
        h = make(
            harnesses,
            api,
            sync_h if api == "sync" else async_h,
            grace=5.0 if trigger == "grace" else 60.0,
            max_duration=5.0 if trigger == "max" else None,
        )
        rid = h.prompt()
        h.next()
        if trigger == "session/cancel":
            h.cancel()
        elif trigger == "$/cancel_request":
            h.cancel_request(rid)
        elif trigger == "grace":
            h.cancel()
        else:
            h.advance(6)
        assert done.wait(5), trigger
    assert seen == [(True, True, True)] * len(triggers)


@pytest.mark.parametrize("api", API)
def test_connection_closing_cancels_the_running_turn(
    harnesses: list[AgentHarness], api: str
) -> None:
    cancelled = threading.Event()

    def sync_h(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.on_cancel(cancelled.set)
        ctx.send_message("x")
        cancelled.wait(5)
        return PromptResponse.end_turn()

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        ctx.on_cancel(cancelled.set)
        ctx.send_message("x")
        return reactivex.never()

    h = make(harnesses, api, sync_h if api == "sync" else async_h)
    h.prompt()
    h.next()
    h.peer.eof()
    assert cancelled.wait(2)
    assert h.agent.session.wait_closed(2)


@pytest.mark.parametrize("api", API)
def test_no_update_is_written_after_the_answer(harnesses: list[AgentHarness], api: str) -> None:
    gate = Gate()
    finished = threading.Event()
    ctx_box: list[Any] = []

    def sync_h(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.send_message("before")
        gate.wait()
        ctx.send_message("after the answer")
        finished.set()
        return PromptResponse.end_turn()

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        ctx_box.append(ctx)
        ctx.send_message("before")
        return reactivex.never()

    h = make(harnesses, api, sync_h if api == "sync" else async_h, grace=1.0)
    rid = h.prompt()
    assert is_update(h.next(), "before")
    h.cancel()
    h.advance(2)
    _, answer = h.next_answer()
    assert answer["id"] == rid
    if api == "sync":
        gate.open()
        assert finished.wait(5)
    else:
        ctx_box[0].send_message("after the answer")
    assert h.idle()


@pytest.mark.parametrize("api", API)
def test_updates_sent_before_the_answer_are_written_before_it(
    harnesses: list[AgentHarness], api: str
) -> None:
    def sync_h(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        for i in range(200):
            ctx.send_message(str(i))
        return PromptResponse.end_turn()

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        for i in range(200):
            ctx.send_message(str(i))
        return reactivex.of(PromptResponse.end_turn())

    h = make(harnesses, api, sync_h if api == "sync" else async_h)
    rid = h.prompt()
    updates, answer = h.next_answer()
    assert [u["params"]["update"]["content"]["text"] for u in updates] == [
        str(i) for i in range(200)
    ]
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}


@pytest.mark.parametrize("api", API)
def test_cancellation_cascades_to_pending_client_requests(
    harnesses: list[AgentHarness], api: str
) -> None:
    errors: list[Exception] = []

    def sync_h(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        try:
            ctx.read_file("/tmp/x")
        except AcpProtocolException as exc:
            errors.append(exc)
        return PromptResponse.end_turn()

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        answer: reactivex.Observable[Any] = ctx.read_file("/tmp/x").pipe(
            ops.do_action(on_error=errors.append),
            ops.map(lambda _: PromptResponse.end_turn()),
            ops.catch(reactivex.of(PromptResponse.end_turn())),
        )
        return answer

    h = make(
        harnesses,
        api,
        sync_h if api == "sync" else async_h,
        client_capabilities={"fs": {"readTextFile": True}},
    )
    rid = h.prompt()
    read = h.next()
    assert read["method"] == "fs/read_text_file" and read["params"]["sessionId"] == SESSION
    h.cancel()
    cancel = h.next()
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": read["id"]},
    }
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    assert (
        len(errors) == 1
        and isinstance(errors[0], AcpProtocolException)
        and errors[0].code == -32800
    )


def test_async_handler_stops_its_work_with_take_until_when_cancelled(
    harnesses: list[AgentHarness],
) -> None:
    ticks: Subject[int] = Subject()

    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        until_cancelled: reactivex.Observable[int] = ticks.pipe(
            ops.do_action(lambda i: ctx.send_message(f"tick {i}")),
            ops.take_until(ctx.when_cancelled()),
        )
        last: reactivex.Observable[int | None] = until_cancelled.pipe(ops.last_or_default())
        return last.pipe(ops.map(lambda _: PromptResponse.end_turn()))

    h = make(harnesses, "async", async_h)
    rid = h.prompt()
    h.flush()
    ticks.on_next(1)
    assert is_update(h.next(), "tick 1")
    h.cancel()
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    ticks.on_next(2)
    assert h.idle()


@pytest.mark.parametrize("trigger", ["$/cancel_request", "max"])
def test_a_handler_that_answers_synchronously_on_cancel_cannot_claim_the_sdk_answer(
    harnesses: list[AgentHarness], trigger: str
) -> None:
    def async_h(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        return ctx.when_cancelled().pipe(ops.map(lambda _r: PromptResponse.end_turn()))

    h = make(harnesses, "async", async_h, max_duration=5.0)
    rid = h.prompt()
    h.flush()
    if trigger == "max":
        h.advance(6)
    else:
        h.cancel_request(rid)
    answer = h.next()
    assert answer["id"] == rid and answer["error"]["code"] == -32800
    assert h.idle()


@pytest.mark.parametrize(
    "returns",
    ["plain value", "raises", "just", "just on a scheduler", "coroutine"],
)
def test_every_kind_of_async_handler_result_is_answered_once_and_in_order(
    harnesses: list[AgentHarness], returns: str
) -> None:
    from reactivex.scheduler import ImmediateScheduler

    def async_h(req: PromptRequest, ctx: PromptContext) -> Any:
        ctx.send_message("first")
        reply = PromptResponse(stop_reason="max_tokens")
        if returns == "plain value":
            return reply
        if returns == "raises":
            raise AcpProtocolException(-32002, "gone")
        if returns == "just":
            return reactivex.just(reply)
        if returns == "just on a scheduler":
            return reactivex.just(reply, ImmediateScheduler())

        async def later() -> PromptResponse:
            return reply

        return later()

    h = make(harnesses, "async", async_h)
    rid = h.prompt()
    updates, answer = h.next_answer()
    assert [u["params"]["update"]["content"]["text"] for u in updates] == ["first"]
    if returns == "raises":
        assert answer["id"] == rid and answer["error"]["code"] == -32002
    else:
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "max_tokens"}}
    assert h.idle() and h.agent.active_turns == 0


@pytest.mark.parametrize("limit", ["grace", "max_duration"])
def test_an_abandoned_sync_handler_gives_back_its_worker_so_another_session_prompts_at_once(
    harnesses: list[AgentHarness], limit: str
) -> None:
    gate = Gate()
    stubborn = never_answers("sync", gate)

    def handler(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        if req.session_id == "A":
            stubborn_answer: PromptResponse = stubborn(req, ctx)
            return stubborn_answer
        ctx.send_message("B runs")
        return PromptResponse.end_turn()

    kw: dict[str, Any] = {"grace": 10.0} if limit == "grace" else {"max_duration": 30.0}
    h = AgentHarness("sync", configure=lambda b: b.prompt_handler(handler).max_workers(1), **kw)
    harnesses.append(h)
    a = h.prompt(session="A")
    assert is_update(h.next(), "stubborn")
    if limit == "grace":
        h.cancel("A")
        h.advance(10.5)
    else:
        h.advance(30.5)
    _, answer = h.next_answer()
    assert answer["id"] == a
    b = h.prompt(session="B")
    assert is_update(h.next(), "B runs"), "session B waited for A's abandoned handler"
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": b, "result": {"stopReason": "end_turn"}}
    gate.open()


def test_an_observable_answer_that_completed_at_once_is_disposed_so_finally_runs(
    harnesses: list[AgentHarness],
) -> None:
    # reactivex runs finally_action on disposal; the trampoline-free fast path must dispose too
    cleaned: list[str] = []

    def handler(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        answer = reactivex.just(PromptResponse.end_turn())
        return answer.pipe(ops.finally_action(lambda: cleaned.append("finally")))

    h = make(harnesses, "async", handler)
    for _ in range(2):
        rid = h.prompt()
        _, answer = h.next_answer()
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}
    h.flush()
    assert cleaned == ["finally", "finally"]


def test_a_client_request_still_subscribing_when_its_turn_is_cancelled_is_disposed(
    harnesses: list[AgentHarness],
) -> None:
    # the cascade can run while a request of the turn is being subscribed (a sync handler's
    # thread against the loop); its subscription is disposed as soon as it exists
    disposed: list[str] = []
    errors: list[Exception] = []

    def handler(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        turn = ctx._turn

        def subscribe(observer: Any, scheduler: Any = None) -> Disposable:
            turn.cancel_from_session()  # the cascade fires before this subscription returns
            return Disposable(lambda: disposed.append("request"))

        turn.track(AcpObservable(subscribe)).subscribe(on_error=errors.append)
        return reactivex.just(PromptResponse.end_turn())

    h = make(harnesses, "async", handler)
    rid = h.prompt()
    _, answer = h.next_answer()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    assert disposed == ["request"]
    assert [getattr(e, "code", None) for e in errors] == [-32800]
