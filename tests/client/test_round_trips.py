"""Every client→agent method round trip, async and sync, against the scripted agent in memory."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxacp.errors import AcpConnectionException, AcpProtocolException, AcpProtocolVersionException
from rxacp.schema import (
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    PromptRequest,
    PromptResponse,
)
from rxacp.schema import methods as m
from rxacp.schema.unstable import ForkSessionRequest, ForkSessionResponse

from .conftest import Rig, texts

SID = "sess-1"

# python_name -> (wire method, request wire JSON)
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "authenticate": (m.AUTHENTICATE, {"methodId": "token"}),
    "logout": (m.LOGOUT, {}),
    "new_session": (m.SESSION_NEW, {"cwd": "/tmp", "mcpServers": []}),
    "load_session": (m.SESSION_LOAD, {"sessionId": SID, "cwd": "/tmp", "mcpServers": []}),
    "list_sessions": (m.SESSION_LIST, {}),
    "delete_session": (m.SESSION_DELETE, {"sessionId": SID}),
    "resume_session": (m.SESSION_RESUME, {"sessionId": SID, "cwd": "/tmp"}),
    "close_session": (m.SESSION_CLOSE, {"sessionId": SID}),
    "set_session_mode": (m.SESSION_SET_MODE, {"sessionId": SID, "modeId": "code"}),
    "set_session_config_option": (
        m.SESSION_SET_CONFIG_OPTION,
        {"sessionId": SID, "configId": "model", "value": "fast"},
    ),
    "fork_session": (m.SESSION_FORK, {"sessionId": SID, "cwd": "/tmp"}),
    "list_providers": (m.PROVIDERS_LIST, {}),
    "set_provider": (
        m.PROVIDERS_SET,
        {"providerId": "p", "apiType": "openai", "baseUrl": "https://x.invalid"},
    ),
    "disable_provider": (m.PROVIDERS_DISABLE, {"providerId": "p"}),
    "archive_session": (m.SESSION_ARCHIVE, {"sessionId": SID}),
    "unarchive_session": (m.SESSION_UNARCHIVE, {"sessionId": SID}),
    "session_status": (m.SESSION_STATUS, {"sessionId": SID}),
    "set_session_title": (m.SESSION_SET_TITLE, {"sessionId": SID, "title": "Renamed"}),
    "auth_status": (m.AUTH_STATUS, {}),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_async_method_sends_its_request_and_emits_the_typed_answer(rig: Rig, name: str) -> None:
    method, request = CALLS[name]
    client = rig.async_builder().build()
    rig.on_close(client.close)
    client.initialize().run()
    result = getattr(client, name)(request).run()
    spec = m.METHODS[method]
    assert spec.result_type is not None and isinstance(result, spec.result_type)
    sent = rig.agent.messages(method)
    assert len(sent) == 1 and sent[0]["params"] == spec.params_type.from_wire(request).to_wire()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_sync_method_returns_the_typed_answer(rig: Rig, name: str) -> None:
    method, request = CALLS[name]
    client = rig.initialized_sync_client()
    result = getattr(client, name)(request)
    result_type = m.METHODS[method].result_type
    assert result_type is not None and isinstance(result, result_type)
    assert rig.agent.count(method) == 1


def test_methods_accept_the_request_model_as_well_as_its_wire_dict(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    created = client.new_session(NewSessionRequest.of("/tmp"))
    forked = client.fork_session(ForkSessionRequest(session_id=SID, cwd="/tmp"))
    assert created.session_id == "sess-1" and isinstance(forked, ForkSessionResponse)


def test_a_request_of_the_wrong_type_is_a_type_error_naming_the_expected_model(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    with pytest.raises(TypeError, match="new_session\\(\\) takes a NewSessionRequest"):
        # deliberately the wrong model: the type checker refuses it too, this proves the runtime
        client.new_session(PromptRequest.text(SID, "x"))  # type: ignore[arg-type]


def test_initialize_without_arguments_sends_version_1_with_the_builder_capabilities_and_info(
    rig: Rig,
) -> None:
    client = (
        rig.sync_builder()
        .client_info({"name": "my-editor", "version": "2.0"})
        .read_text_file_handler(lambda req: None)
        .build()
    )
    rig.on_close(client.close)
    assert client.agent_capabilities is None
    response = client.initialize()
    params = rig.agent.messages(m.INITIALIZE)[0]["params"]
    assert params["protocolVersion"] == 1
    assert params["clientCapabilities"] == {"fs": {"readTextFile": True}}
    assert params["clientInfo"] == {"name": "my-editor", "version": "2.0"}
    assert isinstance(response, InitializeResponse)
    caps = client.agent_capabilities
    assert caps is not None and caps.supports("loadSession") and caps.protocol_version == 1
    assert caps.peer_info is not None and caps.peer_info.name == "fake-agent"


def test_initialize_with_an_explicit_request_sends_it_unchanged(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    client.initialize(InitializeRequest.of({"terminal": True}))
    assert rig.agent.messages(m.INITIALIZE)[0]["params"]["clientCapabilities"] == {"terminal": True}


def test_an_unsupported_agent_protocol_version_closes_and_names_both_versions(rig: Rig) -> None:
    rig.agent_options = {"protocol_version": 7}
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    with pytest.raises(
        AcpProtocolVersionException, match=r"version 7.*asked for version 1"
    ) as info:
        client.initialize()
    assert info.value.received == 7 and info.value.requested == 1
    assert client.agent_capabilities is None
    assert client.session.wait_closed(2.0)
    with pytest.raises(AcpConnectionException):
        client.new_session({"cwd": "/tmp", "mcpServers": []})


def test_prompt_emits_the_answer_after_the_turns_updates(rig: Rig) -> None:
    updates: list[Any] = []
    client = rig.async_builder().session_update_consumer(updates.append).build()
    rig.on_close(client.close)
    answer = client.prompt(PromptRequest.text(SID, "echo hello")).run()
    assert answer.stop_reason == "end_turn" and texts(updates) == ["hello"]


def test_ext_method_round_trips_raw_json_and_ext_notification_is_sent(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    assert client.ext_method("_test/echo", {"a": [1, "é"]}) == {"a": [1, "é"]}
    client.ext_notification("_test/note", {"x": 1})
    rig.agent.wait_for_method("_test/note")
    assert rig.agent.messages("_test/note")[0]["params"] == {"x": 1}


def test_an_unknown_extension_method_errors_with_method_not_found(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    with pytest.raises(AcpProtocolException) as info:
        client.ext_method("_nobody/home")
    assert info.value.code == -32601


@pytest.mark.parametrize("name", ["ping", "session/new", ""])
def test_extension_names_must_start_with_an_underscore(rig: Rig, name: str) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    with pytest.raises(ValueError, match="must start with '_'"):
        client.ext_method(name)
    with pytest.raises(ValueError, match="must start with '_'"):
        client.ext_notification(name)


def test_calls_are_cold_nothing_is_sent_before_subscription(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    lazy = client.async_client.new_session({"cwd": "/tmp", "mcpServers": []})
    client.ext_method("_test/echo", {})  # a marker: everything sent before it has arrived
    assert rig.agent.count(m.SESSION_NEW) == 0
    lazy.run()
    assert rig.agent.count(m.SESSION_NEW) == 1


def test_cancel_and_ext_notification_are_cold_like_every_other_call(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    cancel = client.cancel("sess-a")
    note = client.ext_notification("_test/note", {"x": 1})
    client.ext_method("_test/echo", {}).run()  # a marker: everything sent before it has arrived
    assert rig.agent.count(m.SESSION_CANCEL) == 0 and rig.agent.count("_test/note") == 0
    done: list[str] = []
    cancel.subscribe(on_completed=lambda: done.append("cancel"))
    note.subscribe(on_completed=lambda: done.append("note"))
    client.ext_method("_test/echo", {}).run()
    assert done == ["cancel", "note"]
    assert rig.agent.count(m.SESSION_CANCEL) == 1 and rig.agent.count("_test/note") == 1


def test_async_calls_can_be_awaited_from_an_asyncio_program(rig: Rig) -> None:
    updates: list[Any] = []
    client = rig.async_builder().session_update_consumer(updates.append).build()

    async def main() -> tuple[str, PromptResponse]:
        async with client:
            await client.initialize()
            session = await client.new_session({"cwd": "/tmp", "mcpServers": []})
            answer = await client.prompt(PromptRequest.text(session.session_id, "stream 3"))
            await client.cancel(session.session_id)
            return session.session_id, answer

    session_id, answer = asyncio.run(asyncio.wait_for(main(), 5))
    assert session_id == "sess-1" and answer.stop_reason == "end_turn"
    assert texts(updates) == ["0", "1", "2"]
    assert client.session.wait_closed(2.0)


def test_a_client_on_a_loop_the_user_runs_works_with_await(rig: Rig) -> None:
    async def main() -> str:
        loop = asyncio.get_running_loop()
        client = rig.async_builder().event_loop(loop).build()
        async with client:
            await client.initialize()
            session = await client.new_session({"cwd": "/tmp", "mcpServers": []})
            return session.session_id

    assert asyncio.run(asyncio.wait_for(main(), 5)) == "sess-1"


def test_close_fails_pending_calls_with_a_connection_error(rig: Rig) -> None:
    client = rig.async_builder().build()
    errors: list[Exception] = []
    client.ext_method("_test/hang").subscribe(on_error=errors.append)
    rig.agent.wait_for_method("_test/hang")
    client.close()
    assert len(errors) == 1 and isinstance(errors[0], AcpConnectionException)


def test_sync_context_manager_closes_the_connection(rig: Rig) -> None:
    with rig.sync_builder().build() as client:
        client.initialize()
    assert client.session.wait_closed(2.0) and not client.session.is_open


def test_unstable_models_of_unchanged_definitions_are_the_stable_classes() -> None:
    import rxacp.schema.unstable as unstable

    assert unstable.PromptRequest is PromptRequest
    request = unstable.PromptRequest.text(SID, "x")
    from rxacp.client._calls import coerce

    assert coerce(m.METHODS[m.SESSION_PROMPT], request) is request  # no wire round trip


def test_an_unstable_model_of_a_changed_definition_is_a_type_error_saying_what_to_pass(
    rig: Rig,
) -> None:
    import rxacp.schema.unstable as unstable

    # the unstable one is another class, with more fields
    assert set(unstable.NewSessionRequest.model_fields) > set(NewSessionRequest.model_fields)
    client = rig.async_builder().build()
    rig.on_close(client.close)
    with pytest.raises(TypeError, match=r"rxacp\.schema\.unstable\.NewSessionRequest .*to_wire"):
        # deliberately the other schema's model: refused statically too, this proves the runtime
        client.new_session(unstable.NewSessionRequest.of("/tmp"))  # type: ignore[arg-type]


def test_an_async_client_built_inside_a_running_loop_runs_on_that_loop(rig: Rig) -> None:
    """As asyncio libraries do: no loop thread of its own, so no thread hand-off per call."""

    async def main() -> tuple[bool, bool, str]:
        client = rig.async_builder().build()
        async with client:
            await client.initialize()
            session = await client.new_session({"cwd": "/tmp", "mcpServers": []})
            on_this_loop = client.session.loop is asyncio.get_running_loop()
            owned = client.session.owns_loop
        return on_this_loop, owned, session.session_id

    on_this_loop, owned, session_id = asyncio.run(asyncio.wait_for(main(), 10))
    assert on_this_loop and not owned and session_id == "sess-1"


def test_event_loop_none_gives_an_async_client_built_in_a_loop_its_own_loop_thread(
    rig: Rig,
) -> None:
    async def main() -> tuple[bool, bool]:
        client = rig.async_builder().event_loop(None).build()
        async with client:
            await client.initialize()
            return client.session.loop is asyncio.get_running_loop(), client.session.owns_loop

    assert asyncio.run(asyncio.wait_for(main(), 10)) == (False, True)


def test_an_async_client_built_outside_any_loop_gets_its_own_loop_thread(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    client.initialize().run()
    assert client.session.owns_loop
