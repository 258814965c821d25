"""The read model as Observables (issue 31 items 2 and 4): ``session_state(sid)`` on both
clients, ``fold_session_state()``, and updates that arrive before the ``session/new`` answer."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from reactivex import operators as ops

from rxacp.client import AcpClient, SessionState, fold_session_state
from rxacp.schema import (
    AvailableCommand,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    SessionNotification,
)
from rxacp.schema import methods as m
from rxacp.testing import MockAcpAgent

from .conftest import Rig

SID = "sess-1"
WAIT = 10.0


@pytest.fixture
def agent() -> Iterator[MockAcpAgent]:
    with MockAcpAgent(timeout=5.0) as a:
        yield a


class States:
    """Records a subscriber's snapshots; waits (bounded) for one matching a condition."""

    def __init__(self) -> None:
        self.values: list[SessionState] = []
        self.completed = threading.Event()
        self._cond = threading.Condition()

    def on_next(self, state: SessionState) -> None:
        with self._cond:
            self.values.append(state)
            self._cond.notify_all()

    def on_completed(self) -> None:
        self.completed.set()


def _texts(state: SessionState) -> list[str]:
    return [m.text for m in state.messages]


# ---------------------------------------------------------------------------- session_state
def test_session_state_emits_a_snapshot_per_update_and_replays_the_latest_to_late_subscribers(
    rig: Rig,
) -> None:
    client = rig.async_builder().track_session_states().build()
    rig.on_close(client.close)
    early = States()
    client.session_state(SID).subscribe(early.on_next)
    assert early.values == [SessionState(SID)]  # the (empty) latest, at once
    client.prompt(PromptRequest.text(SID, "stream 5")).block(WAIT)
    assert [s.update_count for s in early.values] == [0, 1, 2, 3, 4, 5]
    assert _texts(early.values[-1]) == ["01234"]
    late = States()
    client.session_state(SID).subscribe(late.on_next)
    assert late.values == [early.values[-1]]  # the latest first, nothing older


def test_a_session_is_followed_from_its_first_update_without_any_subscriber(rig: Rig) -> None:
    client = rig.sync_builder().track_session_states().build()
    rig.on_close(client.close)
    client.initialize()
    client.prompt(PromptRequest.text(SID, "stream 3"))
    state = client.session_state(SID)
    assert _texts(state) == ["012"] and state.update_count == 3
    other = client.session_state("never-seen")
    assert other == SessionState("never-seen") and other.update_count == 0


