"""String unions are StrEnums generated from the schema, accepted wherever the string is."""

from __future__ import annotations

import json
from enum import StrEnum

import pytest

import rxacp.schema as schema
from rxacp.schema import (
    AgentMessageChunk,
    ContentBlockKind,
    PermissionOption,
    PermissionOptionKind,
    PromptResponse,
    SessionNotification,
    SessionUpdateKind,
    StopReason,
    ToolCall,
    ToolCallStatus,
    ToolKind,
)

from ._strategies import load_schema


def _string_unions() -> dict[str, list[str]]:
    defs = load_schema("schema.json")["$defs"]
    out: dict[str, list[str]] = {}
    for name, definition in defs.items():
        variants = definition.get("oneOf") or definition.get("anyOf")
        if variants and all(v.get("type") == "string" and "properties" not in v for v in variants):
            out[name] = [v["const"] for v in variants if "const" in v]
    return out


@pytest.mark.parametrize(("name", "values"), sorted(_string_unions().items()))
def test_every_string_union_of_the_schema_is_a_str_enum_of_its_values(
    name: str, values: list[str]
) -> None:
    enum = getattr(schema, name)
    assert issubclass(enum, StrEnum)
    assert [m.value for m in enum] == values
    assert all(m == m.value for m in enum)  # equal to the wire string


def test_java_style_constants_read_as_the_wire_strings() -> None:
    # Held as ``str`` (what they are) so the type checker sees a str comparison.
    pairs: list[tuple[str, str]] = [
        (StopReason.END_TURN, "end_turn"),
        (ToolKind.EDIT, "edit"),
        (ToolCallStatus.PENDING, "pending"),
        (PermissionOptionKind.ALLOW_ONCE, "allow_once"),
        (SessionUpdateKind.AGENT_MESSAGE_CHUNK, "agent_message_chunk"),
        (SessionUpdateKind.COMPACTION_SUMMARY_CHUNK, "compaction_summary_chunk"),
        (ContentBlockKind.RESOURCE_LINK, "resource_link"),
    ]
    for constant, wire in pairs:
        assert constant == wire


def test_an_enum_member_and_a_plain_string_give_the_same_wire_json() -> None:
    by_enum = ToolCall(
        tool_call_id="t", title="x", kind=ToolKind.EDIT, status=ToolCallStatus.PENDING
    )
    by_str = ToolCall(tool_call_id="t", title="x", kind="edit", status="pending")
    assert by_enum.to_wire() == by_str.to_wire()
    assert json.loads(by_enum.to_wire_json()) == by_str.to_wire()
    assert by_enum.to_wire()["kind"].__class__ is str  # plain JSON string on the wire
    assert PromptResponse.of(StopReason.REFUSAL).to_wire() == {"stopReason": "refusal"}
    option = PermissionOption(option_id="o", name="n", kind=PermissionOptionKind.REJECT_ONCE)
    assert option.to_wire()["kind"] == "reject_once"


def test_received_values_compare_equal_to_members_and_unknown_strings_are_kept() -> None:
    assert PromptResponse.from_wire({"stopReason": "end_turn"}).stop_reason == StopReason.END_TURN
    custom = PromptResponse.from_wire({"stopReason": "_vendor_reason"})
    assert custom.stop_reason == "_vendor_reason"
    assert custom.to_wire() == {"stopReason": "_vendor_reason"}


def test_a_union_tag_given_as_a_member_selects_the_variant() -> None:
    note = SessionNotification.from_wire(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": SessionUpdateKind.AGENT_MESSAGE_CHUNK,
                "content": {"type": ContentBlockKind.TEXT, "text": "hi"},
            },
        }
    )
    assert isinstance(note.update, AgentMessageChunk)
    assert note.to_wire()["update"]["sessionUpdate"] == "agent_message_chunk"
