"""Builders (validation, default capabilities) and the blocking client's wait/interrupt rules."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxacp.client import AcpAsyncClient, AcpClient, AcpSyncClient
from rxacp.errors import AcpTimeoutException
from rxacp.schema import ClientCapabilities, PromptRequest
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST, AcpObservable

from .conftest import Rig


def _none(req: Any) -> None:
    return None


def _sent_capabilities(rig: Rig, builder: Any) -> Any:
    client = builder.build()
    rig.on_close(client.close)
    answer = client.initialize()
    if isinstance(answer, AcpObservable):
        answer.run()
    return rig.agent.messages(m.INITIALIZE)[0]["params"]["clientCapabilities"]


def test_acp_client_is_a_factory_not_a_class_to_instantiate() -> None:
    with pytest.raises(TypeError, match=r"AcpClient\.async_"):
        AcpClient()


def test_a_builder_needs_a_transport() -> None:
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="AcpTransport"):
        AcpClient.async_("not a transport")  # type: ignore[arg-type]


def test_without_handlers_no_client_capability_is_advertised(rig: Rig) -> None:
    assert _sent_capabilities(rig, rig.async_builder()) == {}


def test_default_capabilities_follow_the_registered_handlers(rig: Rig) -> None:
    builder = (
        rig.sync_builder()
        .read_text_file_handler(_none)
        .write_text_file_handler(_none)
        .create_terminal_handler(_none)
        .terminal_output_handler(_none)
        .release_terminal_handler(_none)
        .wait_for_terminal_exit_handler(_none)
        .kill_terminal_handler(_none)
        .create_elicitation_handler(_none)
        .elicitation_complete_consumer(_none)
    )
    assert _sent_capabilities(rig, builder) == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "elicitation": {"form": {}, "url": {}},
    }


def test_terminal_is_advertised_only_when_every_terminal_handler_is_set(rig: Rig) -> None:
    builder = rig.async_builder().create_terminal_handler(_none).kill_terminal_handler(_none)
    assert _sent_capabilities(rig, builder) == {}


def test_explicit_client_capabilities_win_over_the_defaults(rig: Rig) -> None:
    builder = (
        rig.async_builder()
        .read_text_file_handler(_none)
        .client_capabilities(ClientCapabilities.from_wire({"terminal": True}))
    )
    assert _sent_capabilities(rig, builder) == {"terminal": True}


def test_builder_rejects_bad_arguments_with_clear_errors(rig: Rig) -> None:
    builder = rig.async_builder()
    with pytest.raises(ValueError, match="must start with '_'"):
        builder.ext_request_handler("ping", _none)
    with pytest.raises(ValueError, match=r"ext_notification_handler.*must start with '_'"):
        builder.ext_notification_handler("session/update", _none)
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="read_text_file_handler takes a callable"):
        builder.read_text_file_handler("not callable")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="session_update_consumer takes a callable"):
        builder.session_update_consumer(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="client_capabilities takes a ClientCapabilities"):
        builder.client_capabilities(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="event_loop"):
        builder.event_loop("loop")  # type: ignore[arg-type]


def test_a_builder_builds_once(rig: Rig) -> None:
    builder = rig.async_builder()
    rig.on_close(builder.build().close)
    with pytest.raises(RuntimeError, match="already built"):
        builder.build()


# ---------------------------------------------------------------------------- sync waits
def test_ctrl_c_while_a_sync_call_waits_disposes_it_and_the_agent_gets_cancel_request(
    rig: Rig,
) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)

    def interrupted_wait(event: threading.Event, timeout: float | None) -> bool:
        rig.agent.wait_for_method(m.SESSION_PROMPT)  # the request is out, then "Ctrl-C"
        raise KeyboardInterrupt

    client._wait = interrupted_wait
    with pytest.raises(KeyboardInterrupt):
        client.prompt(PromptRequest.text("sess-1", "hang"))
    rig.agent.wait_for_method(CANCEL_REQUEST)
    prompt_id = rig.agent.messages(m.SESSION_PROMPT)[0]["id"]
    assert rig.agent.messages(CANCEL_REQUEST)[0]["params"] == {"requestId": prompt_id}
    # a prompt: session/cancel first, once (issue 14), and the session stays usable
    assert rig.agent.count(m.SESSION_CANCEL) == 1
    assert rig.agent.methods().index(m.SESSION_CANCEL) < rig.agent.methods().index(CANCEL_REQUEST)
    client._wait = threading.Event.wait
    assert client.prompt(PromptRequest.text("sess-1", "echo again")).stop_reason == "end_turn"


def test_a_sync_wait_that_outlives_its_bound_disposes_and_raises_timeout(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    bounds: list[float | None] = []

    def expired(event: threading.Event, timeout: float | None) -> bool:
        bounds.append(timeout)
        rig.agent.wait_for_method("_test/hang")
        return False

    client._wait = expired
    with pytest.raises(AcpTimeoutException, match="_test/hang"):
        client.ext_method("_test/hang")
    rig.agent.wait_for_method(CANCEL_REQUEST)
    assert bounds == [65.0]  # the 60 s request timeout plus slack


def test_a_sync_prompt_waits_without_a_bound_unless_prompt_timeout_is_set(rig: Rig) -> None:
    bounds: list[float | None] = []

    def record(event: threading.Event, timeout: float | None) -> bool:
        bounds.append(timeout)
        return event.wait(3.0)

    other = Rig()
    rig.on_close(other.close)
    for builder in (rig.sync_builder(), other.sync_builder().prompt_timeout(30)):
        client = builder.build()
        rig.on_close(client.close)
        client._wait = record
        client.prompt(PromptRequest.text("sess-1", "echo x"))
    assert bounds == [None, 35.0]


def test_sync_client_exposes_negotiated_state(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    assert client.agent_capabilities is None and client.initialize_response is None
    client.initialize()
    assert client.agent_capabilities is not None
    assert client.initialize_response is not None
    assert client.async_client.agent_capabilities is client.agent_capabilities


def test_a_blocking_call_from_a_consumer_is_refused_instead_of_deadlocking(rig: Rig) -> None:
    errors: list[BaseException] = []
    done = threading.Event()
    holder: list[Any] = []

    def consumer(note: Any) -> None:
        try:
            holder[0].new_session({"cwd": "/tmp", "mcpServers": []})
        except RuntimeError as exc:
            errors.append(exc)
        done.set()

    client = rig.sync_builder().session_update_consumer(consumer).build()
    holder.append(client)
    rig.on_close(client.close)
    client.prompt(PromptRequest.text("sess-1", "echo x"))
    assert done.wait(3)
    assert "called from a consumer" in str(errors[0])


def test_wait_for_consumers_returns_once_every_update_before_an_async_answer_was_consumed(
    rig: Rig,
) -> None:
    gate = threading.Event()
    seen: list[Any] = []

    def slow_consumer(note: Any) -> None:
        gate.wait(10)
        seen.append(note.update.content.text)

    client = rig.sync_builder().session_update_consumer(slow_consumer).build()
    rig.on_close(client.close)
    answer = client.async_client.prompt(PromptRequest.text("sess-1", "stream 3")).block(10)
    assert answer.stop_reason == "end_turn"
    assert client.wait_for_consumers(0.05) is False  # the consumer thread is still held
    assert seen == []
    gate.set()
    assert client.wait_for_consumers(10) is True
    assert seen == ["0", "1", "2"]


def test_the_blocking_client_has_the_async_clients_state_with_the_same_docs(rig: Rig) -> None:
    client = (
        rig.sync_builder()
        .prompt_timeout(12.5)
        .client_capabilities({"fs": {"readTextFile": True}})
        .build()
    )
    rig.on_close(client.close)
    client.initialize()
    twin = client.async_client
    for name in (
        "session",
        "agent_capabilities",
        "initialize_response",
        "protocol_version",
        "client_capabilities",
        "prompt_timeout",
        "pending_permission_requests",
    ):
        assert getattr(client, name) == getattr(twin, name), name
        assert getattr(AcpSyncClient, name).__doc__ == getattr(AcpAsyncClient, name).__doc__
        assert getattr(AcpSyncClient, name).__doc__, name
    assert client.prompt_timeout == 12.5
    assert client.client_capabilities == {"fs": {"readTextFile": True}}
    assert client.pending_permission_requests == 0