def test_every_subscriber_sees_the_same_snapshots_in_order_and_a_failing_one_is_logged(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    client = rig.async_builder().track_session_states().build()
    rig.on_close(client.close)

    def broken(_state: SessionState) -> None:
        raise RuntimeError("render failed")

    client.session_state(SID).pipe(ops.skip(1)).subscribe(broken)
    good = States()
    client.session_state(SID).subscribe(good.on_next)
    with caplog.at_level(logging.ERROR, logger="rxacp.client"):
        client.prompt(PromptRequest.text(SID, "stream 4")).block(WAIT)
    assert [s.update_count for s in good.values] == [0, 1, 2, 3, 4]
    assert "session_state() subscriber failed" in caplog.text


def test_session_state_completes_when_the_connection_ends_and_replays_then_completes(
    rig: Rig,
) -> None:
    client = rig.async_builder().track_session_states().build()
    states = States()
    client.session_state(SID).subscribe(states.on_next, on_completed=states.on_completed)
    client.prompt(PromptRequest.text(SID, "echo hi")).block(WAIT)
    client.close()
    assert states.completed.wait(WAIT)
    after = client.session_state(SID).pipe(ops.to_list()).block(WAIT)
    assert [_texts(s) for s in after] == [["hi"]]


def test_turning_the_read_model_off_makes_session_state_a_clear_error(rig: Rig) -> None:
    client = rig.sync_builder().track_session_states(False).build()
    rig.on_close(client.close)
    with pytest.raises(RuntimeError, match="track_session_states"):
        client.session_state(SID)
    with pytest.raises(RuntimeError, match="fold_session_state"):
        client.async_client.session_state(SID)


@pytest.mark.parametrize("api", ["sync", "async"])
def test_the_read_model_is_off_by_default_and_says_how_to_turn_it_on(rig: Rig, api: str) -> None:
    """Opt-in: a client that renders nothing pays no fold and keeps no transcript."""
    client = (rig.sync_builder() if api == "sync" else rig.async_builder()).build()
    rig.on_close(client.close)
    with pytest.raises(RuntimeError, match=r"track_session_states\(\) \(off by default\)"):
        client.session_state(SID)


# ---------------------------------------------------------------------------- operator
def test_fold_session_state_folds_a_prompt_turn_and_skips_its_answer(rig: Rig) -> None:
    client = rig.async_builder().track_session_states().build()
    rig.on_close(client.close)
    states = (
        client.prompt_turn(PromptRequest.text(SID, "stream 3"))
        .pipe(fold_session_state(), ops.to_list())
        .block(WAIT)
    )
    assert [_texts(s) for s in states] == [["0"], ["01"], ["012"]]


def test_fold_session_state_starts_from_the_given_state_at_each_subscription(rig: Rig) -> None:
    client = rig.async_builder().track_session_states().build()
    rig.on_close(client.close)
    seed = SessionState().apply(
        SessionNotification.of(SID, AvailableCommandsUpdate(available_commands=[]))
    )
    states = client.prompt_turn(PromptRequest.text(SID, "echo a")).pipe(fold_session_state(seed))
    turn = states.pipe(ops.last())
    first, second = turn.block(WAIT), turn.block(WAIT)
    assert first.update_count == second.update_count == 2
    assert _texts(first) == _texts(second) == ["a"]


def test_fold_session_state_errors_on_another_sessions_update_and_stops() -> None:
    from reactivex import from_iterable

    def n(sid: str) -> SessionNotification:
        return SessionNotification.of(sid, CurrentModeUpdate(current_mode_id="m"))

    seen: list[SessionState] = []
    errors: list[Exception] = []
    from_iterable([n("a"), n("b"), n("a")]).pipe(fold_session_state()).subscribe(
        seen.append, errors.append
    )
    assert len(seen) == 1 and len(errors) == 1
    assert isinstance(errors[0], ValueError) and "'b'" in str(errors[0])


# ---------------------------------------------------------------------------- early updates
def _early_updates_agent(agent: MockAcpAgent) -> None:
    """session/new sends the commands and a mode change *before* answering."""

    def new_session(_request: NewSessionRequest) -> NewSessionResponse:
        commands = AvailableCommandsUpdate(
            available_commands=[AvailableCommand(name="web", description="search the web")]
        )
        agent.send_session_update("early-1", commands)
        agent.send_session_update("early-1", CurrentModeUpdate(current_mode_id="plan"))
        return NewSessionResponse.from_wire(
            {
                "sessionId": "early-1",
                "modes": {
                    "currentModeId": "plan",
                    "availableModes": [
                        {"id": "plan", "name": "Plan"},
                        {"id": "code", "name": "Code"},
                    ],
                },
            }
        )

    agent.on("session/new", new_session)


def test_updates_sent_before_the_session_new_answer_reach_the_state_and_consumers_sync(
    agent: MockAcpAgent,
) -> None:
    _early_updates_agent(agent)
    consumed: list[SessionNotification] = []
    with (
        AcpClient.sync(agent.client_transport)
        .session_update_consumer(consumed.append)
        .track_session_states()
        .build() as client
    ):
        client.initialize()
        sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
        state = client.session_state(sid)
        assert [c.name for c in state.commands] == ["web"]
        assert state.mode == "plan" and [m.id for m in state.modes] == ["plan", "code"]
        assert [n.update.session_update for n in consumed] == [
            "available_commands_update",
            "current_mode_update",
        ]
        client.set_session_mode({"sessionId": sid, "modeId": "code"})
        assert client.session_state(sid).mode == "code"


def test_updates_sent_before_the_session_new_answer_are_in_the_first_snapshot_async(
    agent: MockAcpAgent,
) -> None:
    _early_updates_agent(agent)
    client = AcpClient.async_(agent.client_transport).track_session_states().build()
    try:
        client.initialize().block(WAIT)
        sid = client.new_session(NewSessionRequest.of("/tmp")).block(WAIT).session_id
        first: Any = client.session_state(sid).pipe(ops.first()).block(WAIT)
        assert [c.name for c in first.commands] == ["web"] and first.update_count == 2
    finally:
        client.close()


def test_closing_a_session_completes_its_states_and_drops_it(agent: MockAcpAgent) -> None:
    agent.on("session/close", {})
    with AcpClient.sync(agent.client_transport).track_session_states().build() as client:
        client.initialize()
        sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
        agent.send_session_update(sid, "hello")
        client.prompt(PromptRequest.text(sid, "x"))  # the update came before this answer
        assert _texts(client.session_state(sid)) == ["hello"]
        states = States()
        client.async_client.session_state(sid).subscribe(
            states.on_next, on_completed=states.on_completed
        )
        client.close_session({"sessionId": sid})
        assert states.completed.is_set()
        assert client.session_state(sid) == SessionState(sid)


def test_a_consumer_reads_a_state_that_already_holds_its_update(rig: Rig) -> None:
    counts: list[tuple[int, int]] = []
    holder: list[Any] = []

    def consumer(note: SessionNotification) -> None:
        state = holder[0].session_state(note.session_id)
        counts.append((len(counts) + 1, state.update_count))

    client = rig.sync_builder().session_update_consumer(consumer).track_session_states().build()
    holder.append(client)
    rig.on_close(client.close)
    client.initialize()
    client.prompt(PromptRequest.text(SID, "stream 3"))
    assert len(counts) == 3
    assert [n for n, seen in counts if seen < n] == []  # never behind the consumer


def test_two_prompt_turns_give_two_agent_messages(rig: Rig) -> None:
    client = rig.sync_builder().track_session_states().build()
    rig.on_close(client.close)
    client.initialize()
    client.prompt(PromptRequest.text(SID, "echo one"))
    client.prompt(PromptRequest.text(SID, "echo two"))
    assert _texts(client.session_state(SID)) == ["one", "two"]


def test_a_disposed_turns_late_update_and_the_next_turn_are_separate_messages(rig: Rig) -> None:
    client = rig.async_builder().track_session_states().build()
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "echo first")).block(WAIT)
    states = States()
    client.session_state(SID).subscribe(states.on_next)
    waiting = client.prompt(PromptRequest.text(SID, "wait")).subscribe(lambda _: None)
    rig.agent.wait_for_method(m.SESSION_PROMPT, 2)
    waiting.dispose()  # session/cancel: the agent says "after-cancel" and answers late
    client.prompt(PromptRequest.text(SID, "echo next")).block(WAIT)  # held until that answer
    assert _texts(client.session_state(SID).pipe(ops.first()).block(WAIT)) == [
        "first",
        "after-cancel",
        "next",
    ]


