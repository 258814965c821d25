"""Lenient fields: x-deserialize-default-on-error/-on-null and x-deserialize-skip-invalid-items."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rxacp.schema import (
    AvailableCommandsUpdate,
    NewSessionRequest,
    Plan,
    SessionConfigOption,
    TextContent,
)


def test_invalid_value_of_a_lenient_optional_field_becomes_none() -> None:
    block = TextContent.from_wire({"type": "text", "text": "x", "annotations": 5, "_meta": "bad"})
    assert block.annotations is None
    assert block.meta is None
    assert block.to_wire() == {"type": "text", "text": "x"}


def test_invalid_items_of_a_skip_invalid_items_list_are_dropped() -> None:
    plan = Plan.from_wire(
        {
            "entries": [
                {"content": "a", "priority": "high", "status": "pending"},
                {"nonsense": True},
                {"content": "b", "priority": "low", "status": "completed"},
            ]
        }
    )
    assert [e.content for e in plan.entries] == ["a", "b"]


def test_required_lenient_list_with_an_invalid_value_becomes_empty() -> None:
    assert Plan.from_wire({"entries": "not a list"}).entries == []
    update = AvailableCommandsUpdate.from_wire({"availableCommands": {"x": 1}})
    assert update.available_commands == []


def test_required_default_on_null_list_reads_null_as_empty_but_rejects_other_junk() -> None:
    # Schema 2.4.0: session-setup lists are x-deserialize-default-on-null, no longer lenient.
    request = NewSessionRequest.from_wire({"cwd": "/", "mcpServers": None})
    assert request.mcp_servers == []
    assert request.to_wire() == {"cwd": "/", "mcpServers": []}
    with pytest.raises(ValidationError, match="mcpServers"):
        NewSessionRequest.from_wire({"cwd": "/", "mcpServers": 3})


def test_lenient_category_keeps_the_option_when_the_category_is_invalid() -> None:
    option = SessionConfigOption.from_wire(
        {
            "id": "m",
            "name": "Mode",
            "type": "select",
            "currentValue": "a",
            "options": [],
            "category": 9,
        }
    )
    assert option.category is None
    assert option.current_value == "a"
