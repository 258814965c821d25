"""The prompt turn: CancellationSignal before/during/after, disposal, timeouts in virtual time."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from reactivex.testing import TestScheduler

from rxacp.client import CancellationSignal
from rxacp.errors import AcpTimeoutException
from rxacp.schema import PromptRequest, PromptResponse
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST

from .conftest import Rig, flush, texts

SID = "sess-1"


class Outcome:
    """Records one subscription's outcome, and the updates seen when the answer arrived."""

    def __init__(self, updates: list[Any] | None = None) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Exception | None = None
        self.updates_at_answer: list[str] | None = None
        self._updates = updates

    def on_next(self, value: Any) -> None:
        self.value = value
        if self._updates is not None:
            self.updates_at_answer = texts(self._updates)

    def on_error(self, error: Exception) -> None:
        self.error = error
        self.done.set()

    def on_completed(self) -> None:
        self.done.set()

    def wait(self) -> Outcome:
        assert self.done.wait(3.0), "no outcome"
        return self


# ---------------------------------------------------------------------------- the signal itself
def test_signal_is_idempotent_and_runs_each_listener_once_across_racing_threads() -> None:
    stop = CancellationSignal()
    calls: list[int] = []
    lock = threading.Lock()

    def listener() -> None:
        with lock:
            calls.append(1)

    stop.add_listener(listener)
    start = threading.Barrier(8)

    def cancel() -> None:
        start.wait(2)
        stop.cancel()

    threads = [threading.Thread(target=cancel) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2)
    assert stop.is_cancelled() and calls == [1]


def test_a_listener_added_after_cancel_runs_at_once_and_a_removed_one_never() -> None:
    stop = CancellationSignal()
    ran: list[str] = []
    remove = stop.add_listener(lambda: ran.append("removed"))
    remove()
    stop.cancel()
    stop.add_listener(lambda: ran.append("late"))
    assert ran == ["late"] and stop.is_cancelled()


def test_when_cancelled_emits_once_on_cancel_and_at_once_if_already_cancelled() -> None:
    stop = CancellationSignal()
    seen: list[Any] = []
    stop.when_cancelled().subscribe(seen.append, on_completed=lambda: seen.append("|"))
    assert seen == []
    stop.cancel()
    stop.when_cancelled().subscribe(seen.append, on_completed=lambda: seen.append("|"))
    assert seen == [True, "|", True, "|"]


# ------------------------------------------------------------------- before / during / after
def test_a_stop_cancelled_before_subscription_sends_nothing_and_answers_cancelled(
    rig: Rig,
) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    stop = CancellationSignal()
    stop.cancel()
    answer = client.prompt(PromptRequest.text(SID, "echo never"), stop)
    assert answer == PromptResponse.cancelled()
    client.ext_method("_test/echo", {})  # marker
    assert rig.agent.count(m.SESSION_PROMPT) == 0 and rig.agent.count(m.SESSION_CANCEL) == 0


def test_stop_during_the_turn_sends_one_session_cancel_and_still_emits_the_answer_last(
    rig: Rig,
) -> None:
    updates: list[Any] = []
    client = rig.async_builder().session_update_consumer(updates.append).build()
    rig.on_close(client.close)
    stop = CancellationSignal()
    outcome = Outcome(updates)
    client.prompt(PromptRequest.text(SID, "wait"), stop).subscribe(
        outcome.on_next, outcome.on_error, outcome.on_completed
    )
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    threads = [threading.Thread(target=stop.cancel) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2)
    outcome.wait()
    assert outcome.error is None and outcome.value.stop_reason == "cancelled"
    assert outcome.updates_at_answer == ["after-cancel"]  # the turn's last update came first
    client.ext_method("_test/echo", {}).run()  # marker
    assert rig.agent.count(m.SESSION_CANCEL) == 1
    assert rig.agent.messages(m.SESSION_CANCEL)[0]["params"] == {"sessionId": SID}
    assert rig.agent.count(CANCEL_REQUEST) == 0


