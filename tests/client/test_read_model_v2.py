"""The read model on ACP v2 (Draft) updates: its chunks, its upserts (patch fields) and a live
v2 connection's ``session_state()``."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from reactivex import operators as ops

from rxacp.agent import AcpAgent
from rxacp.agent.v2 import AgentHandlers, SyncPromptContext
from rxacp.client import AcpClient, SessionState, ToolCallState
from rxacp.schema import NewSessionResponse, PromptResponse, v2
from rxacp.testing.memory import InMemoryTransportPair

from ..schema._strategies import load_schema, wire_values

SID = "s2"
WAIT = 10.0
V2_DEFS: dict[str, Any] = load_schema("v2/schema.json")["$defs"]


def note(update: dict[str, Any]) -> v2.UpdateSessionNotification:
    return v2.UpdateSessionNotification.from_wire({"sessionId": SID, "update": update})


def chunk(text: str, message_id: str, kind: str = "agent_message_chunk") -> Any:
    return note(
        {"sessionUpdate": kind, "messageId": message_id, "content": {"type": "text", "text": text}}
    )


def fold(*notes: Any, state: SessionState | None = None) -> SessionState:
    state = SessionState() if state is None else state
    for n in notes:
        state = state.apply(n)
    return state


def test_v2_chunks_join_per_message_id_and_thoughts_apart() -> None:
    state = fold(
        chunk("Hel", "m1"),
        chunk("thinking", "t1", "agent_thought_chunk"),
        chunk("lo", "m1"),
        chunk("next", "m2"),
    )
    assert [(m.role, m.message_id, m.text) for m in state.messages] == [
        ("agent", "m1", "Hello"),
        ("agent", "m2", "next"),
    ]
    assert [t.text for t in state.thoughts] == ["thinking"]
    assert state.session_id == SID and state.unknown == ()


def test_a_v2_message_upsert_replaces_the_content_and_an_omitted_content_keeps_it() -> None:
    state = fold(
        chunk("draft", "m1"),
        note(
            {
                "sessionUpdate": "agent_message",
                "messageId": "m1",
                "content": [{"type": "text", "text": "final "}, {"type": "text", "text": "text"}],
            }
        ),
        note({"sessionUpdate": "user_message", "messageId": "u1", "content": []}),
    )
    assert [(m.role, m.text) for m in state.messages] == [("agent", "final text"), ("user", "")]
    state = state.apply(note({"sessionUpdate": "agent_message", "messageId": "m1"}))
    assert state.messages[0].text == "final text"
    state = state.apply(
        note({"sessionUpdate": "agent_message", "messageId": "m1", "content": None})
    )
    assert state.messages[0].text == ""


def test_v2_tool_call_upserts_follow_the_patch_rules_and_content_chunks_append() -> None:
    state = fold(
        note(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "title": "Read",
                "kind": "read",
                "status": "in_progress",
            }
        ),
        note(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "t1",
                "content": {"type": "content", "content": {"type": "text", "text": "42"}},
            }
        ),
        note(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "title": None,
            }
        ),
    )
    call = state.tool_calls["t1"]
    assert isinstance(call, ToolCallState)
    assert (call.title, call.kind, call.status) == (None, "read", "completed")
    assert len(call.content) == 1


def test_a_v2_items_plan_is_the_plan_and_other_plans_and_state_updates_are_kept() -> None:
    entry = {"content": "step", "priority": "high", "status": "pending"}
    state = fold(
        note(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "p", "entries": [entry]},
            }
        ),
        note(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "markdown", "planId": "q", "content": "# x"},
            }
        ),
        note({"sessionUpdate": "state_update", "state": "idle"}),
        note({"sessionUpdate": "usage_update", "used": 1, "size": 9}),
    )
    assert [e.content for e in state.plan] == ["step"]
    assert [u.session_update for u in state.unknown] == ["plan_update", "state_update"]
    assert state.usage is not None and state.usage.used == 1


_updates = st.lists(wire_values(V2_DEFS, V2_DEFS["SessionUpdate"]), max_size=10)


@settings(max_examples=100, deadline=None)
@given(_updates)
def test_any_sequence_of_schema_valid_v2_updates_folds_without_error(updates: list[Any]) -> None:
    notes = [note(u) for u in updates]
    state = fold(*notes)
    assert state.update_count == len(notes)
    assert fold(*notes) == state


def test_a_v2_connections_session_state_folds_its_turn() -> None:
    def prompt(_req: Any, ctx: SyncPromptContext) -> str:
        ctx.send_message("v2 says hi")
        return "end_turn"

    pair = InMemoryTransportPair.create()
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda _r: NewSessionResponse(session_id=SID))
        .prompt_handler(lambda _r, ctx: PromptResponse.end_turn())
        .protocol_v2(
            AgentHandlers()
            .new_session_handler(lambda _r: {"sessionId": SID})
            .prompt_handler(prompt)
        )
        .build()
    )
    agent.start()
    client = AcpClient.async_(pair.client_transport).protocol_v2().track_session_states().build()
    try:
        client.initialize().block(WAIT)
        client.new_session({"cwd": "/tmp", "mcpServers": []}).block(WAIT)
        client.prompt(v2.PromptRequest.text(SID, "hello")).block(WAIT)  # completes on idle
        state = client.session_state(SID).pipe(ops.first()).block(WAIT)
        assert [(m.role, m.text) for m in state.messages] == [
            ("user", "hello"),  # v2 agents echo the prompt as a user_message
            ("agent", "v2 says hi"),
        ]
        assert [u.state for u in state.unknown] == ["running", "idle"]
    finally:
        client.close()
        agent.close()
