"""The client's read model on PRODUCTION agents, live (issue 31 items 3 and 4).

For each agent, an rxacp sync client (the field rig) opens a session and runs a canned answer
and a read-file tool call; its ``session_state(sid)`` must hold what folding every
``session/update`` the consumer got for that session gives — including the commands these agents
send right around their ``session/new`` answer, which other SDKs' trackers lose when the update
races the answer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rxacp.client import SessionState
from tests.field.agents import AGENTS, FieldAgent
from tests.field.fake_model import PLAIN_TEXT, FakeModelServer
from tests.field.rig import WORKSPACE_FILE, FieldRig

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(params=AGENTS, ids=[a.name for a in AGENTS])
def rig(request: pytest.FixtureRequest, field_agents: dict[str, str]) -> Iterator[FieldRig]:
    agent: FieldAgent = request.param
    with FakeModelServer() as server:
        rig = FieldRig(agent, "sync", server)
        try:
            rig.call("initialize")
            if agent.auth_method is not None:
                rig.call("authenticate", {"methodId": agent.auth_method})
            yield rig
        finally:
            rig.close()


def test_the_session_state_holds_every_update_the_consumer_got(rig: FieldRig) -> None:
    assert rig.sync is not None
    sid = rig.session_id = rig.new_session()
    expected = SessionState()
    for text in ("field:plain", f"field:read {rig.workspace / WORKSPACE_FILE}"):
        start = len(rig.updates)
        rig.prompt(text)  # returns once the consumer got every update before the answer
        for note in rig.updates[start:]:
            if note.session_id == sid:
                expected = expected.apply(note)
        expected = expected.with_turn_end()
    state = rig.sync.session_state(sid)  # folded before the consumer ran: never behind it
    assert state.update_count >= expected.update_count > 0
    assert state.messages[: len(expected.messages)] == expected.messages
    assert dict(state.tool_calls) == dict(expected.tool_calls)
    assert any(m.text.endswith(PLAIN_TEXT) for m in state.messages)
    assert [c.status for c in state.tool_calls.values()] == ["completed"]
    if expected.commands:  # sent right after the session/new answer (or later): kept
        assert state.commands
