"""One duration rule everywhere: every public duration parameter takes a ``timedelta`` or float
seconds (``rxacp._durations``), the test kit included."""

from __future__ import annotations

import datetime as dt
import importlib
import inspect
import re
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rxacp import AcpAgent
from rxacp._durations import wait_seconds
from rxacp.agent import PromptTimeouts
from rxacp.schema import NewSessionResponse, PromptResponse
from rxacp.session import Completion
from rxacp.testing import MockAcpAgent, MockAcpClient
from rxacp.transport import AgentParameters

pytestmark = pytest.mark.timeout(30)

MODULES = [
    "rxacp",
    "rxacp.client",
    "rxacp.agent",
    "rxacp.agent.support",
    "rxacp.session",
    "rxacp.transport",
    "rxacp.testing",
    "rxacp.testing.mocks",
    "rxacp.testing.conformance",
    "rxacp.transport.websocket",
]
"""The public modules walked."""

DURATION_NAME = re.compile(r"(^|_)(timeout|period|duration|seconds|grace)$")
NOT_DURATIONS = {"timeout_seconds"}  # AcpTimeoutException's value: seconds by its very name
TYPE_CHECKING_NAMES = {"Completion": Completion}
"""Names modules import only for type checking (to stay light at import)."""
STORED_AS_TIMEDELTA = {"rxacp.agent.PromptTimeouts.__init__"}
"""A frozen dataclass whose fields hold the normalised ``timedelta``; it takes seconds too."""


def _public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    seen: set[int] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    func = getattr(member, "__func__", member)
                    if callable(func):
                        yield f"{module_name}.{name}.{attr}", func
            elif callable(obj):
                yield f"{module_name}.{name}", obj


def _duration_parameters() -> list[tuple[str, str, Any]]:
    found = []
    for qualname, func in _public_callables():
        try:
            hints = typing.get_type_hints(func, localns=TYPE_CHECKING_NAMES)
            parameters = inspect.signature(func).parameters
        except (TypeError, ValueError, NameError):  # an alias or a builtin, not a function
            continue
        for parameter in parameters:
            if DURATION_NAME.search(parameter) and parameter not in NOT_DURATIONS:
                found.append((qualname, parameter, hints.get(parameter)))
    return found


def test_every_public_duration_parameter_accepts_a_timedelta_and_float_seconds() -> None:
    params = _duration_parameters()
    assert len(params) > 40  # the walk found the public surface
    refused = [
        f"{where}({name}: {hint})"
        for where, name, hint in params
        if not {dt.timedelta, float} <= set(typing.get_args(hint) or (hint,))
        and where not in STORED_AS_TIMEDELTA
    ]
    assert refused == []
    seconds = PromptTimeouts(cancel_grace_period=5, max_prompt_duration=1.5)  # type: ignore[arg-type]
    assert seconds == PromptTimeouts(
        cancel_grace_period=dt.timedelta(seconds=5),
        max_prompt_duration=dt.timedelta(seconds=1.5),
    )
    names = {where for where, _, _ in params}
    for expected in (
        "rxacp.testing.MockAcpAgent.expect_prompts",
        "rxacp.testing.MockAcpClient.prompt",
        "rxacp.testing.MockAcpClient.__init__",
        "rxacp.testing.mocks.TrafficLog.wait_until",
        "rxacp.testing.InMemoryTransportPair.close",
        "rxacp.session.AcpSession.close_gracefully",
        "rxacp.AcpTransport.close_gracefully",
        "rxacp.transport.websocket.WebSocketAcpClientTransport.__init__",
        "rxacp.transport.websocket.WebSocketAcpAgentServer.start",
    ):
        assert expected in names


def test_wait_seconds_takes_both_forms_and_keeps_the_default_for_none() -> None:
    assert wait_seconds(dt.timedelta(milliseconds=1500), default=5.0) == 1.5
    assert wait_seconds(2, default=5.0) == 2.0
    assert wait_seconds(None, default=5.0) == 5.0
    assert wait_seconds(0, default=5.0) == 0.0  # a wait of zero checks once
    with pytest.raises(TypeError, match="timeout must be a timedelta or seconds"):
        wait_seconds("5s", default=5.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        wait_seconds(dt.timedelta(seconds=-1), default=5.0)


def _echo_agent(transport: Any) -> Any:
    def prompt(req: Any, ctx: Any) -> PromptResponse:
        ctx.send_message(req.prompt_text())
        return PromptResponse.end_turn()

    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(prompt)
    )


def test_the_test_kit_waits_take_a_timedelta() -> None:
    five = dt.timedelta(seconds=5)
    with MockAcpClient.connect(_echo_agent, timeout=five) as client:  # was: fails on prompt()
        assert client.timeout == 5.0
        assert client.prompt("hi", timeout=five).stop_reason == "end_turn"
        assert len(client.expect_updates(1, five)) == 1
        assert client.prompt_and_cancel_after(0, "more", timeout=five).stop_reason in (
            "end_turn",
            "cancelled",
        )
    with MockAcpAgent(timeout=five) as mock:
        client_of_mock = MockAcpClient(mock.client_transport, timeout=five)
        client_of_mock.prompt("hello", timeout=five)
        assert [p.prompt_text() for p in mock.expect_prompts(1, five)] == ["hello"]
        assert len(mock.expect_received("session/new", 1, timeout=five)) == 1
        client_of_mock.close()


def test_a_kit_wait_given_a_timedelta_fails_with_the_kits_assertion_not_a_type_error() -> None:
    with MockAcpAgent(timeout=dt.timedelta(milliseconds=50)) as mock:
        with pytest.raises(AssertionError, match=r"expected 1 session/prompt message"):
            mock.expect_prompts(1)
        with pytest.raises(AssertionError, match=r"within 0\.0 s"):
            mock.expect_prompts(1, dt.timedelta(0))


def test_the_builders_timeout_and_agent_parameters_take_a_timedelta() -> None:
    mock = MockAcpAgent.builder().timeout(dt.timedelta(seconds=2)).build()
    assert mock._timeout == 2.0
    mock.close()
    params = AgentParameters("agent", close_timeout=dt.timedelta(seconds=1), terminate_timeout=0.5)
    assert (params.close_timeout, params.terminate_timeout) == (1.0, 0.5)
    built = AgentParameters.builder("agent").close_timeout(dt.timedelta(seconds=3)).build()
    assert built.close_timeout == 3.0
    with pytest.raises(ValueError, match="close_timeout must be >= 0"):
        AgentParameters("agent", close_timeout=-1)


def test_the_websocket_options_take_a_timedelta_and_zero_switches_a_keepalive_off() -> None:
    from rxacp.transport.websocket import WebSocketAcpAgentServer, WebSocketAcpClientTransport

    client = WebSocketAcpClientTransport(
        "ws://127.0.0.1:1/acp",
        connect_timeout=dt.timedelta(seconds=3),
        ping_interval=0,
        close_timeout=dt.timedelta(milliseconds=500),
    )
    assert client.connect_timeout == 3.0
    assert (client._opts.ping_interval, client._opts.close_timeout) == (None, 0.5)
    server = WebSocketAcpAgentServer(lambda t: None, idle_timeout=dt.timedelta(minutes=1))
    assert server._idle == 60.0
    with pytest.raises(ValueError, match="close_timeout must be > 0"):
        WebSocketAcpClientTransport("ws://127.0.0.1:1/acp", close_timeout=0)