def test_loading_a_session_again_rebuilds_its_state_from_the_replay(agent: MockAcpAgent) -> None:
    def load(request: Any) -> dict[str, Any]:
        agent.send_session_update(
            request.session_id,
            {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": "question"},
            },
        )
        agent.send_session_update(request.session_id, "answer")
        return {}

    agent.on("session/load", load)
    with AcpClient.sync(agent.client_transport).track_session_states().build() as client:
        client.initialize()
        request = {"sessionId": "old-1", "cwd": "/tmp", "mcpServers": []}
        client.load_session(request)
        first = client.session_state("old-1")
        client.load_session(request)  # the same replay again
        again = client.session_state("old-1")
    assert [(m.role, m.text) for m in first.messages] == [("user", "question"), ("agent", "answer")]
    assert again.messages == first.messages and again.update_count == 2


def test_an_unwatched_session_folded_in_batches_has_every_update_and_a_late_subscriber_too(
    rig: Rig,
) -> None:
    client = rig.sync_builder().track_session_states().build()
    rig.on_close(client.close)
    client.initialize()
    client.prompt(PromptRequest.text(SID, "stream 300"))  # over two batches, one pending part
    expected = "".join(str(i) for i in range(300))
    assert _texts(client.session_state(SID)) == [expected]
    states = States()
    client.async_client.session_state(SID).subscribe(states.on_next)
    client.prompt(PromptRequest.text(SID, "stream 2"))
    assert [s.update_count for s in states.values] == [300, 301, 302]
    assert _texts(states.values[-1]) == [expected, "01"]
