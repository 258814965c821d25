"""``SessionState``: the pure read model of one session (issue 31 item 1)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxacp.client import Compaction, Message, SessionState, Thought, ToolCallState
from rxacp.client._read_fold import HANDLERS as _HANDLERS
from rxacp.schema import (
    ImageContent,
    PromptResponse,
    SessionNotification,
    SessionUpdateKind,
    TextContent,
    UnknownSessionUpdate,
)

from ..schema._strategies import load_schema, wire_values

SID = "s1"
STABLE_DEFS: dict[str, Any] = load_schema("schema.json")["$defs"]


def note(update: dict[str, Any], session_id: str = SID) -> SessionNotification:
    return SessionNotification.from_wire({"sessionId": session_id, "update": update})


def chunk(
    text: str, kind: str = "agent_message_chunk", message_id: str | None = None
) -> SessionNotification:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return note(update)


def fold(*notes: Any, state: SessionState | None = None) -> SessionState:
    state = SessionState() if state is None else state
    for n in notes:
        state = state.apply(n)
    return state


# ---------------------------------------------------------------------------- empty state
def test_the_empty_state_has_nothing_in_any_field() -> None:
    state = SessionState()
    assert state.session_id is None
    assert state.messages == () and state.thoughts == () and state.plan == ()
    assert dict(state.tool_calls) == {} and dict(state.compactions) == {}
    assert state.mode is None and state.usage is None and state.title is None
    assert state.config_options == () and state.commands == () and state.notices == ()
    assert state.unknown == () and state.update_count == 0
    assert state == SessionState()


def test_every_known_update_kind_of_the_schema_has_a_handler() -> None:
    handled = {str(model.model_fields["session_update"].default) for model in _HANDLERS}
    assert handled == {str(k) for k in SessionUpdateKind}


# ---------------------------------------------------------------------------- messages
def test_contiguous_chunks_without_ids_are_joined_into_one_message() -> None:
    state = fold(chunk("Hel"), chunk("lo, "), chunk("world"))
    assert state.messages == (Message("agent", "Hello, world"),)
    assert state.messages[0].role == "agent" and state.messages[0].message_id is None
    assert state.session_id == SID and state.update_count == 3


def test_a_tool_call_between_chunks_starts_a_new_message() -> None:
    tool = note({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"})
    state = fold(chunk("Analyzing..."), tool, chunk("Done."))
    assert [m.text for m in state.messages] == ["Analyzing...", "Done."]


def test_a_usage_update_between_chunks_does_not_split_the_message() -> None:
    usage = note({"sessionUpdate": "usage_update", "used": 1, "size": 10})
    state = fold(chunk("a"), usage, chunk("b"))
    assert [m.text for m in state.messages] == ["ab"]


def test_a_new_message_id_starts_a_new_message_and_a_known_one_continues_it() -> None:
    state = fold(
        chunk("one ", message_id="m1"),
        chunk("two ", message_id="m2"),
        chunk("more", message_id="m1"),
    )
    assert [(m.message_id, m.text) for m in state.messages] == [("m1", "one more"), ("m2", "two ")]


def test_user_and_agent_chunks_alternate_into_separate_messages() -> None:
    state = fold(
        chunk("hi", "user_message_chunk"), chunk("hello"), chunk("bye", "user_message_chunk")
    )
    assert [(m.role, m.text) for m in state.messages] == [
        ("user", "hi"),
        ("agent", "hello"),
        ("user", "bye"),
    ]


def test_thoughts_are_joined_apart_from_messages() -> None:
    state = fold(
        chunk("think ", "agent_thought_chunk"), chunk("more", "agent_thought_chunk"), chunk("ok")
    )
    assert state.thoughts == (Thought("think more"),)
    assert [m.text for m in state.messages] == ["ok"]
    # a thought after the message is a new thought (the message ended the run)
    state = state.apply(chunk("again", "agent_thought_chunk"))
    assert [t.text for t in state.thoughts] == ["think more", "again"]


def test_non_text_content_is_kept_in_order_and_left_out_of_the_text() -> None:
    image = note(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        }
    )
    state = fold(chunk("see "), chunk("this"), image, chunk(":)"))
    message = state.messages[0]
    assert message.text == "see this:)"
    assert [type(b) for b in message.content] == [TextContent, ImageContent, TextContent]
    assert [getattr(b, "text", None) for b in message.content] == ["see this", None, ":)"]


# ---------------------------------------------------------------------------- tool calls
def test_tool_call_updates_merge_only_the_fields_they_carry() -> None:
    state = fold(
        note(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read file",
                "kind": "read",
                "status": "pending",
                "rawInput": {"path": "/a"},
                "locations": [{"path": "/a"}],
            }
        ),
        note({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
        note(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "data"}}],
                "rawOutput": "data",
            }
        ),
    )
    call = state.tool_calls["t1"]
    assert isinstance(call, ToolCallState)
    assert (call.title, call.kind, call.status) == ("Read file", "read", "completed")
    assert call.raw_input == {"path": "/a"} and call.raw_output == "data"
    assert [loc.path for loc in call.locations] == ["/a"]
    assert len(call.content) == 1


def test_an_update_for_a_tool_call_never_started_creates_it() -> None:
    state = fold(note({"sessionUpdate": "tool_call_update", "toolCallId": "t9", "title": "x"}))
    assert state.tool_calls["t9"] == ToolCallState("t9", title="x")


def test_tool_calls_keep_their_first_seen_order_and_the_mapping_is_read_only() -> None:
    state = fold(
        *(note({"sessionUpdate": "tool_call", "toolCallId": t, "title": t}) for t in "bac"),
        note({"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "failed"}),
    )
    assert list(state.tool_calls) == ["b", "a", "c"]
    with pytest.raises(TypeError):
        state.tool_calls["z"] = ToolCallState("z")  # type: ignore[index]


# ---------------------------------------------------------------------------- replacing kinds
def test_plan_commands_mode_config_and_usage_take_the_latest_value() -> None:
    entry = {"content": "step", "priority": "high", "status": "pending"}
    option = {"id": "model", "name": "Model", "type": "select", "currentValue": "a", "options": []}
    state = fold(
        note({"sessionUpdate": "plan", "entries": [entry, entry]}),
        note({"sessionUpdate": "plan", "entries": [{**entry, "status": "completed"}]}),
        note(
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "web", "description": "search"}],
            }
        ),
        note({"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
        note({"sessionUpdate": "config_option_update", "configOptions": [option]}),
        note({"sessionUpdate": "usage_update", "used": 5, "size": 100}),
        note({"sessionUpdate": "usage_update", "used": 7, "size": 100}),
    )
    assert [e.status for e in state.plan] == ["completed"]
    assert [c.name for c in state.commands] == ["web"]
    assert state.mode == "code"
    assert [o.id for o in state.config_options] == ["model"]
    assert state.usage is not None and state.usage.used == 7


def test_session_info_omitted_fields_stay_and_null_clears() -> None:
    state = fold(
        note({"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2026-01-01"})
    )
    state = state.apply(note({"sessionUpdate": "session_info_update", "updatedAt": "2026-02-02"}))
    assert (state.title, state.updated_at) == ("T", "2026-02-02")
    state = state.apply(note({"sessionUpdate": "session_info_update", "title": None}))
    assert (state.title, state.updated_at) == (None, "2026-02-02")


def test_notices_accumulate_in_order() -> None:
    state = fold(
        note({"sessionUpdate": "notice", "severity": "info", "title": "a"}),
        note({"sessionUpdate": "notice", "severity": "warning", "title": "b"}),
    )
    assert [(n.severity, n.title) for n in state.notices] == [("info", "a"), ("warning", "b")]


def test_compactions_follow_the_schemas_patch_rules() -> None:
    state = fold(
        note(
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": "c1",
                "content": {"type": "text", "text": "sum"},
            }
        ),
        note(
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": "c1",
                "content": {"type": "text", "text": "mary"},
            }
        ),
    )
    assert state.compactions["c1"].status == "in_progress"
    assert state.compactions["c1"].text == "summary"
    state = state.apply(
        note(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "failed",
                "error": "boom",
            }
        )
    )
    assert state.compactions["c1"] == Compaction(
        "c1", "failed", state.compactions["c1"].summary, "boom"
    )
    assert state.compactions["c1"].text == "summary"  # omitted summary: unchanged
    state = state.apply(
        note(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "completed",
                "summary": [],
                "error": None,
            }
        )
    )
    assert state.compactions["c1"] == Compaction("c1", "completed", (), None)


def test_unknown_update_kinds_are_kept_with_their_payload() -> None:
    state = fold(note({"sessionUpdate": "future_thing", "x": 1}), chunk("a"))
    assert len(state.unknown) == 1
    kept = state.unknown[0]
    assert isinstance(kept, UnknownSessionUpdate)
    assert kept.to_wire() == {"sessionUpdate": "future_thing", "x": 1}


# ---------------------------------------------------------------------------- errors, purity
def test_a_notification_of_another_session_is_refused_naming_both() -> None:
    state = fold(chunk("a"))
    with pytest.raises(ValueError, match=r"'other'.*'s1'"):
        state.apply(note({"sessionUpdate": "usage_update", "used": 1, "size": 2}, "other"))


def test_anything_but_a_session_update_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="PromptResponse"):
        SessionState().apply(PromptResponse.end_turn())


def test_bare_updates_as_prompt_turn_emits_them_are_folded_too() -> None:
    state = fold(chunk("a").update, chunk("b").update)
    assert [m.text for m in state.messages] == ["ab"] and state.session_id is None


def test_apply_leaves_the_snapshot_it_was_called_on_unchanged() -> None:
    base = fold(chunk("a"), note({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"}))
    before = (base.messages, dict(base.tool_calls), base.update_count)
    fold(chunk("b"), note({"sessionUpdate": "tool_call_update", "toolCallId": "t"}), state=base)
    assert (base.messages, dict(base.tool_calls), base.update_count) == before
    assert [m.text for m in base.messages] == ["a"]


# ---------------------------------------------------------------------------- properties
_pieces = st.lists(st.text(max_size=6), min_size=1, max_size=30)


@given(_pieces)
def test_any_split_of_a_text_folds_back_to_the_text(pieces: list[str]) -> None:
    state = fold(*(chunk(p) for p in pieces))
    assert [m.text for m in state.messages] == ["".join(pieces)]


@given(_pieces, st.integers(min_value=0, max_value=30), _pieces, _pieces)
def test_branching_from_an_old_snapshot_never_disturbs_another_branch(
    prefix: list[str], cut: int, left: list[str], right: list[str]
) -> None:
    base = fold(*(chunk(p) for p in prefix[: cut or None]))
    a = fold(*(chunk(p) for p in left), state=base)
    b = fold(*(chunk(p) for p in right), state=base)
    head = "".join(prefix[: cut or None])
    assert a.messages[-1].text == head + "".join(left)
    assert b.messages[-1].text == head + "".join(right)
    assert base.messages[-1].text == head
    assert a == fold(*(chunk(p) for p in prefix[: cut or None] + left))


_updates = st.lists(wire_values(STABLE_DEFS, STABLE_DEFS["SessionUpdate"]), max_size=12)


@settings(max_examples=150, deadline=None)
@given(_updates)
def test_any_sequence_of_schema_valid_updates_folds_without_error(updates: list[Any]) -> None:
    notes = [note(u) for u in updates]
    state = fold(*notes)
    assert state.update_count == len(notes)
    kinds = [n.update.session_update for n in notes]
    known = {str(k) for k in SessionUpdateKind}
    assert len(state.unknown) == sum(1 for k in kinds if k not in known)
    chunks = sum(1 for k in kinds if k.endswith("message_chunk"))
    assert len(state.messages) <= chunks

    # every text chunk's text lands in exactly one message or thought
    def text_of(kinds: tuple[str, ...]) -> int:
        total = 0
        for n in notes:
            content = getattr(n.update, "content", None)
            if n.update.session_update in kinds and isinstance(content, TextContent):
                total += len(content.text)
        return total

    assert sum(len(m.text) for m in state.messages) == text_of(
        ("agent_message_chunk", "user_message_chunk")
    )
    assert sum(len(t.text) for t in state.thoughts) == text_of(("agent_thought_chunk",))
    # the fold is deterministic: the same updates give an equal state
    assert fold(*notes) == state


def test_the_end_of_a_turn_splits_id_less_messages_and_changes_nothing_visible() -> None:
    state = fold(chunk("first"))
    ended = state.with_turn_end()
    assert ended == state
    assert [m.text for m in fold(chunk("second"), state=ended).messages] == ["first", "second"]
    assert [m.text for m in fold(chunk("second"), state=state).messages] == ["firstsecond"]


_long = st.lists(st.one_of(st.text(max_size=4), st.just(None)), min_size=60, max_size=400)
"""A long stream of text chunks (``None``: an image chunk in between)."""


def _long_chunks(pieces: list[str | None]) -> list[SessionNotification]:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    return [
        chunk(p)
        if p is not None
        else note({"sessionUpdate": "agent_message_chunk", "content": image})
        for p in pieces
    ]


@settings(max_examples=60, deadline=None)
@given(_long, st.integers(min_value=0, max_value=400))
def test_long_streams_keep_their_text_and_blocks_in_order_and_branches_apart(
    pieces: list[str | None], cut: int
) -> None:
    notes = _long_chunks(pieces)
    state = fold(*notes)
    [message] = state.messages
    assert message.text == "".join(p for p in pieces if p is not None)
    kinds = [type(b).__name__ for b in message.content]
    expected: list[str] = []
    for p in pieces:  # adjacent text chunks are one block, each image its own
        kind = "ImageContent" if p is None else "TextContent"
        if not (kind == "TextContent" and expected and expected[-1] == kind):
            expected.append(kind)
    assert kinds == expected
    base = fold(*notes[:cut])
    branch = fold(chunk("!"), state=base)
    assert fold(*notes[:cut], chunk("!")) == branch
    assert fold(*notes[:cut]) == base  # the branch did not disturb its base


_mixed = st.lists(
    st.one_of(
        wire_values(STABLE_DEFS, STABLE_DEFS["SessionUpdate"]),
        st.builds(
            lambda text, kind, mid: {
                "sessionUpdate": kind,
                "content": {"type": "text", "text": text},
                **({"messageId": mid} if mid else {}),
            },
            st.text(max_size=3),
            st.sampled_from(["agent_message_chunk", "user_message_chunk", "agent_thought_chunk"]),
            st.sampled_from([None, None, "m1", "m2"]),
        ),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(_mixed, st.integers(min_value=0, max_value=40))
def test_apply_all_equals_applying_one_by_one(updates: list[Any], cut: int) -> None:
    notes = [note(u) for u in updates]
    base = fold(*notes[:cut])
    one_by_one = fold(*notes[cut:], state=base)
    batched = base.apply_all(notes[cut:])
    assert batched == one_by_one
    assert batched.update_count == one_by_one.update_count
    assert [m.text for m in batched.messages] == [m.text for m in one_by_one.messages]
    assert fold(*notes[:cut]) == base  # the batch did not disturb its base
    # and the next chunk continues (or not) the same way after either
    after = chunk("+")
    assert batched.apply(after) == one_by_one.apply(after)


def test_apply_all_refuses_another_sessions_update_like_apply() -> None:
    with pytest.raises(ValueError, match="other"):
        SessionState().apply_all(
            [chunk("a"), note({"sessionUpdate": "usage_update", "used": 1, "size": 2}, "other")]
        )
