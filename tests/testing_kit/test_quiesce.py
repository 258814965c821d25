"""``rxacp.testing.quiesce`` waits for the loop and for worker threads."""

from __future__ import annotations

import threading

import pytest

from rxacp.session import AcpSession
from rxacp.testing import InMemoryTransportPair, quiesce


def test_quiesce_waits_until_a_blocking_handler_on_a_worker_finished() -> None:
    pair = InMemoryTransportPair.create()
    session = AcpSession(pair.client_transport, role="test")
    release = threading.Event()
    finished: list[bool] = []

    def work() -> None:
        release.wait(30)
        finished.append(True)

    try:
        session.run_blocking(work).subscribe()
        threading.Timer(0.05, release.set).start()
        quiesce(session)
        assert finished == [True]
    finally:
        session.close()
        pair.close()


def test_quiesce_names_what_is_still_busy_when_it_gives_up() -> None:
    pair = InMemoryTransportPair.create()
    session = AcpSession(pair.client_transport, role="test")
    release = threading.Event()
    try:
        session.run_blocking(lambda: release.wait(30)).subscribe()
        with pytest.raises(TimeoutError, match="1 worker"):
            quiesce(session, timeout=0.2)
        quiesce(session, workers=False)  # the loop itself is quiet
    finally:
        release.set()
        session.close()
        pair.close()


def test_quiesce_refuses_what_has_no_connection() -> None:
    with pytest.raises(TypeError, match="AcpSession"):
        quiesce(object())
