"""Raw ``request_handler(method, fn)`` / ``notification_handler(method, fn)`` for any method,
and ``handler_executor(executor)`` for blocking handlers (issue 19.8), agent side."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import pytest

from rxacp.agent import AcpAgent
from rxacp.agent.support import AcpAgentSupport, acp_agent, new_session
from rxacp.schema import NewSessionRequest, NewSessionResponse
from tests.agent.harness import AgentHarness, Notes
from tests.agent_support.harness import SupportHarness
from tests.session.conftest import ScriptedTransport

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_raw_request_handler_serves_any_method_with_raw_json(
    harnesses: list[AgentHarness], api: str
) -> None:
    seen: list[Any] = []

    def raw(params: Any) -> Any:
        seen.append(params)
        return {"echo": params["x"], "method": "vendor/thing"}

    h = AgentHarness(api, configure=lambda b: b.request_handler("vendor/thing", raw))
    harnesses.append(h)
    answer = h.request("vendor/thing", {"x": [1, 2]})
    assert answer["result"] == {"echo": [1, 2], "method": "vendor/thing"}
    assert seen == [{"x": [1, 2]}]


def test_a_raw_request_handler_overrides_the_typed_one_and_notifications_arrive_raw(
    harnesses: list[AgentHarness],
) -> None:
    note = Notes()
    h = AgentHarness(
        "sync",
        configure=lambda b: (
            b.new_session_handler(lambda req: NewSessionResponse(session_id="typed"))
            .request_handler("session/new", lambda params: {"sessionId": f"raw:{params['cwd']}"})
            .notification_handler("vendor/ping", note)
        ),
    )
    harnesses.append(h)
    assert h.request("session/new", {"cwd": "/w", "mcpServers": []})["result"] == {
        "sessionId": "raw:/w"
    }
    h.send({"method": "vendor/ping", "params": {"n": 1}})
    assert note.arrived.wait(10) and note.seen == [{"n": 1}]


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("session/prompt", "prompt_handler"),
        ("initialize", "initialize_handler"),
        ("session/cancel", "cancel_handler"),
        ("$/cancel_request", "JSON-RPC engine"),
        ("", "non-empty"),
    ],
)
def test_methods_with_sdk_rules_are_refused_naming_the_typed_setter(
    method: str, message: str
) -> None:
    builder = AcpAgent.sync(ScriptedTransport())
    with pytest.raises(ValueError, match=message):
        builder.request_handler(method, lambda p: None)


def test_blocking_handlers_run_on_the_handler_executor_which_rxacp_never_shuts_down(
    harnesses: list[AgentHarness],
) -> None:
    threads: list[str] = []
    executor = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="app-exec")
    try:

        def create(req: NewSessionRequest) -> NewSessionResponse:
            threads.append(threading.current_thread().name)
            return NewSessionResponse(session_id="s")

        h = AgentHarness(
            "sync", configure=lambda b: b.new_session_handler(create).handler_executor(executor)
        )
        harnesses.append(h)
        assert h.request("session/new", {"cwd": "/", "mcpServers": []})["result"] == {
            "sessionId": "s"
        }
        assert threads and threads[0].startswith("app-exec")
        h.close()
        assert executor.submit(lambda: 42).result(10) == 42, "the executor still runs"
    finally:
        executor.shutdown(wait=False)


def test_decorator_agents_take_a_handler_executor_too() -> None:
    threads: list[str] = []
    executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="deco-exec")

    @acp_agent(name="d", version="1")
    class Agent:
        @new_session
        def create(self, req: NewSessionRequest) -> NewSessionResponse:
            threads.append(threading.current_thread().name)
            return NewSessionResponse(session_id="d")

    h = SupportHarness(Agent(), configure=lambda b: b.handler_executor(executor))
    try:
        assert h.request("session/new", {"cwd": "/", "mcpServers": []})["result"] == {
            "sessionId": "d"
        }
        assert threads[0].startswith("deco-exec")
    finally:
        h.close()
        executor.shutdown(wait=False)
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match=r"concurrent\.futures\.Executor"):
        AcpAgentSupport.create(Agent()).handler_executor(object())  # type: ignore[arg-type]
