"""Decorator agents: routing, argument resolution, return values, async handlers, defaults."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Annotated, Any

import reactivex
from reactivex import operators as ops
from reactivex.disposable import Disposable

import rxacp.agent.support as support
from rxacp.agent import PromptContext, SyncPromptContext
from rxacp.agent.builder import AcpAgentBuilder
from rxacp.agent.support import (
    AcpAgentSupport,
    ArgumentResolver,
    HandlerParameter,
    InvocationContext,
    ReturnValueHandler,
    SessionId,
    acp_agent,
    ext_method,
    ext_notification,
    initialize,
    list_sessions,
    load_session,
    new_session,
    prompt,
    set_session_mode,
)
from rxacp.capabilities import NegotiatedCapabilities
from rxacp.schema import (
    InitializeRequest,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionRequest,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    SetSessionModeRequest,
)
from rxacp.schema.methods import METHODS

from .harness import SESSION, SupportHarness

LOAD = {"sessionId": "s-9", "cwd": "/", "mcpServers": []}


def test_every_builder_handler_setter_has_a_decorator_named_after_the_method_table() -> None:
    for spec in METHODS.values():
        if spec.side == "agent" and hasattr(AcpAgentBuilder, f"{spec.python_name}_handler"):
            decorator = getattr(support, spec.python_name)
            assert decorator.spec is spec
            assert spec.python_name in support.__all__


def test_decorators_return_the_function_unchanged_so_handlers_stay_plain_methods() -> None:
    def handler(self: Any, req: PromptRequest) -> str:
        return "x"

    assert prompt(handler) is handler
    assert handler(None, PromptRequest.text("s", "t")) == "x"


def test_missing_initialize_and_new_session_get_defaults_from_acp_agent() -> None:
    @acp_agent(name="defaults", version="3.1", title="Defaults")
    class Defaults:
        @load_session
        def load(self, req: LoadSessionRequest) -> None:
            return None

    h = SupportHarness(Defaults())
    try:
        init = h.request("initialize", {"protocolVersion": 1})["result"]
        assert init["agentInfo"] == {"name": "defaults", "version": "3.1", "title": "Defaults"}
        assert init["agentCapabilities"]["loadSession"] is True
        created = h.request("session/new", {"cwd": "/", "mcpServers": []})["result"]
        assert uuid.UUID(created["sessionId"]).version == 4
        assert h.request("session/load", LOAD)["result"] == {}
        answer = h.request("session/prompt", {"sessionId": "x", "prompt": []})
        assert answer["error"]["code"] == -32601
    finally:
        h.close()


def test_arguments_are_resolved_by_annotation_in_any_order() -> None:
    seen: dict[str, Any] = {}

    @acp_agent(name="args", version="1")
    class Args:
        @initialize
        def init(self, caps: NegotiatedCapabilities, req: InitializeRequest) -> InitializeResponse:
            seen["init"] = (caps.supports("terminal"), req.protocol_version)
            return InitializeResponse.ok()

        @set_session_mode
        def mode(
            self,
            sid: Annotated[str, SessionId],
            inv: InvocationContext,
            req: SetSessionModeRequest,
            caps: NegotiatedCapabilities,
        ) -> None:
            seen["mode"] = (
                sid,
                inv.method,
                inv.handler_name,
                req.mode_id,
                caps.supports("terminal"),
            )

    h = SupportHarness(Args(), client_capabilities={"terminal": True})
    try:
        assert h.request("session/set_mode", {"sessionId": "s1", "modeId": "m"})["result"] == {}
        assert seen["init"] == (True, 1)
        assert seen["mode"] == ("s1", "session/set_mode", "Args.mode", "m", True)
    finally:
        h.close()


def test_both_prompt_contexts_are_injectable_into_a_def_prompt_handler() -> None:
    @acp_agent(name="ctx", version="1")
    class Ctx:
        @prompt
        def answer(self, ctx: SyncPromptContext, actx: PromptContext, req: PromptRequest) -> str:
            assert ctx.session_id == actx.session_id == req.session_id
            actx.send_message("from async view")
            return "from sync view" if not ctx.is_cancelled() else "cancelled"

    h = SupportHarness(Ctx())
    try:
        rid = h.prompt()
        updates, answer = h.next_answer()
        texts = [u["params"]["update"]["content"]["text"] for u in updates]
        assert texts == ["from async view", "from sync view"]
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}
    finally:
        h.close()


def test_async_def_handlers_run_on_the_connection_loop_and_may_await() -> None:
    threads: list[str] = []

    @acp_agent(name="async", version="1")
    class Async:
        @new_session
        async def create(self, req: NewSessionRequest) -> NewSessionResponse:
            await asyncio.sleep(0)
            threads.append(threading.current_thread().name)
            return NewSessionResponse(session_id=f"s-{req.cwd}")

        @prompt
        async def answer(self, req: PromptRequest, ctx: PromptContext) -> str:
            ctx.send_message("thinking")
            await asyncio.sleep(0)
            return "done"

    h = SupportHarness(Async())
    try:
        assert h.request("session/new", {"cwd": "/a", "mcpServers": []})["result"] == {
            "sessionId": "s-/a"
        }
        assert not threads[0].startswith("rxacp-worker")
        rid = h.prompt()
        updates, answer = h.next_answer()
        assert [u["params"]["update"]["content"]["text"] for u in updates] == ["thinking", "done"]
        assert answer["id"] == rid and answer["result"] == {"stopReason": "end_turn"}
    finally:
        h.close()


def test_a_cancel_request_cancels_the_task_of_an_async_def_prompt() -> None:
    started, cancelled = threading.Event(), threading.Event()

    @acp_agent(name="task", version="1")
    class Task:
        @prompt
        async def answer(self, req: PromptRequest, ctx: PromptContext) -> str:
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "never"

    h = SupportHarness(Task())
    try:
        rid = h.prompt()
        assert started.wait(2)
        h.cancel_request(rid)
        _, answer = h.next_answer()
        assert answer["error"]["code"] == -32800
        assert cancelled.wait(2)
    finally:
        h.close()


def test_returned_observables_answer_with_their_first_value_and_are_disposed_on_cancel() -> None:
    subscribed, disposed = threading.Event(), threading.Event()

    @acp_agent(name="rx", version="1")
    class Rx:
        @list_sessions
        def sessions(self) -> reactivex.Observable[ListSessionsResponse | None]:
            return reactivex.of(ListSessionsResponse(sessions=[]), None)

        @prompt
        def answer(self, req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
            text = req.prompt_text()
            if text == "forever":

                def forever(observer: Any, scheduler: Any = None) -> Disposable:
                    subscribed.set()
                    return Disposable(disposed.set)

                return reactivex.create(forever)
            return reactivex.timer(0.0).pipe(
                ops.do_action(lambda _: ctx.send_message("tick")),
                ops.take_until(ctx.when_cancelled()),
                ops.map(lambda _: "tock"),
            )

    h = SupportHarness(Rx())
    try:
        assert h.request("session/list", {})["result"] == {"sessions": []}
        h.prompt("rx")
        updates, answer = h.next_answer()
        assert [u["params"]["update"]["content"]["text"] for u in updates] == ["tick", "tock"]
        assert answer["result"] == {"stopReason": "end_turn"}
        rid = h.prompt("forever")
        assert subscribed.wait(2)
        h.cancel()
        h.advance(60)  # the grace period passes: the Observable is disposed, `cancelled` sent
        _, answer = h.next_answer()
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
        assert disposed.wait(2)
    finally:
        h.close()


def test_none_is_end_turn_for_prompt_and_a_wrong_type_is_an_internal_error_naming_the_handler() -> (
    None
):
    @acp_agent(name="ret", version="1")
    class Ret:
        @prompt
        def answer(self, req: PromptRequest) -> None:
            return None

        @new_session
        def create(self) -> Any:
            return 42

        @list_sessions
        def sessions(self) -> None:
            return None

    h = SupportHarness(Ret())
    try:
        h.prompt()
        assert h.next_answer()[1]["result"] == {"stopReason": "end_turn"}
        error = h.request("session/new", {"cwd": "/", "mcpServers": []})["error"]
        assert error["code"] == -32603
        assert "Ret.create returned a int" in error["message"]
        assert "NewSessionResponse" in error["message"]
        error = h.request("session/list", {})["error"]
        assert "ListSessionsResponse has required fields" in error["message"]
    finally:
        h.close()


def test_extension_methods_get_raw_or_validated_params_and_notifications_arrive() -> None:
    notes: list[Any] = []
    noted = threading.Event()

    @acp_agent(name="ext", version="1")
    class Ext:
        @ext_method("_acme/echo")
        def echo(self, params: dict[str, Any], sid: Annotated[str, SessionId]) -> dict[str, Any]:
            return {"echo": params, "sid": sid}

        @ext_method("_acme/typed")
        def typed(self, req: SetSessionModeRequest) -> dict[str, str]:
            return {"mode": req.mode_id}

        @ext_notification("_acme/note")
        def note(self, params: Any) -> None:
            notes.append(params)
            noted.set()

    h = SupportHarness(Ext())
    try:
        answer = h.request("_acme/echo", {"sessionId": "s1"})
        assert answer["result"] == {"echo": {"sessionId": "s1"}, "sid": "s1"}
        assert h.request("_acme/typed", {"sessionId": "s", "modeId": "m"})["result"] == {
            "mode": "m"
        }
        assert h.request("_acme/typed", {"sessionId": "s"})["error"]["code"] == -32602
        h.send({"method": "_acme/note", "params": {"n": 1}})
        assert noted.wait(5), "the notification handler never ran"  # it runs on a worker
        assert notes == [{"n": 1}]
    finally:
        h.close()


# Module level: annotations are strings (``from __future__ import annotations``) and are
# resolved in the module's namespace.
class Clock:
    now = 7


class ClockResolver(ArgumentResolver):
    def supports(self, param: HandlerParameter) -> bool:
        return param.type is Clock

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        return Clock()


class Words(list[str]):
    pass


class WordsHandler(ReturnValueHandler):
    def supports(self, value: Any, invocation: InvocationContext) -> bool:
        return isinstance(value, Words)

    def handle(self, value: Any, invocation: InvocationContext) -> Any:
        return " ".join(value)


def test_custom_argument_resolvers_and_return_value_handlers_are_used() -> None:
    @acp_agent(name="custom", version="1")
    class Custom:
        @prompt
        def answer(self, clock: Clock) -> Words:
            return Words(["it", "is", str(clock.now)])

    h = SupportHarness(
        Custom(),
        configure=lambda b: b.argument_resolver(ClockResolver()).return_value_handler(
            WordsHandler()
        ),
    )
    try:
        h.prompt()
        updates, answer = h.next_answer()
        assert updates[0]["params"]["update"]["content"]["text"] == "it is 7"
        assert answer["result"] == {"stopReason": "end_turn"}
    finally:
        h.close()


def test_start_returns_the_running_agent_and_sessions_default_to_uuid4() -> None:
    from tests.session.conftest import ScriptedTransport

    @acp_agent(name="s", version="1")
    class S:
        pass

    peer = ScriptedTransport()
    agent = AcpAgentSupport.create(S()).transport(peer).start()
    try:
        peer.inject(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            }
        )
        answer = peer.sent(3)
        assert answer["id"] == 1 and answer["result"]["sessionId"] != SESSION
    finally:
        agent.close()
