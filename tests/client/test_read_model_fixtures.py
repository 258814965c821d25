"""The read model on real streams (issue 31 item 3): the reference agent's ``tool``, ``plan`` and
``stream`` turns, recorded off the wire by ``scripts/record_read_model_fixtures.py``, and the
production agents' (codex-acp, gemini-cli, opencode: a canned answer, an 80-chunk stream, a
read-file tool call, against the field suite's fake model) by
``scripts/record_field_read_model_fixtures.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import reactivex
from reactivex import operators as ops

from rxacp.client import SessionState, fold_session_state
from rxacp.schema import Content, SessionNotification, TextContent
from rxacp.testing._reference_script import STREAM_WORDS
from tests.field.fake_model import PLAIN_TEXT, SLOW_CHUNKS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "read_model"


def recorded(turn: str, agent: str = "reference") -> list[SessionNotification]:
    lines = (FIXTURES / f"{agent}-{turn}.jsonl").read_text(encoding="utf-8").splitlines()
    return [SessionNotification.from_wire(json.loads(line)) for line in lines if line]


def folded(*turns: str, agent: str = "reference") -> SessionState:
    state = SessionState()
    for turn in turns:
        for note in recorded(turn, agent):
            state = state.apply(note)
        state = state.with_turn_end()  # what the client does on each prompt's answer
    return state


def test_the_recorded_tool_turn_folds_to_a_completed_tool_call_a_thought_and_a_message() -> None:
    state = folded("tool")
    [call] = state.tool_calls.values()
    assert (call.title, call.kind, call.status) == ("Look up the answer", "fetch", "completed")
    [content] = call.content
    assert isinstance(content, Content) and isinstance(content.content, TextContent)
    assert content.content.text == "42"
    assert [t.text for t in state.thoughts] == ["consulting the reference table"]
    assert [(m.role, m.text) for m in state.messages] == [("agent", "the tool says 42")]
    assert state.session_id == "recorded" and state.unknown == ()


def test_the_recorded_plan_turn_ends_with_every_entry_completed() -> None:
    states = (
        reactivex.from_iterable(recorded("plan")).pipe(fold_session_state(), ops.to_list()).run()
    )
    progress = [[e.status for e in s.plan] for s in states if s.plan]
    assert progress[0] == ["in_progress", "pending", "pending"]
    assert progress[-1] == ["completed", "completed", "completed"]
    assert [e.content for e in states[-1].plan] == [
        "Read the request",
        "Think it through",
        "Answer",
    ]
    assert [m.text for m in states[-1].messages] == ["plan complete"]


def test_the_recorded_stream_turn_joins_its_twelve_chunks_into_one_message() -> None:
    state = folded("stream")
    expected = "".join(STREAM_WORDS[i % len(STREAM_WORDS)] + " " for i in range(12))
    assert [m.text for m in state.messages] == [expected]
    assert state.update_count == 12


def test_three_recorded_turns_of_one_session_fold_into_one_transcript() -> None:
    state = folded("tool", "plan", "stream")
    assert [m.text for m in state.messages][:2] == ["the tool says 42", "plan complete"]
    assert len(state.messages) == 3  # one message per turn: the turn ends split them
    assert len(state.tool_calls) == 1 and len(state.plan) == 3


# ---------------------------------------------------------------------------- production agents
PRODUCTION = ["codex-acp", "gemini-cli", "opencode"]


@pytest.mark.parametrize("agent", PRODUCTION)
def test_a_production_agents_canned_answer_folds_into_one_agent_message(agent: str) -> None:
    state = folded("plain", agent=agent)
    [message] = state.messages
    assert message.role == "agent" and message.text.endswith(PLAIN_TEXT)
    assert state.unknown == ()


@pytest.mark.parametrize("agent", PRODUCTION)
def test_a_production_agents_80_chunk_stream_folds_into_the_whole_text(agent: str) -> None:
    state = folded("stream", agent=agent)
    expected = "".join(f"w{i} " for i in range(SLOW_CHUNKS))
    assert state.messages[-1].text.endswith(expected)
    assert state.update_count >= SLOW_CHUNKS


@pytest.mark.parametrize("agent", PRODUCTION)
def test_a_production_agents_read_tool_call_folds_to_a_completed_read(agent: str) -> None:
    state = folded("read", agent=agent)
    [call] = state.tool_calls.values()
    assert (call.kind, call.status) == ("read", "completed")
    assert call.title  # every agent titles its call ("Read notes.txt", "notes.txt", ...)
    assert "tool done" in state.messages[-1].text
    assert "field notes" in state.messages[-1].text


@pytest.mark.parametrize("agent", PRODUCTION)
def test_a_production_agents_session_folds_commands_and_one_message_per_turn(agent: str) -> None:
    state = folded("plain", "stream", "read", agent=agent)
    assert state.commands, "every one of these agents advertises its commands"
    # one message per turn; codex-acp's read turn has two: its "Model metadata ... not found"
    # notice text comes before the tool call, its answer after it
    assert len(state.messages) == (4 if agent == "codex-acp" else 3)
    assert len(state.tool_calls) == 1


def test_opencodes_message_ids_and_codexs_usage_are_kept() -> None:
    opencode = folded("plain", "stream", "read", agent="opencode")
    assert all(m.message_id for m in opencode.messages)
    assert len({m.message_id for m in opencode.messages}) == 3
    codex = folded("plain", "stream", "read", agent="codex-acp")
    assert codex.usage is not None and codex.usage.size > codex.usage.used > 0