def test_stop_after_the_answer_sends_nothing(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    stop = CancellationSignal()
    assert client.prompt(PromptRequest.text(SID, "echo hi"), stop).stop_reason == "end_turn"
    stop.cancel()
    client.ext_method("_test/echo", {})  # marker
    assert rig.agent.count(m.SESSION_CANCEL) == 0 and rig.agent.count(CANCEL_REQUEST) == 0


def _cancel_once_prompted(rig: Rig, stop: CancellationSignal) -> None:
    """Cancel ``stop`` as soon as the agent received ``session/prompt`` (run on a thread)."""
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    stop.cancel()


def _stopped_once_prompted(rig: Rig) -> tuple[Any, list[Any], CancellationSignal]:
    """A sync client recording its updates, and a signal another thread cancels as soon as
    the agent got the prompt."""
    updates: list[Any] = []
    client = rig.sync_builder().session_update_consumer(updates.append).build()
    rig.on_close(client.close)
    stop = CancellationSignal()
    threading.Thread(target=_cancel_once_prompted, args=(rig, stop), daemon=True).start()
    return client, updates, stop


def test_sync_prompt_stopped_from_another_thread_returns_the_cancelled_answer(rig: Rig) -> None:
    client, updates, stop = _stopped_once_prompted(rig)
    answer = client.prompt(PromptRequest.text(SID, "wait"), stop)
    assert answer.stop_reason == "cancelled" and texts(updates) == ["after-cancel"]
    assert rig.agent.count(m.SESSION_CANCEL) == 1


def test_cancel_then_an_immediate_new_prompt_runs_a_fresh_turn(rig: Rig) -> None:
    client, updates, stop = _stopped_once_prompted(rig)
    first = client.prompt(PromptRequest.text(SID, "wait"), stop)
    second = client.prompt(PromptRequest.text(SID, "echo next"), CancellationSignal())
    assert (first.stop_reason, second.stop_reason) == ("cancelled", "end_turn")
    assert texts(updates) == ["after-cancel", "next"]
    assert [x for x in rig.agent.methods() if x.startswith("session/")] == [
        m.SESSION_PROMPT,
        m.SESSION_CANCEL,
        m.SESSION_PROMPT,
    ]


def test_client_cancel_sends_session_cancel_for_a_session_id_or_a_notification(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    client.cancel("sess-a")
    client.cancel({"sessionId": "sess-b"})
    client.ext_method("_test/echo", {})  # marker
    sent = [msg["params"]["sessionId"] for msg in rig.agent.messages(m.SESSION_CANCEL)]
    assert sent == ["sess-a", "sess-b"]


# ---------------------------------------------------------------------------- disposal
# (the wire traffic of a disposed prompt: test_prompt_disposal.py)
def test_take_until_a_stop_signal_disposes_the_prompt(rig: Rig) -> None:
    from reactivex import operators as ops

    client = rig.async_builder().build()
    rig.on_close(client.close)
    stop = CancellationSignal()
    outcome = Outcome()
    client.prompt(PromptRequest.text(SID, "hang")).pipe(
        ops.take_until(stop.when_cancelled())
    ).subscribe(outcome.on_next, outcome.on_error, outcome.on_completed)
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    stop.cancel()
    rig.agent.wait_for_method(CANCEL_REQUEST)
    assert outcome.wait().value is None and outcome.error is None


# ---------------------------------------------------------------------------- timeouts (virtual)
def _virtual_client(rig: Rig, **options: float) -> tuple[Any, TestScheduler]:
    clock = TestScheduler()
    builder = rig.async_builder().scheduler(clock).request_timeout(options.get("request", 5.0))
    if "prompt" in options:
        builder.prompt_timeout(options["prompt"])
    client = builder.build()
    rig.on_close(client.close)
    return client, clock


def test_a_request_times_out_in_virtual_time_and_tells_the_agent(rig: Rig) -> None:
    client, clock = _virtual_client(rig, request=5.0)
    outcome = Outcome()
    client.ext_method("_test/hang").subscribe(
        outcome.on_next, outcome.on_error, outcome.on_completed
    )
    rig.agent.wait_for_method("_test/hang")
    flush(client.session)
    clock.advance_by(4.9)
    flush(client.session)
    assert not outcome.done.is_set()
    clock.advance_by(0.2)
    assert isinstance(outcome.wait().error, AcpTimeoutException)
    rig.agent.wait_for_method(CANCEL_REQUEST)


def _hanging_prompt(rig: Rig, client: Any) -> Outcome:
    """Subscribe to a prompt the agent never answers; returns once the agent has it."""
    outcome = Outcome()
    client.prompt(PromptRequest.text(SID, "hang")).subscribe(
        outcome.on_next, outcome.on_error, outcome.on_completed
    )
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    flush(client.session)
    return outcome


def test_a_prompt_is_not_bounded_by_the_request_timeout(rig: Rig) -> None:
    client, clock = _virtual_client(rig, request=5.0)
    outcome = _hanging_prompt(rig, client)
    clock.advance_by(3600.0)
    client.ext_method("_test/echo", {}).subscribe()
    rig.agent.wait_for_method("_test/echo")
    flush(client.session)
    assert not outcome.done.is_set() and rig.agent.count(CANCEL_REQUEST) == 0


def test_prompt_timeout_bounds_the_turn_in_virtual_time(rig: Rig) -> None:
    client, clock = _virtual_client(rig, request=5.0, prompt=10.0)
    outcome = _hanging_prompt(rig, client)
    clock.advance_by(9.9)
    flush(client.session)
    assert not outcome.done.is_set()
    clock.advance_by(0.2)
    error = outcome.wait().error
    assert isinstance(error, AcpTimeoutException) and error.method == m.SESSION_PROMPT
    rig.agent.wait_for_method(CANCEL_REQUEST)


@pytest.mark.parametrize("bad", [-1, "5s"])
def test_bad_durations_are_rejected_by_the_builder(rig: Rig, bad: Any) -> None:
    with pytest.raises((ValueError, TypeError), match="request_timeout"):
        rig.async_builder().request_timeout(bad)
    with pytest.raises((ValueError, TypeError), match="prompt_timeout"):
        rig.async_builder().prompt_timeout(bad)


# ---------------------------------------------------------------------------- streaming
def test_a_thousand_updates_reach_every_consumer_in_order_before_the_answer(rig: Rig) -> None:
    first: list[Any] = []
    second: list[Any] = []
    client = (
        rig.async_builder()
        .session_update_consumer(first.append)
        .session_update_consumer(second.append)
        .build()
    )
    rig.on_close(client.close)
    outcome = Outcome(second)
    client.prompt(PromptRequest.text(SID, "stream 1000")).subscribe(
        outcome.on_next, outcome.on_error, outcome.on_completed
    )
    expected = [str(i) for i in range(1000)]
    assert outcome.wait().updates_at_answer == expected
    assert texts(first) == expected
