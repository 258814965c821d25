"""The connection's phase: one checked state machine, written only by ``advance`` / ``end``."""

from __future__ import annotations

import threading

import pytest

from rxacp.errors import AcpConnectionException
from rxacp.session.state import (
    CLOSED,
    CLOSING,
    NEW,
    OPEN,
    STARTING,
    TRANSITIONS,
    ConnectionState,
    IllegalTransition,
)

PHASES = (NEW, STARTING, OPEN, CLOSING, CLOSED)


def _at(phase: str) -> ConnectionState:
    state = ConnectionState()
    for frm, to in ((NEW, STARTING), (STARTING, OPEN), (OPEN, CLOSING)):
        if state.phase == phase:
            break
        assert state.advance(frm, to)
    if phase == CLOSED:
        state.end(AcpConnectionException("ended"))
    assert state.phase == phase
    return state


def test_the_table_is_the_forward_path_and_closed_from_anywhere() -> None:
    assert {
        NEW: {STARTING, CLOSED},
        STARTING: {OPEN, CLOSED},
        OPEN: {CLOSING, CLOSED},
        CLOSING: {CLOSED},
        CLOSED: set(),
    } == TRANSITIONS


@pytest.mark.parametrize("frm", PHASES)
@pytest.mark.parametrize("to", PHASES)
def test_advance_moves_along_legal_edges_only_and_refuses_the_rest_loudly(
    frm: str, to: str
) -> None:
    state = _at(frm)
    if to in TRANSITIONS[frm]:
        assert state.advance(frm, to) is True
        assert state.phase == to
    else:
        with pytest.raises(IllegalTransition, match=f"from {frm} to {to}"):
            state.advance(frm, to)
        assert state.phase == frm


def test_advance_from_a_phase_the_connection_is_not_in_changes_nothing() -> None:
    state = _at(OPEN)
    assert state.advance(NEW, STARTING) is False
    assert state.phase == OPEN


def test_of_many_threads_starting_at_once_exactly_one_moves_the_phase() -> None:
    state = ConnectionState()
    barrier = threading.Barrier(8)
    won: list[bool] = []

    def start() -> None:
        barrier.wait(30)
        won.append(state.advance(NEW, STARTING))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(won) == [False] * 7 + [True]
    assert state.phase == STARTING


@pytest.mark.parametrize("phase", PHASES[:-1])
def test_end_closes_from_any_phase_once_and_keeps_the_first_reason(phase: str) -> None:
    state = _at(phase)
    first, second = AcpConnectionException("first"), AcpConnectionException("second")
    assert state.end(first) is True
    assert state.end(second) is False
    assert state.phase == CLOSED and state.error is first
