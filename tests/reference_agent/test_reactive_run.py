"""The async interpreter of the reference agent's scripts, in virtual time (no process).

``run_reactive`` drives a script with one subscription: pauses are timers on
``ctx.scheduler``, a cancel ends a cooperative pause at once, long streams yield to the loop
and wait while the client is behind, and disposing the run stops it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reactivex
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

from rxacp.errors import AcpProtocolException
from rxacp.testing._reference_run import SLICE, run_reactive
from rxacp.testing._reference_script import script_for


class FakeContext:
    """The part of ``PromptContext`` the interpreter uses, on a virtual-time scheduler."""

    def __init__(self) -> None:
        self.scheduler = TestScheduler()
        self.sent: list[tuple[float, str]] = []
        self.callbacks: list[Callable[[], None]] = []
        self.cancelled = False
        self.files: dict[str, reactivex.Observable[Any]] = {}

    def send_message(self, text: str) -> None:
        self.sent.append((self.scheduler.clock, text))

    def send_thought(self, text: str) -> None:
        self.send_message(text)

    def send_update(self, update: Any) -> None:
        self.send_message(repr(update))

    def read_file(self, path: str) -> reactivex.Observable[Any]:
        return self.files[path]

    def is_cancelled(self) -> bool:
        return self.cancelled

    def on_cancel(self, callback: Callable[[], None]) -> None:
        self.callbacks.append(callback)

    def cancel(self) -> None:
        self.cancelled = True
        for callback in self.callbacks:
            callback()


class Outcome:
    def __init__(self, ctx: FakeContext) -> None:
        self.ctx = ctx
        self.answers: list[tuple[float, Any]] = []
        self.errors: list[Exception] = []
        self.completed = False

    def on_next(self, value: Any) -> None:
        self.answers.append((self.ctx.scheduler.clock, value))

    def on_completed(self) -> None:
        self.completed = True


def start(
    text: str, ctx: FakeContext, paused: Callable[[], bool] | None = None
) -> tuple[Outcome, Any]:
    outcome = Outcome(ctx)
    script = script_for(text, "s1")
    # FakeContext: a test double with only the PromptContext members the interpreter uses
    subscription = run_reactive(script, ctx, paused).subscribe(  # type: ignore[arg-type]
        outcome.on_next, outcome.errors.append, outcome.on_completed
    )
    return outcome, subscription


def test_slow_sends_a_chunk_per_tick_on_the_context_scheduler_then_ends_the_turn() -> None:
    ctx = FakeContext()
    outcome, _ = start("slow 0.3", ctx)
    assert ctx.sent == []
    ctx.scheduler.advance_to(0.35)
    assert [round(t, 2) for t, _ in ctx.sent] == [0.1, 0.2, 0.3]
    assert len(outcome.answers) == 1 and outcome.completed
    assert outcome.answers[0][1].stop_reason == "end_turn"


def test_a_cancel_ends_a_cooperative_pause_at_once_and_answers_cancelled() -> None:
    ctx = FakeContext()
    outcome, _ = start("slow 5", ctx)
    ctx.scheduler.advance_to(0.25)
    ctx.cancel()
    assert [a[1].stop_reason for a in outcome.answers] == ["cancelled"]
    assert outcome.answers[0][0] == 0.25  # not at the next tick
    assert len(ctx.sent) == 2
    ctx.scheduler.advance_to(10)
    assert len(ctx.sent) == 2  # the pending tick was disposed


def test_a_pause_after_the_turn_was_cancelled_does_not_wait() -> None:
    ctx = FakeContext()
    ctx.cancelled = True
    outcome, _ = start("slow 5", ctx)
    assert [a[1].stop_reason for a in outcome.answers] == ["cancelled"]
    assert ctx.sent == []


def test_a_stubborn_pause_ignores_the_cancel() -> None:
    ctx = FakeContext()
    outcome, _ = start("stubborn 0.3", ctx)
    ctx.scheduler.advance_to(0.15)
    ctx.cancel()
    assert outcome.answers == []
    ctx.scheduler.advance_to(1)
    assert len(ctx.sent) == 3 and outcome.answers[0][1].stop_reason == "end_turn"


def test_a_long_turn_registers_one_cancel_callback_for_all_its_pauses() -> None:
    ctx = FakeContext()
    start("slow 2", ctx)
    ctx.scheduler.advance_to(3)
    assert len(ctx.sent) == 20
    assert len(ctx.callbacks) == 1


def test_a_long_stream_yields_to_the_loop_after_each_slice() -> None:
    ctx = FakeContext()
    outcome, _ = start(f"stream {3 * SLICE + 5}", ctx)
    assert len(ctx.sent) == SLICE  # the rest waits for the scheduler to run again
    ctx.scheduler.advance_to(0.001)
    assert len(ctx.sent) == 3 * SLICE + 5
    assert outcome.answers[0][1].stop_reason == "end_turn"


def test_a_stream_waits_while_the_client_is_behind_and_resumes_when_it_catches_up() -> None:
    ctx = FakeContext()
    behind = [True]
    outcome, _ = start(f"stream {2 * SLICE}", ctx, lambda: behind[0])
    assert len(ctx.sent) == SLICE
    ctx.scheduler.advance_to(5)
    assert len(ctx.sent) == SLICE  # nothing more while paused
    behind[0] = False
    ctx.scheduler.advance_to(5.01)
    assert len(ctx.sent) == 2 * SLICE
    assert outcome.answers[0][1].stop_reason == "end_turn"


def test_disposing_the_run_mid_stream_stops_it_without_an_answer() -> None:
    ctx = FakeContext()
    outcome, subscription = start(f"stream {10 * SLICE}", ctx)
    subscription.dispose()
    ctx.scheduler.advance_to(1)
    assert len(ctx.sent) == SLICE
    assert outcome.answers == [] and not outcome.completed


def test_a_file_read_answered_at_once_continues_the_script_in_the_same_run() -> None:
    ctx = FakeContext()
    ctx.files["/notes.txt"] = reactivex.just("hello")
    outcome, _ = start("read /notes.txt", ctx)
    assert [text for _, text in ctx.sent] == ["hello"]
    assert outcome.answers[0][1].stop_reason == "end_turn"


def test_a_file_read_answered_later_resumes_the_script_with_its_value() -> None:
    ctx = FakeContext()
    answer: Subject[Any] = Subject()
    ctx.files["/notes.txt"] = answer
    outcome, _ = start("read /notes.txt", ctx)
    assert outcome.answers == []
    answer.on_next("later")
    answer.on_completed()
    assert [text for _, text in ctx.sent] == ["later"]
    assert outcome.answers[0][1].stop_reason == "end_turn"


def test_a_failed_file_read_is_thrown_into_the_script() -> None:
    ctx = FakeContext()
    ctx.files["/gone.txt"] = reactivex.throw(
        AcpProtocolException.resource_not_found("no such file")
    )
    outcome, _ = start("read /gone.txt", ctx)
    assert "could not read /gone.txt" in ctx.sent[0][1]
    assert outcome.answers[0][1].stop_reason == "end_turn"
