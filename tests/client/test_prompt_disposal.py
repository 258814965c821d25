"""Disposing a prompt stops the turn on every agent (issue 14 items 1 and 2).

Disposal sends ``session/cancel`` then ``$/cancel_request`` (each once, only if written), the
late answer is discarded, the session's next prompt waits for it; a peer that answers
``$/cancel_request`` with ``-32601`` (with or without an id) is not sent it again.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from rxacp.client import AcpClient, AcpSyncClient
from rxacp.client.turns import SETTLE_BOUND
from rxacp.errors import AcpTimeoutException
from rxacp.schema import PromptRequest
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST
from rxacp.session.abandoned import AbandonedRequests
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .conftest import Rig, flush, texts
from .production_like_agent import InMemoryPeer, ProductionLikeAgent
from .test_prompt_cancel import Outcome

SID = "sess-1"
PEER_SCRIPT = __file__.replace("test_prompt_disposal.py", "production_like_agent.py")


def _subscribe(source: Any) -> tuple[Outcome, Any]:
    outcome = Outcome()
    return outcome, source.subscribe(outcome.on_next, outcome.on_error, outcome.on_completed)


# ---------------------------------------------------------------------------- an rxacp peer
def test_disposing_a_prompt_sends_one_session_cancel_then_one_cancel_request(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    outcome, subscription = _subscribe(client.prompt(PromptRequest.text(SID, "hang")))
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    prompt_id = rig.agent.messages(m.SESSION_PROMPT)[0]["id"]
    subscription.dispose()
    subscription.dispose()
    rig.agent.wait_for_method(CANCEL_REQUEST)
    client.ext_method("_test/echo", {}).run()  # marker: everything before it arrived
    methods = [x for x in rig.agent.methods() if x in (m.SESSION_CANCEL, CANCEL_REQUEST)]
    assert methods == [m.SESSION_CANCEL, CANCEL_REQUEST]
    assert rig.agent.messages(m.SESSION_CANCEL)[0]["params"] == {"sessionId": SID}
    assert rig.agent.messages(CANCEL_REQUEST)[0]["params"] == {"requestId": prompt_id}
    assert not outcome.done.is_set()  # the subscriber ended at once; the late answer is dropped


def test_disposing_after_the_answer_sends_nothing(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    outcome, subscription = _subscribe(client.prompt(PromptRequest.text(SID, "echo hi")))
    assert outcome.wait().value.stop_reason == "end_turn"
    subscription.dispose()
    client.ext_method("_test/echo", {}).run()
    assert rig.agent.count(m.SESSION_CANCEL) == 0 and rig.agent.count(CANCEL_REQUEST) == 0


def test_take_until_on_a_prompt_cancels_the_turn_and_the_next_prompt_is_answered(
    rig: Rig,
) -> None:
    updates: list[Any] = []
    client = rig.async_builder().session_update_consumer(updates.append).build()
    rig.on_close(client.close)
    from reactivex.subject import Subject

    stop: Subject[int] = Subject()
    outcome, _ = _subscribe(
        client.prompt(PromptRequest.text(SID, "wait")).pipe(ops.take_until(stop))
    )
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    stop.on_next(1)
    assert outcome.wait().value is None
    nxt = client.prompt(PromptRequest.text(SID, "echo next")).run()
    assert nxt.stop_reason == "end_turn" and "next" in texts(updates)
    assert rig.agent.count(m.SESSION_CANCEL) == 1 and rig.agent.count(CANCEL_REQUEST) == 1


def test_the_prompt_timeout_sends_session_cancel_and_cancel_request_in_virtual_time(
    rig: Rig,
) -> None:
    clock = TestScheduler()
    client = rig.async_builder().scheduler(clock).prompt_timeout(10.0).build()
    rig.on_close(client.close)
    outcome, _ = _subscribe(client.prompt(PromptRequest.text(SID, "hang")))
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    flush(client.session)
    clock.advance_by(10.1)
    assert isinstance(outcome.wait().error, AcpTimeoutException)
    rig.agent.wait_for_method(CANCEL_REQUEST)
    assert rig.agent.count(m.SESSION_CANCEL) == 1


def test_other_requests_send_only_cancel_request_when_disposed(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    _, subscription = _subscribe(client.ext_method("_test/hang"))
    rig.agent.wait_for_method("_test/hang")
    subscription.dispose()
    rig.agent.wait_for_method(CANCEL_REQUEST)
    client.ext_method("_test/echo", {}).run()
    assert rig.agent.count(m.SESSION_CANCEL) == 0


def test_a_blocking_prompt_interrupted_by_its_bound_cancels_the_turn(rig: Rig) -> None:
    sync: AcpSyncClient = rig.sync_builder().prompt_timeout(0.5).build()
    rig.on_close(sync.close)
    with pytest.raises(AcpTimeoutException):
        sync.prompt(PromptRequest.text(SID, "hang"))
    rig.agent.wait_for_method(CANCEL_REQUEST)
    assert rig.agent.count(m.SESSION_CANCEL) == 1
    assert sync.prompt(PromptRequest.text(SID, "echo again")).stop_reason == "end_turn"


# ---------------------------------------------------------------------------- production-like peers
class Peer:
    def __init__(self, quirk: str, clock: TestScheduler | None = None) -> None:
        pair = InMemoryTransportPair.create()
        self.agent = ProductionLikeAgent(quirk)
        self.peer = InMemoryPeer(self.agent, pair.agent_transport).start()
        builder = AcpClient.async_(pair.client_transport)
        self.updates: list[Any] = []
        builder.session_update_consumer(self.updates.append)
        if clock is not None:
            builder.scheduler(clock)
        self.client = builder.build()

    def close(self) -> None:
        self.client.close()
        self.peer.close()


@pytest.fixture(params=["no-id", "null-id"])
def quirky(request: pytest.FixtureRequest) -> Iterator[Peer]:
    peer = Peer(request.param)
    yield peer
    peer.close()


def _dispose_started_prompt(peer: Peer) -> None:
    """Prompt "long" and dispose the prompt once the agent has it (its turn still running)."""
    _, subscription = _subscribe(peer.client.prompt(PromptRequest.text(SID, "long")))
    peer.agent.wait_for_method(m.SESSION_PROMPT)
    subscription.dispose()


def _dispose_long_prompt(peer: Peer, n: int) -> None:
    """Dispose the ``n``-th "long" prompt (earlier prompts: one echo after each)."""
    _, subscription = _subscribe(peer.client.prompt(PromptRequest.text(SID, "long")))
    peer.agent.wait_for_method(m.SESSION_PROMPT, 2 * n - 1)
    subscription.dispose()
    peer.agent.wait_for_method(m.SESSION_CANCEL, n)
    flush(peer.client.session)
    peer.agent.finish_cancelled()


def test_a_peer_answering_cancel_request_with_32601_is_not_sent_it_again(
    quirky: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    _dispose_long_prompt(quirky, 1)
    quirky.agent.wait_for_method(CANCEL_REQUEST)
    first = quirky.client.prompt(PromptRequest.text(SID, "echo one")).run()
    assert first.stop_reason == "end_turn"
    _dispose_long_prompt(quirky, 2)
    second = quirky.client.prompt(PromptRequest.text(SID, "echo two")).run()
    assert second.stop_reason == "end_turn"
    assert quirky.agent.count(m.SESSION_CANCEL) == 2
    assert quirky.agent.count(CANCEL_REQUEST) == 1
    assert not [r for r in caplog.records if r.name.startswith("rxacp")]


def test_the_next_prompt_waits_until_the_disposed_turn_answered(quirky: Peer) -> None:
    agent = quirky.agent
    _dispose_started_prompt(quirky)
    outcome, _ = _subscribe(quirky.client.prompt(PromptRequest.text(SID, "echo next")))
    agent.wait_for_method(CANCEL_REQUEST)
    flush(quirky.client.session)
    assert agent.count(m.SESSION_PROMPT) == 1 and not outcome.done.is_set()
    agent.finish_cancelled()
    assert outcome.wait().value.stop_reason == "end_turn"
    assert texts(quirky.updates) == ["started", "next"]


def test_a_held_prompt_disposed_before_it_was_sent_sends_nothing(quirky: Peer) -> None:
    agent = quirky.agent
    _dispose_started_prompt(quirky)
    _, held = _subscribe(quirky.client.prompt(PromptRequest.text(SID, "echo never")))
    held.dispose()
    agent.wait_for_method(m.SESSION_CANCEL)
    agent.finish_cancelled()
    assert quirky.client.prompt(PromptRequest.text(SID, "echo later")).run().stop_reason == (
        "end_turn"
    )
    assert [x["params"]["prompt"][0]["text"] for x in agent.messages(m.SESSION_PROMPT)] == [
        "long",
        "echo later",
    ]


def test_a_held_prompt_whose_stop_is_cancelled_answers_cancelled_without_sending(
    quirky: Peer,
) -> None:
    from rxacp.client import CancellationSignal

    agent = quirky.agent
    _dispose_started_prompt(quirky)
    stop = CancellationSignal()
    outcome, _ = _subscribe(quirky.client.prompt(PromptRequest.text(SID, "echo no"), stop))
    agent.wait_for_method(CANCEL_REQUEST)
    stop.cancel()
    agent.finish_cancelled()
    assert outcome.wait().value.stop_reason == "cancelled"
    quirky.client.prompt(PromptRequest.text("sess-2", "echo marker")).run()
    assert agent.count(m.SESSION_PROMPT) == 2  # "long" and the marker only


def test_a_held_prompt_is_sent_after_the_settle_bound_in_virtual_time() -> None:
    clock = TestScheduler()
    peer = Peer("ignore", clock)
    try:
        _, first = _subscribe(peer.client.prompt(PromptRequest.text(SID, "long")))
        peer.agent.wait_for_method(m.SESSION_PROMPT)
        first.dispose()
        outcome, _ = _subscribe(peer.client.prompt(PromptRequest.text(SID, "echo next")))
        peer.agent.wait_for_method(CANCEL_REQUEST)
        flush(peer.client.session)
        clock.advance_by(SETTLE_BOUND - 0.1)
        flush(peer.client.session)
        assert peer.agent.count(m.SESSION_PROMPT) == 1
        clock.advance_by(0.2)
        peer.agent.wait_for_method(m.SESSION_PROMPT, 2)  # sent; this agent refuses it (-32600)
        assert outcome.wait().error is not None
    finally:
        peer.close()


def test_prompts_of_other_sessions_are_not_held(quirky: Peer) -> None:
    _dispose_started_prompt(quirky)
    other = quirky.client.prompt(PromptRequest.text("sess-2", "echo other")).run()
    assert other.stop_reason == "end_turn"


# ---------------------------------------------------------------------------- the detector alone
def _detector() -> AbandonedRequests:
    abandoned = AbandonedRequests("client")
    abandoned.cancel_requests_sent = 1
    return abandoned


@pytest.mark.parametrize(
    ("rid", "error", "marks"),
    [
        (None, {"code": -32601, "message": "Method not found"}, True),
        (None, {"code": -32601, "message": "x", "data": {"method": "$/cancel_request"}}, True),
        (7, {"code": -32601, "message": "Method not found: $/cancel_request"}, True),
        (7, {"code": -32601, "message": "Method not found"}, False),
        (None, {"code": -32601, "message": "Method not found: _my/ext"}, False),
        (None, {"code": -32603, "message": "Internal error"}, False),
    ],
)
def test_only_a_32601_about_cancel_request_marks_the_connection(
    rid: Any, error: dict[str, Any], marks: bool
) -> None:
    abandoned = _detector()
    abandoned.on_stray_answer(rid, error)
    assert abandoned.cancel_request_supported is not marks


def test_a_32601_before_any_cancel_request_was_sent_marks_nothing() -> None:
    abandoned = AbandonedRequests("client")
    abandoned.on_stray_answer(None, {"code": -32601, "message": "Method not found"})
    assert abandoned.cancel_request_supported


def test_late_answer_waiters_are_bounded_and_released_on_close() -> None:
    from rxacp.session.abandoned import MAX_LATE_WAITERS
    from rxacp.session.pending import PendingRequest

    released: list[int] = []
    abandoned = AbandonedRequests("client")
    for rid in range(MAX_LATE_WAITERS + 1):
        # a bare PendingRequest (no result type, observer or timeout): only its id is used
        state = PendingRequest(m.SESSION_PROMPT, {}, None, None, None)  # type: ignore[arg-type]
        state.id = rid
        abandoned.wait_for_late_answer(state, partial(released.append, rid))
    assert released == [0]
    taken = abandoned.take(5)
    assert taken is not None and abandoned.take(5) is None
    taken.run_late()
    taken.run_late()
    abandoned.release_all()
    assert released[:2] == [0, 5] and len(released) == MAX_LATE_WAITERS + 1


# ---------------------------------------------------------------------------- real stdio
@pytest.mark.parametrize("quirk", ["no-id", "null-id", "ignore"])
def test_over_stdio_a_disposed_prompt_ends_the_turn_and_the_next_prompt_is_answered(
    quirk: str,
) -> None:
    started = threading.Event()
    chunks: list[str] = []

    def consume(note: Any) -> None:
        chunks.append(note.update.content.text)
        if chunks[-1] == "started":
            started.set()

    params = AgentParameters(sys.executable, [PEER_SCRIPT, quirk, "0.3"])
    client = AcpClient.async_(StdioAcpClientTransport(params)).session_update_consumer(consume)
    client_ = client.build()
    try:
        client_.initialize().run()
        for _ in range(2):
            started.clear()
            subscription = client_.prompt(PromptRequest.text(SID, "long")).subscribe()
            assert started.wait(10)
            subscription.dispose()
            # held until the agent answered the cancelled turn (0.3 s later), then answered
            answer = client_.prompt(PromptRequest.text(SID, "stats")).run()
            assert answer.stop_reason == "end_turn"
        counts = json.loads(chunks[-1])
    finally:
        client_.close()
    assert counts[m.SESSION_CANCEL] == 2
    assert counts[CANCEL_REQUEST] == (2 if quirk == "ignore" else 1)
