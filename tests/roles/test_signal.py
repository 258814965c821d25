"""The one one-shot signal behind the agent's turn cancellation and the client's stop button."""

from __future__ import annotations

from typing import Any

from rxacp.agent import CancelReason
from rxacp.agent.cancel_signal import CancelSignal
from rxacp.client import CancellationSignal
from rxacp.roles.signal import OneShotSignal


def test_a_signal_fires_once_with_the_first_reason() -> None:
    signal = OneShotSignal()
    assert signal.fire(CancelReason.SESSION_CANCEL)
    assert not signal.fire(CancelReason.GRACE_PERIOD)
    assert signal.is_set() and signal.reason is CancelReason.SESSION_CANCEL


def test_listeners_run_once_late_ones_at_once_and_removed_ones_never() -> None:
    signal = OneShotSignal()
    calls: list[str] = []
    signal.add_listener(lambda: calls.append("early"))
    remove = signal.add_listener(lambda: calls.append("removed"))
    remove()
    signal.fire(CancelReason.ANSWERED)
    signal.fire(CancelReason.ANSWERED)
    signal.add_listener(lambda: calls.append("late"))
    assert calls == ["early", "late"]


def test_when_fired_gives_the_reason_to_early_and_late_subscribers() -> None:
    signal = CancelSignal()
    seen: list[Any] = []
    signal.when_cancelled().subscribe(seen.append, on_completed=lambda: seen.append("|"))
    signal.fire(CancelReason.MAX_DURATION)
    signal.when_cancelled().subscribe(seen.append, on_completed=lambda: seen.append("|"))
    assert seen == [CancelReason.MAX_DURATION, "|", CancelReason.MAX_DURATION, "|"]


def test_cancel_reasons_compare_equal_to_their_wire_and_log_text() -> None:
    texts: dict[str, str] = {"session/cancel": "a", "$/cancel_request": "b", "grace period": "c"}
    assert [texts[r] for r in (CancelReason.SESSION_CANCEL, CancelReason.CANCEL_REQUEST)] == [
        "a",
        "b",
    ]
    assert str(CancelReason.GRACE_PERIOD) == "grace period"


def test_the_clients_stop_button_is_the_same_signal_with_its_own_words() -> None:
    stop = CancellationSignal()
    seen: list[Any] = []
    stop.when_cancelled().subscribe(seen.append)
    assert isinstance(stop, OneShotSignal) and not stop.is_cancelled()
    stop.cancel()
    stop.cancel()
    assert stop.is_cancelled() and stop.reason is CancelReason.STOPPED and seen == [True]
