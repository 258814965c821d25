"""Java-SDK-style factories and names produce the documented wire shapes."""

from __future__ import annotations

import pytest

from rxacp.schema import (
    LATEST_PROTOCOL_VERSION,
    AgentCapabilities,
    AgentMessageChunk,
    ClientCapabilities,
    Content,
    EmbeddedResource,
    InitializeRequest,
    InitializeResponse,
    McpServerStdio,
    PermissionCancelled,
    PermissionSelected,
    PromptRequest,
    PromptResponse,
    RequestPermissionResponse,
    Resource,
    SessionNotification,
    TextContent,
    ToolCallContentBlock,
    agent_message_text,
    mcp_server_from_wire,
    permission_outcome_from_wire,
    unstable,
)


def test_initialize_response_ok_uses_protocol_version_one_and_default_capabilities() -> None:
    assert InitializeResponse.ok().to_wire() == {"protocolVersion": 1, "agentCapabilities": {}}
    response = InitializeResponse.ok(AgentCapabilities(load_session=True))
    assert response.agent_capabilities is not None
    assert response.agent_capabilities.load_session is True
    assert LATEST_PROTOCOL_VERSION == 1


def test_initialize_request_of_builds_a_version_one_request() -> None:
    caps = ClientCapabilities(terminal=True)
    assert InitializeRequest.of(caps).to_wire() == {
        "protocolVersion": 1,
        "clientCapabilities": {"terminal": True},
    }


def test_prompt_response_factories_set_the_stop_reason() -> None:
    assert PromptResponse.end_turn().to_wire() == {"stopReason": "end_turn"}
    assert PromptResponse.cancelled().stop_reason == "cancelled"
    assert PromptResponse.refusal().stop_reason == "refusal"


def test_prompt_request_text_builds_one_text_block() -> None:
    request = PromptRequest.text("s1", "hello")
    assert request.to_wire() == {"sessionId": "s1", "prompt": [{"type": "text", "text": "hello"}]}
    assert request.prompt_text() == "hello"


def test_variants_fill_in_their_discriminator_tag() -> None:
    assert TextContent(text="hi").to_wire() == {"type": "text", "text": "hi"}
    chunk = AgentMessageChunk(content=TextContent(text="hi"))
    assert chunk.to_wire() == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"},
    }
    assert agent_message_text("hi") == chunk
    notification = SessionNotification(session_id="s", update=chunk)
    assert SessionNotification.from_wire(notification.to_wire()) == notification
    assert SessionNotification.agent_text("s", "hi") == notification


def test_permission_outcome_names_follow_the_java_sdk() -> None:
    selected = PermissionSelected(option_id="allow")
    assert selected.to_wire() == {"outcome": "selected", "optionId": "allow"}
    assert PermissionCancelled().to_wire() == {"outcome": "cancelled"}
    assert isinstance(
        permission_outcome_from_wire({"outcome": "selected", "optionId": "x"}), PermissionSelected
    )
    assert RequestPermissionResponse.selected("allow").outcome == selected
    assert RequestPermissionResponse.cancelled().to_wire() == {"outcome": {"outcome": "cancelled"}}


def test_java_aliases_point_at_the_schema_models() -> None:
    assert Resource is EmbeddedResource
    assert ToolCallContentBlock is Content
    assert isinstance(
        mcp_server_from_wire({"name": "n", "command": "c", "args": [], "env": []}), McpServerStdio
    )


def test_factories_also_exist_on_the_unstable_models_and_accept_stable_arguments() -> None:
    response = unstable.InitializeResponse.ok(AgentCapabilities(load_session=True))
    assert isinstance(response, unstable.InitializeResponse)
    assert response.to_wire() == {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
    assert unstable.PromptResponse.end_turn().stop_reason == "end_turn"


def test_java_style_config_option_factories_build_select_and_boolean_requests() -> None:
    from rxacp.schema import SetSessionConfigOptionRequest

    assert SetSessionConfigOptionRequest.select("s", "model", "fast").to_wire() == {
        "sessionId": "s",
        "configId": "model",
        "value": "fast",
    }
    assert SetSessionConfigOptionRequest.bool("s", "yolo", True).to_wire() == {
        "sessionId": "s",
        "configId": "yolo",
        "type": "boolean",
        "value": True,
    }


def test_elicitation_request_and_response_factories_match_the_wire_forms() -> None:
    from rxacp.schema import CreateElicitationRequest, CreateElicitationResponse

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    form = CreateElicitationRequest.form("s", "Your name?", schema)
    assert form.to_wire() == {
        "sessionId": "s",
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": schema,
    }
    link = CreateElicitationRequest.url_mode("s", "Sign in", "e1", "https://example.com/login")
    assert link.to_wire() == {
        "sessionId": "s",
        "mode": "url",
        "message": "Sign in",
        "elicitationId": "e1",
        "url": "https://example.com/login",
    }
    assert CreateElicitationResponse.accept({"name": "Ada"}).to_wire() == {
        "action": "accept",
        "content": {"name": "Ada"},
    }
    assert CreateElicitationResponse.accept().to_wire() == {"action": "accept"}
    assert CreateElicitationResponse.decline().to_wire() == {"action": "decline"}
    assert CreateElicitationResponse.cancel().to_wire() == {"action": "cancel"}


def test_client_capabilities_factories_advertise_only_what_is_switched_on() -> None:
    from rxacp.schema import ClientCapabilities

    assert ClientCapabilities.of().to_wire() == {}
    assert ClientCapabilities.of(terminal=True, elicitation_form=True).to_wire() == {
        "terminal": True,
        "elicitation": {"form": {}},
    }
    assert ClientCapabilities.file_system().to_wire() == {
        "fs": {"readTextFile": True, "writeTextFile": True}
    }


def test_prompt_response_text_is_an_end_turn_answer_as_in_the_java_sdk() -> None:
    from rxacp.schema import PromptResponse, StopReason

    assert PromptResponse.text("done").stop_reason == StopReason.END_TURN
    assert PromptResponse.text("done").to_wire() == {"stopReason": "end_turn"}


@pytest.mark.parametrize(
    ("update", "text"),
    [
        ({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}, "hi"),
        ({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}}, ""),
        ({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "me"}}, ""),
        (
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "image", "data": "", "mimeType": "image/png"},
            },
            "",
        ),
        ({"sessionUpdate": "plan", "entries": []}, ""),
        ({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}, ""),
        ({"sessionUpdate": "_vendor_thing", "x": 1}, ""),
    ],
)
def test_message_text_is_the_agent_message_text_and_empty_for_any_other_update(
    update: dict[str, object], text: str
) -> None:
    """The README's client prints ``note.message_text()`` for every update: a plan or a tool
    call must not raise (before: ``note.update.content.text`` raised AttributeError)."""
    assert SessionNotification.of("s", update).message_text() == text
