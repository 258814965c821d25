"""The engine stops reading while its ordered inbox is too deep (consumers fell behind) and
reads again once it drained to a quarter (``max_queued_notifications``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from reactivex.subject import Subject

from rxacp.session import AcpSession

from .conftest import ScriptedTransport, flush


class PausableTransport(ScriptedTransport):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")


def _note(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "_test/note", "params": {"n": n}}


def test_reading_pauses_at_the_bound_and_resumes_at_a_quarter() -> None:
    transport = PausableTransport()
    session = AcpSession(transport, role="client", max_queued_notifications=8)
    holds: list[Subject[Any]] = []
    seen: list[int] = []
    lock = threading.Lock()

    def handler(note: Any) -> Any:
        with lock:
            seen.append(note.params["n"])
            hold: Subject[Any] = Subject()
            holds.append(hold)
        return hold  # this handler holds the inbox until released

    session.set_notification_handler("_test/note", handler)
    session.start()
    try:
        for n in range(9):  # one being handled + eight queued
            transport.inject(_note(n))
        flush(session)
        assert transport.calls == ["pause"] and session.stats.read_pauses == 1
        for released in range(6):  # queue 8 -> 2 (the quarter): resume once
            session.run_on_loop(holds[released].on_completed)
            flush(session)
        assert transport.calls == ["pause", "resume"]
        for released in range(6, 9):
            session.run_on_loop(holds[released].on_completed)
            flush(session)
        assert seen == list(range(9))  # all delivered, in order
    finally:
        session.close()


def test_fast_handlers_never_pause_reading() -> None:
    transport = PausableTransport()
    session = AcpSession(transport, role="client", max_queued_notifications=4)
    session.set_notification_handler("_test/note", lambda note: None)
    session.start()
    try:
        for n in range(100):
            transport.inject(_note(n))
        flush(session)
        assert transport.calls == [] and session.stats.read_pauses == 0
    finally:
        session.close()


@pytest.mark.parametrize("bad", [0, 3, "8", True])
def test_a_bad_inbox_bound_is_refused(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="max_queued_notifications"):
        AcpSession(ScriptedTransport(), max_queued_notifications=bad)
