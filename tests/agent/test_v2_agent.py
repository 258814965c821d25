"""A dual-version agent: initialize picks v1 or v2; a v2 turn is reported by state_update."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex
from reactivex import operators as ops

from rxacp.agent.v2 import AgentHandlers, PromptContext, SyncPromptContext
from rxacp.schema import NewSessionResponse, PromptResponse
from tests.agent.harness import SESSION, AgentHarness

V2_INIT = {"protocolVersion": 2, "info": {"name": "ed", "version": "1"}, "capabilities": {}}


def _new_session(_req: Any) -> dict[str, Any]:
    return {"sessionId": SESSION}


def _dual(
    prompt_v2: Any, *, api: str = "sync", versions: tuple[int, ...] | None = None, **kw: Any
) -> AgentHarness:
    def configure(builder: Any) -> None:
        builder.new_session_handler(lambda _r: NewSessionResponse(session_id=SESSION))
        builder.prompt_handler(lambda _r, _c: PromptResponse.end_turn())
        builder.protocol_v2(
            AgentHandlers()
            .agent_info(name="dual", version="2.0")
            .new_session_handler(_new_session)
            .list_sessions_handler(lambda _r: {"sessions": []})
            .resume_session_handler(lambda _r: {})
            .prompt_handler(prompt_v2)
        )
        if versions is not None:
            builder.protocol_versions(*versions)

    return AgentHarness(api, configure=configure, **kw)


def _updates_until_idle(h: AgentHarness) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        msg = h.next()
        assert msg.get("method") == "session/update", msg
        update = msg["params"]["update"]
        out.append(update)
        if update.get("sessionUpdate") == "state_update" and update["state"] == "idle":
            return out


def _v2_session(h: AgentHarness) -> None:
    init = h.request("initialize", V2_INIT)["result"]
    assert init["protocolVersion"] == 2
    assert h.request("session/new", {"cwd": "/tmp"})["result"] == {"sessionId": SESSION}


def test_a_dual_agent_answers_a_v1_client_exactly_as_a_v1_agent() -> None:
    h = _dual(lambda _r, _c: None)
    try:
        init = h.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})["result"]
        assert init["protocolVersion"] == 1
        assert "agentCapabilities" in init and "info" not in init
        h.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        h.prompt()
        assert h.next_answer()[1]["result"] == {"stopReason": "end_turn"}
    finally:
        h.close()


def test_a_v2_initialize_gets_version_2_with_info_and_session_capabilities() -> None:
    h = _dual(lambda _r, _c: None)
    try:
        init = h.request("initialize", V2_INIT)["result"]
        assert init == {
            "protocolVersion": 2,
            "info": {"name": "dual", "version": "2.0"},
            "capabilities": {"session": {}},
        }
        load = h.request("session/load", {"sessionId": SESSION, "cwd": "/", "mcpServers": []})
        assert load["error"]["code"] == -32601  # v1-only methods are gone on a v2 connection
        again = h.request("initialize", V2_INIT)
        assert again["error"]["code"] == -32600
    finally:
        h.close()


def test_a_newer_client_version_is_answered_as_v2_and_a_v2_only_agent_answers_v1_with_2() -> None:
    h = _dual(lambda _r, _c: None)
    try:
        assert (
            h.request("initialize", {**V2_INIT, "protocolVersion": 3})["result"]["protocolVersion"]
            == 2
        )
    finally:
        h.close()
    only = _dual(lambda _r, _c: None, versions=(2,))
    try:
        init = only.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["result"]["protocolVersion"] == 2
    finally:
        only.close()


def test_a_v1_only_builder_is_unchanged_and_protocol_versions_2_needs_handlers() -> None:
    from rxacp.agent import AcpAgent
    from tests.session.conftest import ScriptedTransport

    with pytest.raises(ValueError, match="protocol_v2"):
        AcpAgent.sync(ScriptedTransport()).protocol_versions(1, 2).build()
    with pytest.raises(TypeError, match="AgentHandlers"):
        AcpAgent.sync(ScriptedTransport()).protocol_v2(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_v2_prompt_is_accepted_at_once_and_reported_by_state_updates(api: str) -> None:
    def prompt(_req: Any, ctx: Any) -> str:
        ctx.send_message("hel")
        ctx.send_message("lo")
        return "max_tokens"

    h = _dual(prompt, api=api)
    try:
        _v2_session(h)
        rid = h.prompt("hi")
        answer = h.next()
        assert answer["id"] == rid and set(answer["result"]) == {"messageId"}
        updates = _updates_until_idle(h)
        user, running, *chunks, idle = updates
        assert user == {
            "sessionUpdate": "user_message",
            "messageId": answer["result"]["messageId"],
            "content": [{"type": "text", "text": "hi"}],
        }
        assert running == {"sessionUpdate": "state_update", "state": "running"}
        assert [c["content"]["text"] for c in chunks] == ["hel", "lo"]
        assert len({c["messageId"] for c in chunks}) == 1
        assert idle == {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "max_tokens",
        }
    finally:
        h.close()


def test_a_permission_request_is_wrapped_in_requires_action_and_running() -> None:
    def prompt(_req: Any, ctx: SyncPromptContext) -> None:
        ctx.send_message("ok" if ctx.ask_permission("Run it?") else "no")

    h = _dual(prompt)
    try:
        _v2_session(h)
        h.prompt()
        h.next()  # the acceptance
        seen: list[dict[str, Any]] = []
        while True:
            msg = h.next()
            if msg.get("method") == "session/request_permission":
                assert msg["params"]["title"] == "Run it?"
                h.send(
                    {
                        "id": msg["id"],
                        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
                    }
                )
                seen.append({"permission": True})
                continue
            update = msg["params"]["update"]
            seen.append(update)
            if update.get("state") == "idle":
                break
        states = [u.get("state") for u in seen if u.get("sessionUpdate") == "state_update"]
        assert states == ["running", "requires_action", "running", "idle"]
        text = [
            u["content"]["text"] for u in seen if u.get("sessionUpdate") == "agent_message_chunk"
        ]
        assert text == ["ok"]
    finally:
        h.close()


def test_cancel_is_confirmed_by_idle_cancelled_even_when_the_handler_answers_otherwise() -> None:
    def prompt(_req: Any, ctx: PromptContext) -> reactivex.Observable[Any]:
        return ctx.when_cancelled().pipe(
            reactivex.operators.map(lambda _r: "refusal"), reactivex.operators.take(1)
        )

    h = _dual(prompt, api="async")
    try:
        _v2_session(h)
        h.prompt()
        h.next()
        assert [
            u["sessionUpdate"] for u in (h.next()["params"]["update"], h.next()["params"]["update"])
        ] == ["user_message", "state_update"]
        h.cancel()
        idle = h.next()["params"]["update"]
        assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
        h.flush()
        assert h.idle()
    finally:
        h.close()


def test_the_grace_period_ends_a_stuck_v2_turn_exactly_once_in_virtual_time() -> None:
    h = _dual(lambda _r, _c: reactivex.never(), api="async", grace=5.0)
    try:
        _v2_session(h)
        h.prompt()
        for _ in range(3):
            h.next()
        h.cancel()
        h.advance(4.9)
        assert h.idle()
        h.advance(0.2)
        assert h.next()["params"]["update"] == {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "cancelled",
        }
        h.advance(100)
        assert h.idle()
    finally:
        h.close()


def test_max_duration_ends_a_v2_turn_with_stop_reason_error_and_the_limit() -> None:
    h = _dual(lambda _r, _c: reactivex.never(), api="async", max_duration=30.0)
    try:
        _v2_session(h)
        h.prompt()
        for _ in range(3):
            h.next()
        h.advance(30.0)
        idle = h.next()["params"]["update"]
        assert idle["stopReason"] == "error"
        assert idle["error"]["code"] == -32800
        assert idle["error"]["data"] == {"maxPromptDuration": "PT30S"}
        h.advance(100)
        assert h.idle()
    finally:
        h.close()


def test_a_failing_v2_handler_ends_the_turn_with_error_and_no_local_detail() -> None:
    def prompt(_req: Any, _ctx: Any) -> None:
        raise KeyError("/home/secret/token")

    h = _dual(prompt)
    try:
        _v2_session(h)
        h.prompt()
        assert "messageId" in h.next()["result"]
        idle = _updates_until_idle(h)[-1]
        assert idle["stopReason"] == "error" and idle["error"]["code"] == -32603
        assert "secret" not in str(idle)
    finally:
        h.close()


def test_a_v2_connection_answers_a_batch_with_one_array_and_v1_keeps_refusing_it() -> None:
    h = _dual(lambda _r, _c: None)
    try:
        h.request("initialize", V2_INIT)
        h.peer.inject(
            [
                {"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "/tmp"}},
                {"jsonrpc": "2.0", "method": "_nobody/listens"},
                {"no": "jsonrpc"},
                {"jsonrpc": "2.0", "id": "x", "method": "session/list", "params": {}},
            ]
        )
        answers = h.next()
        assert isinstance(answers, list)
        by_id = {a["id"]: a for a in answers}
        assert set(by_id) == {7, "x", None}
        assert by_id[7]["result"] == {"sessionId": SESSION}
        assert by_id["x"]["result"] == {"sessions": []}
        assert by_id[None]["error"]["code"] == -32600
        h.peer.inject([])
        assert h.next()["error"]["code"] == -32600
        h.peer.inject([{"jsonrpc": "2.0", "method": "_only/notifications"}])
        assert h.idle()  # nothing to answer: no empty array
    finally:
        h.close()
    v1 = _dual(lambda _r, _c: None)
    try:
        v1.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        v1.peer.inject([{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}])
        refused = v1.next()
        assert refused["id"] is None and refused["error"]["code"] == -32600
    finally:
        v1.close()


def test_advertised_auth_methods_need_both_v2_auth_handlers_and_the_client_calls_reach_them() -> (
    None
):
    from rxacp.agent import AcpAgent
    from tests.session.conftest import ScriptedTransport

    methods = [{"methodId": "login", "type": "agent", "name": "Log in"}]
    with pytest.raises(ValueError, match="auth/login and auth/logout"):
        AcpAgent.sync(ScriptedTransport()).protocol_v2(
            AgentHandlers().auth_methods(methods).login_handler(lambda _r: {})
        ).build()
    seen: list[str] = []

    def login(request: Any) -> dict[str, Any]:
        seen.append(f"login {request.method_id}")
        return {}

    def logout(_request: Any) -> dict[str, Any]:
        seen.append("logout")
        return {}

    def configure(builder: Any) -> None:
        builder.protocol_v2(
            AgentHandlers().auth_methods(methods).login_handler(login).logout_handler(logout)
        )

    h = AgentHarness(configure=configure)
    try:
        init = h.request("initialize", V2_INIT)["result"]
        assert init["authMethods"] == methods
        assert h.request("auth/login", {"methodId": "login"})["result"] == {}
        assert h.request("auth/logout", {})["result"] == {}
        assert h.request("authenticate", {"methodId": "login"})["error"]["code"] == -32601
        assert seen == ["login login", "logout"]
    finally:
        h.close()


def test_without_the_baseline_handlers_no_session_capability_is_advertised_and_close_is_served(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def configure(builder: Any) -> None:
        builder.protocol_v2(
            AgentHandlers()
            .new_session_handler(_new_session)
            .prompt_handler(lambda _r, ctx: ctx.when_cancelled().pipe(ops.map(lambda _x: None)))
        )

    h = AgentHarness("async", configure=configure)
    try:
        init = h.request("initialize", V2_INIT)["result"]
        assert init["capabilities"] == {}
        assert "session/list, session/resume" in caplog.text
        h.request("session/new", {"cwd": "/tmp"})
        h.prompt()
        for _ in range(3):
            h.next()  # accepted, user_message, running
        rid = h.send_request("session/close", {"sessionId": SESSION})
        got = [h.next(), h.next()]  # the close answer and the turn's idle, in either order
        assert [m["result"] for m in got if m.get("id") == rid] == [{}]
        updates = [m["params"]["update"] for m in got if m.get("method") == "session/update"]
        assert updates == [
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
        ]
    finally:
        h.close()
