"""The client opts into ACP v2: v2 with a dual agent, v1 fallback with a v1 agent, v2 turns."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from reactivex import operators as ops

from rxacp.agent import AcpAgent
from rxacp.agent import SyncPromptContext as V1Context
from rxacp.agent.v2 import AgentHandlers, SyncPromptContext
from rxacp.client import AcpAsyncClient, AcpClient, CancellationSignal
from rxacp.errors import AcpCapabilityException, AcpProtocolException
from rxacp.schema import (
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    RequestPermissionResponse,
    v2,
)
from rxacp.testing.memory import InMemoryTransportPair


def _say(text: str) -> Callable[[PromptRequest, V1Context], PromptResponse]:
    """A sync prompt handler that sends ``text`` and ends the turn."""

    def prompt(_req: PromptRequest, ctx: V1Context) -> PromptResponse:
        ctx.send_message(text)
        return PromptResponse.end_turn()

    return prompt


SID = "s1"
WAIT = 10.0


def _v2_prompt(_req: Any, ctx: SyncPromptContext) -> str:
    text = ctx.request.prompt_text()
    if text == "ask":
        return "end_turn" if ctx.ask_permission("Run it?") else "refusal"
    if text == "hang":
        ctx.to_async().when_cancelled().pipe(ops.first()).run()
        return "end_turn"  # answered after the cancel: the SDK still says cancelled
    ctx.send_message("echo: " + text)
    return "end_turn"


class Pair:
    def __init__(self, *, v2_agent: bool) -> None:
        self.pair = InMemoryTransportPair.create()
        builder = (
            AcpAgent.sync(self.pair.agent_transport)
            .new_session_handler(lambda _r: NewSessionResponse(session_id=SID))
            .prompt_handler(_say("v1"))
        )
        if v2_agent:
            builder.protocol_v2(
                AgentHandlers()
                .new_session_handler(lambda _r: {"sessionId": SID})
                .list_sessions_handler(lambda _r: {"sessions": []})
                .resume_session_handler(lambda _r: {})
                .prompt_handler(_v2_prompt)
            )
        self.agent = builder.build()
        self.agent.start()
        self.permission_requests: list[Any] = []

    def client(self) -> AcpAsyncClient:
        def permission(req: Any) -> Any:
            self.permission_requests.append(req)
            return {"outcome": {"outcome": "selected", "optionId": "allow"}}

        return (
            AcpClient.async_(self.pair.client_transport)
            .protocol_v2()
            .request_permission_handler(permission)
            .build()
        )

    def close(self) -> None:
        self.agent.close()
        self.pair.close()


@pytest.fixture
def dual() -> Iterator[Pair]:
    p = Pair(v2_agent=True)
    yield p
    p.close()


@pytest.fixture
def v1_only() -> Iterator[Pair]:
    p = Pair(v2_agent=False)
    yield p
    p.close()


def _open(client: AcpAsyncClient) -> Any:
    init = client.initialize().block(WAIT)
    client.new_session({"cwd": "/tmp", "mcpServers": []}).block(WAIT)
    return init


def _turn(client: AcpAsyncClient, text: str, stop: CancellationSignal | None = None) -> list[Any]:
    items: list[Any] = (
        client.prompt_turn({"sessionId": SID, "prompt": [{"type": "text", "text": text}]}, stop)
        .pipe(ops.to_list())
        .block(WAIT)
    )
    return items


def test_a_v2_client_and_a_dual_agent_speak_v2_and_the_turn_completes_on_idle(dual: Pair) -> None:
    client = dual.client()
    try:
        init = _open(client)
        assert isinstance(init, v2.InitializeResponse)
        assert client.protocol_version == 2
        updates = _turn(client, "hi")
        kinds = [u.session_update for u in updates]
        assert kinds == ["user_message", "state_update", "agent_message_chunk", "state_update"]
        assert updates[2].content.text == "echo: hi"
        assert (updates[-1].state, updates[-1].stop_reason) == ("idle", "end_turn")
        last = client.prompt(v2.PromptRequest.text(SID, "again")).block(WAIT)
        assert isinstance(last, v2.SessionStateUpdate) and last.stop_reason == "end_turn"
    finally:
        client.close()


def test_a_v2_client_falls_back_to_v1_when_the_agent_answers_1(v1_only: Pair) -> None:
    client = v1_only.client()
    try:
        init = _open(client)
        assert init.protocol_version == 1 and client.protocol_version == 1
        items = _turn(client, "hi")
        assert isinstance(items[-1], PromptResponse) and items[-1].stop_reason == "end_turn"
    finally:
        client.close()


def test_the_v2_permission_handler_gets_the_v2_request_around_requires_action(dual: Pair) -> None:
    client = dual.client()
    try:
        _open(client)
        updates = _turn(client, "ask")
        states = [u.state for u in updates if u.session_update == "state_update"]
        assert states == ["running", "requires_action", "running", "idle"]
        assert updates[-1].stop_reason == "end_turn"
        (request,) = dual.permission_requests
        assert isinstance(request, v2.RequestPermissionRequest) and request.title == "Run it?"
    finally:
        client.close()


def test_stop_cancel_ends_a_v2_turn_with_idle_cancelled(dual: Pair) -> None:
    client = dual.client()
    try:
        _open(client)
        stop = CancellationSignal()
        running = threading.Event()

        def on_note(note: Any) -> None:
            if getattr(note.update, "state", None) == "running":
                running.set()

        client.updates(SID).subscribe(on_note)
        result: list[Any] = []
        done = threading.Event()
        client.prompt_turn(v2.PromptRequest.text(SID, "hang"), stop).pipe(ops.to_list()).subscribe(
            lambda items: result.extend(items), on_completed=done.set
        )
        assert running.wait(WAIT)
        stop.cancel()
        assert done.wait(WAIT)
        assert (result[-1].state, result[-1].stop_reason) == ("idle", "cancelled")
        already = CancellationSignal()
        already.cancel()
        (only,) = _turn(client, "hang", already)
        assert only.stop_reason == "cancelled"
    finally:
        client.close()


def test_v1_only_calls_fail_locally_on_a_v2_connection(dual: Pair) -> None:
    client = dual.client()
    try:
        _open(client)
        with pytest.raises(AcpCapabilityException, match="session/load"):
            client.load_session({"sessionId": SID, "cwd": "/", "mcpServers": []}).block(WAIT)
    finally:
        client.close()


def test_a_client_without_the_option_stays_v1_against_a_dual_agent(dual: Pair) -> None:
    client = AcpClient.async_(dual.pair.client_transport).build()
    try:
        init = client.initialize().block(WAIT)
        assert init.protocol_version == 1 and client.protocol_version == 1
    finally:
        client.close()


def test_the_blocking_client_iterates_a_v2_turn_and_prompt_returns_the_idle_update(
    dual: Pair,
) -> None:
    client = (
        AcpClient.sync(dual.pair.client_transport)
        .protocol_v2()
        .request_permission_handler(lambda _r: RequestPermissionResponse.selected("allow"))
        .build()
    )
    try:
        client.initialize()
        assert client.protocol_version == 2
        client.new_session({"cwd": "/tmp"})
        items = list(client.prompt_turn(v2.PromptRequest.text(SID, "hi")))
        kinds = [getattr(u, "session_update", None) for u in items]
        assert kinds[0] == "user_message" and kinds[-1] == "state_update"
        last = client.prompt(v2.PromptRequest.text(SID, "ask"))
        assert isinstance(last, v2.SessionStateUpdate) and last.stop_reason == "end_turn"
    finally:
        client.close()


def test_authenticate_and_logout_are_sent_as_auth_login_and_auth_logout_on_v2() -> None:
    pair = InMemoryTransportPair.create()
    seen: list[str] = []

    def login(request: Any) -> dict[str, Any]:
        seen.append(f"auth/login {request.method_id}")
        return {}

    def logout(_request: Any) -> dict[str, Any]:
        seen.append("auth/logout")
        return {}

    agent = (
        AcpAgent.sync(pair.agent_transport)
        .protocol_v2(
            AgentHandlers()
            .auth_methods([{"methodId": "sso", "type": "agent", "name": "SSO"}])
            .login_handler(login)
            .logout_handler(logout)
        )
        .build()
    )
    agent.start()
    client = AcpClient.async_(pair.client_transport).protocol_v2().build()
    try:
        init = client.initialize().block(WAIT)
        assert [m["methodId"] for m in init.to_wire()["authMethods"]] == ["sso"]
        client.authenticate({"methodId": "sso"}).block(WAIT)
        client.logout({}).block(WAIT)
        assert seen == ["auth/login sso", "auth/logout"]
    finally:
        client.close()
        agent.close()
        pair.close()


def test_cancel_tool_call_reaches_the_v2_handler_and_fails_locally_on_v1() -> None:
    pair = InMemoryTransportPair.create()
    seen: list[str] = []

    def cancel_tool_call(request: Any) -> dict[str, Any]:
        seen.append(request.tool_call_id)
        return {}

    agent = (
        AcpAgent.sync(pair.agent_transport)
        .protocol_v2(AgentHandlers().cancel_tool_call_handler(cancel_tool_call))
        .build()
    )
    agent.start()
    client = AcpClient.async_(pair.client_transport).protocol_v2().build()
    try:
        client.initialize().block(WAIT)
        params = {"sessionId": SID, "toolCallId": "call_9"}
        assert client.cancel_tool_call(params).block(WAIT).to_wire() == {}
        assert seen == ["call_9"]
    finally:
        client.close()
        agent.close()
        pair.close()


def test_v2_only_calls_error_at_subscription_on_a_v1_connection(v1_only: Pair) -> None:
    client = AcpClient.async_(v1_only.pair.client_transport).build()
    try:
        client.initialize().block(WAIT)
        call = client.cancel_terminal({"sessionId": SID, "terminalId": "t"})  # nothing yet
        with pytest.raises(AcpCapabilityException, match="terminal/cancel"):
            call.block(WAIT)
    finally:
        client.close()


def test_prompt_timeout_bounds_a_v2_turn_in_virtual_time_and_cancels_it(dual: Pair) -> None:
    from reactivex.testing import TestScheduler

    from rxacp.errors import AcpTimeoutException
    from rxacp.testing import quiesce

    clock = TestScheduler()
    client = (
        AcpClient.async_(dual.pair.client_transport)
        .protocol_v2()
        .scheduler(clock)
        .prompt_timeout(5.0)
        .build()
    )
    try:
        _open(client)
        errors: list[Exception] = []
        done = threading.Event()
        idle_seen = threading.Event()

        def on_note(note: Any) -> None:
            if getattr(note.update, "stop_reason", None) == "cancelled":
                idle_seen.set()

        client.updates(SID).subscribe(on_note)

        def on_error(error: Exception) -> None:
            errors.append(error)
            done.set()

        client.prompt_turn(v2.PromptRequest.text(SID, "hang")).subscribe(on_error=on_error)
        quiesce(client)
        clock.advance_by(4.9)
        quiesce(client)
        assert not done.is_set()
        clock.advance_by(0.2)
        assert done.wait(WAIT)
        assert isinstance(errors[0], AcpTimeoutException)
        assert idle_seen.wait(WAIT)  # the timeout disposed the turn: session/cancel was sent
    finally:
        client.close()


def test_a_v2_agents_request_for_a_session_the_client_never_created_is_refused_32002(
    dual: Pair,
) -> None:
    client = dual.client()
    try:
        _open(client)
        forged = {
            "sessionId": "not-mine",
            "title": "Run it?",
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        }
        with pytest.raises(AcpProtocolException) as info:
            dual.agent._core.session.send_request("session/request_permission", forged).block(WAIT)
        assert info.value.code == -32002 and "unknown session" in info.value.message
        assert dual.permission_requests == []  # the application never saw it
        _turn(client, "ask")  # its own session's requests still reach the handler
        assert len(dual.permission_requests) == 1
    finally:
        client.close()
