"""``wait_for``: the blocking shell of the sync APIs."""

from __future__ import annotations

import threading

import pytest
import reactivex
from reactivex.disposable import Disposable
from reactivex.subject import Subject

from rxacp.errors import AcpTimeoutException
from rxacp.session.blocking import wait_for

pytestmark = pytest.mark.timeout(10)


def test_wait_for_returns_the_last_value_or_raises_the_error() -> None:
    assert wait_for(reactivex.of(1, 2), 5) == 2
    assert wait_for(reactivex.empty(), 5) is None
    with pytest.raises(KeyError):
        wait_for(reactivex.throw(KeyError("k")), 5)


def test_wait_for_a_value_from_another_thread() -> None:
    subject: Subject[str] = Subject()

    def emit() -> None:
        subject.on_next("done")
        subject.on_completed()

    threading.Timer(0.02, emit).start()
    assert wait_for(subject, 5) == "done"


def test_wait_for_times_out_with_the_call_named_and_disposes() -> None:
    disposed = threading.Event()
    never: reactivex.Observable[object] = reactivex.never()
    source = reactivex.using(lambda: Disposable(disposed.set), lambda _r: never)
    with pytest.raises(AcpTimeoutException, match="session/prompt"):
        wait_for(source, 0.02, what="session/prompt")
    assert disposed.is_set()
