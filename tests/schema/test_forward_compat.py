"""Unknown fields, unknown union variants, open enums and large/non-ASCII values survive."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from rxacp.schema import (
    AgentMessageChunk,
    CurrentModeUpdate,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    TextContent,
    ToolCall,
    UnknownContentBlock,
    UnknownSessionUpdate,
    UnknownToolCallContent,
    UsageUpdate,
    content_block_from_wire,
)


def test_unknown_top_level_and_nested_fields_survive_a_round_trip() -> None:
    wire: dict[str, Any] = {
        "sessionId": "s1",
        "futureTop": {"a": [1, None, "x"]},
        "nullExtra": None,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "futureNested": 7,
            "content": {"type": "text", "text": "hi", "futureDeep": {"k": None}},
        },
    }
    notification = SessionNotification.from_wire(wire)
    assert isinstance(notification.update, AgentMessageChunk)
    assert notification.model_extra == {"futureTop": {"a": [1, None, "x"]}, "nullExtra": None}
    assert notification.to_wire() == wire


def test_unknown_session_update_becomes_generic_model_with_raw_payload() -> None:
    raw = {"sessionUpdate": "teleport", "destination": {"x": 1}, "note": None, "ünï": "çødé"}
    notification = SessionNotification.from_wire({"sessionId": "s", "update": raw})
    assert isinstance(notification.update, UnknownSessionUpdate)
    assert notification.update.session_update == "teleport"
    assert notification.to_wire() == {"sessionId": "s", "update": raw}


def test_known_session_update_with_malformed_payload_is_kept_as_unknown_not_dropped() -> None:
    raw = {"sessionUpdate": "current_mode_update", "modeId": "code"}
    notification = SessionNotification.from_wire({"sessionId": "s", "update": raw})
    assert isinstance(notification.update, UnknownSessionUpdate)
    assert notification.to_wire()["update"] == raw


def test_unknown_content_block_type_is_preserved_inside_a_prompt() -> None:
    block = {"type": "hologram", "frames": [1, 2], "_meta": {"v": 2}}
    request = PromptRequest.from_wire(
        {"sessionId": "s", "prompt": [block, {"type": "text", "text": "t"}]}
    )
    assert isinstance(request.prompt[0], UnknownContentBlock)
    assert isinstance(request.prompt[1], TextContent)
    assert request.to_wire()["prompt"][0] == block
    assert isinstance(content_block_from_wire(block), UnknownContentBlock)


def test_unknown_tool_call_content_type_is_preserved() -> None:
    raw = {"type": "map", "lat": 1.5}
    update = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "x", "content": [raw]}
    notification = SessionNotification.from_wire({"sessionId": "s", "update": update})
    assert isinstance(notification.update, ToolCall)
    assert notification.update.content is not None
    assert isinstance(notification.update.content[0], UnknownToolCallContent)
    assert notification.to_wire()["update"] == update


def test_unknown_enum_strings_are_accepted_and_kept() -> None:
    response = PromptResponse.from_wire({"stopReason": "out_of_coffee"})
    assert response.stop_reason == "out_of_coffee"
    update = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "kind": "teleport"}
    parsed = SessionNotification.from_wire({"sessionId": "s", "update": update})
    assert parsed.to_wire()["update"] == update


def test_large_integers_and_non_ascii_strings_round_trip() -> None:
    wire = {"sessionUpdate": "usage_update", "used": 2**64 - 1, "size": 2**53 + 1}
    update = UsageUpdate.from_wire(wire)
    assert update.used == 2**64 - 1
    assert update.to_wire() == wire
    text = TextContent(text="héllo 世界 🚀 \u0000")
    assert TextContent.from_wire_json(text.to_wire_json()) == text
    assert "世界" in text.to_wire_json()


def test_integers_outside_their_schema_format_are_validation_errors() -> None:
    # `used`/`size` are uint64: 2**64 does not fit, and neither does a negative count.
    for bad in (2**64, -1):
        with pytest.raises(ValidationError, match="used"):
            UsageUpdate.from_wire({"sessionUpdate": "usage_update", "used": bad, "size": 1})


def test_snake_case_keys_on_the_wire_stay_unknown_fields() -> None:
    parsed = CurrentModeUpdate.from_wire({"currentModeId": "a", "current_mode_id": "b"})
    assert parsed.current_mode_id == "a"
    assert parsed.model_extra == {"current_mode_id": "b"}


def test_a_message_that_breaks_the_schema_raises_a_validation_error_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="sessionId"):
        PromptRequest.from_wire({"prompt": []})
    with pytest.raises(ValidationError):
        SessionNotification.from_wire({"sessionId": "s", "update": {"noTag": 1}})


def test_a_null_unknown_field_survives_even_when_it_is_the_first_one_the_process_sees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rxacp.schema import _base

    monkeypatch.setattr(_base, "_null_extras", [False])  # as in a fresh process
    plain = PromptRequest.text("s", "hi")
    assert plain.to_wire() == {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
    wire: dict[str, Any] = {
        "sessionId": "s",
        "prompt": [{"type": "text", "text": "hi", "deep": None}],
        "top": None,
    }
    request = PromptRequest.from_wire(wire)
    assert request.to_wire() == wire
    assert json.loads(request.to_wire_json()) == wire
    assert plain.to_wire() == {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


def test_a_malformed_known_content_block_is_an_error_naming_its_field_not_an_unknown_block() -> (
    None
):
    from rxacp.schema._base import validation_errors

    with pytest.raises(ValidationError) as info:
        PromptRequest.from_wire({"sessionId": "s", "prompt": [{"type": "text"}]})
    errors = validation_errors(info.value)
    assert [(e["loc"], e["msg"]) for e in errors] == [
        (("prompt", 0, "text", "text"), "Field required")
    ]
    with pytest.raises(ValidationError) as info:
        PromptRequest.from_wire({"sessionId": "s", "prompt": [{"text": "no tag"}]})
    assert validation_errors(info.value)[0]["loc"] == ("prompt", 0)


def test_union_fields_accept_known_and_unknown_variant_instances() -> None:
    unknown = UnknownContentBlock.from_wire({"type": "hologram", "frames": [1]})
    request = PromptRequest(session_id="s", prompt=[TextContent(text="a"), unknown])
    assert request.to_wire()["prompt"] == [
        {"type": "text", "text": "a"},
        {"type": "hologram", "frames": [1]},
    ]


def test_codex_acp_env_var_auth_methods_stay_unknown_auth_methods_with_their_payload() -> None:
    # codex-acp 0.16.0 sends `"type": "env_var"` (an older unstable draft no schema has now).
    from rxacp.schema import InitializeResponse, UnknownAuthMethod

    method = {"id": "api-key", "name": "API key", "type": "env_var", "varName": "OPENAI_API_KEY"}
    answer = InitializeResponse.from_wire(
        {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": [method]}
    )
    (parsed,) = answer.auth_methods or []
    assert isinstance(parsed, UnknownAuthMethod)
    assert parsed.to_wire() == method
    assert answer.to_wire()["authMethods"] == [method]
