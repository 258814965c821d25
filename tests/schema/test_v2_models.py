"""ACP v2 models (rxacp.schema.v2): three-state patches, open enums, unknown variants kept."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from rxacp.schema import v2
from rxacp.schema.v2 import (
    PatchState,
    SessionStateUpdate,
    ToolCallStatus,
    ToolCallUpdate,
    ToolCallUpdateNotification,
    UnknownSessionUpdate,
    UpdateSessionNotification,
    patch_state,
)


def _update(update: dict[str, Any]) -> UpdateSessionNotification:
    return UpdateSessionNotification.from_wire({"sessionId": "s1", "update": update})


def test_a_patch_field_tells_omitted_from_null_from_a_value_and_writes_each_back() -> None:
    wire = {"toolCallId": "t1", "title": None, "status": "completed"}
    update = ToolCallUpdate.from_wire(wire)
    assert patch_state(update, "title") is PatchState.CLEARED
    assert patch_state(update, "status") is PatchState.REPLACED
    assert patch_state(update, "kind") is PatchState.UNCHANGED
    assert update.to_wire() == wire
    assert ToolCallUpdate.from_wire(update.to_wire()).to_wire() == wire


def test_none_given_to_the_constructor_clears_and_an_omitted_field_stays_off_the_wire() -> None:
    update = ToolCallUpdate(tool_call_id="t1", content=None, meta=None)
    assert update.to_wire() == {"toolCallId": "t1", "content": None, "_meta": None}
    assert ToolCallUpdate(tool_call_id="t1").to_wire() == {"toolCallId": "t1"}


def test_a_malformed_lenient_patch_value_reads_as_unchanged_not_as_cleared() -> None:
    update = ToolCallUpdate.from_wire({"toolCallId": "t1", "title": 42})
    assert update.title is None
    assert patch_state(update, "title") is PatchState.UNCHANGED
    assert update.to_wire() == {"toolCallId": "t1"}


def test_patch_state_names_a_missing_field() -> None:
    with pytest.raises(AttributeError, match="nonsense"):
        patch_state(ToolCallUpdate(tool_call_id="t1"), "nonsense")


def test_an_unknown_enum_value_is_kept_and_known_values_are_str_enum_members() -> None:
    update = ToolCallUpdate.from_wire({"toolCallId": "t1", "status": "_vendor_paused"})
    assert update.status == "_vendor_paused"
    assert update.to_wire()["status"] == "_vendor_paused"
    assert str(ToolCallStatus.CANCELLED) == "cancelled"


def test_state_update_is_one_model_with_the_state_and_the_stop_reason() -> None:
    note = _update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
    assert isinstance(note.update, SessionStateUpdate)
    assert (note.update.state, note.update.stop_reason) == ("idle", "cancelled")
    running = _update({"sessionUpdate": "state_update", "state": "running"})
    assert isinstance(running.update, SessionStateUpdate)
    assert running.update.stop_reason is None


def test_an_unknown_session_update_kind_keeps_its_whole_payload() -> None:
    raw = {"sessionUpdate": "_vendor_widget", "n": 1, "nested": {"x": None}}
    note = _update(raw)
    assert isinstance(note.update, UnknownSessionUpdate)
    assert note.to_wire() == {"sessionId": "s1", "update": raw}


def test_a_tool_call_update_notification_is_the_upsert_with_its_tag() -> None:
    note = _update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "rawOutput": None})
    assert isinstance(note.update, ToolCallUpdateNotification)
    assert isinstance(note.update, ToolCallUpdate)
    assert note.to_wire()["update"]["rawOutput"] is None


def test_the_v2_prompt_response_carries_the_message_id() -> None:
    response = v2.PromptResponse.from_wire({"messageId": "m1"})
    assert response.message_id == "m1"
    with pytest.raises(ValueError, match="messageId"):
        v2.PromptResponse.from_wire({})


def test_v2_factories_build_valid_initialize_messages() -> None:
    request = v2.InitializeRequest.of({"name": "ed", "version": "1"})
    assert request.to_wire() == {
        "protocolVersion": 2,
        "info": {"name": "ed", "version": "1"},
        "capabilities": {},
    }
    response = v2.InitializeResponse.ok({"name": "ag", "version": "2"})
    assert response.protocol_version == 2
    assert response.capabilities is not None and response.capabilities.session is not None
    assert v2.PromptRequest.text("s1", "hi").prompt_text() == "hi"
    assert v2.RequestPermissionResponse.cancelled().to_wire() == {
        "outcome": {"outcome": "cancelled"}
    }


def test_the_unstable_v2_overlay_reuses_the_stable_v2_classes() -> None:
    from rxacp.schema.v2 import unstable

    assert unstable.PromptRequest is v2.PromptRequest
    assert unstable.ToolCallUpdate.__module__.startswith("rxacp.schema.v2")


def test_importing_rxacp_schema_does_not_load_the_v2_models() -> None:
    code = "import sys, rxacp, rxacp.schema; print('rxacp.schema.v2' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.strip() == "False"
