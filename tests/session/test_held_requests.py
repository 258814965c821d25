"""Incoming requests held by the engine (issue 30): while the peer does not read, and past
``max_workers`` requests of one method; handed over in arrival order, per method."""

from __future__ import annotations

from typing import Any

import pytest
from reactivex.subject import Subject

from rxacp.session import AcpSession, IncomingRequest
from tests.polling import wait_until
from tests.session.conftest import ScriptedTransport

pytestmark = pytest.mark.timeout(60)


class Later:
    """A handler whose answers the test gives, one per request, in any order."""

    def __init__(self) -> None:
        self.started: dict[Any, Subject[Any]] = {}

    def __call__(self, req: IncomingRequest) -> Subject[Any]:
        subject: Subject[Any] = Subject()
        self.started[req.id] = subject
        return subject

    def answer(self, session: AcpSession, rid: Any) -> None:
        subject = self.started[rid]

        def settle() -> None:
            subject.on_next({"id": rid})
            subject.on_completed()

        session.run_on_loop(settle)


def _session(max_workers: int) -> tuple[ScriptedTransport, AcpSession, Later, Later]:
    peer = ScriptedTransport()
    session = AcpSession(peer, role="agent", max_workers=max_workers)
    slow, other = Later(), Later()
    session.set_request_handler("slow", slow)
    session.set_request_handler("other", other)
    session.start()
    return peer, session, slow, other


def test_past_max_workers_requests_of_one_method_wait_in_order_and_others_do_not() -> None:
    peer, session, slow, other = _session(max_workers=2)
    try:
        for rid in (1, 2, 3, 4):
            peer.inject({"jsonrpc": "2.0", "id": rid, "method": "slow"})
        peer.inject({"jsonrpc": "2.0", "id": 9, "method": "other"})
        assert wait_until(lambda: 9 in other.started, 10.0)  # not behind the full method
        assert sorted(slow.started) == [1, 2] and session.stats.requests_held == 2
        slow.answer(session, 2)
        assert peer.sent(5.0) == {"jsonrpc": "2.0", "id": 2, "result": {"id": 2}}
        assert wait_until(lambda: sorted(slow.started) == [1, 2, 3], 10.0)  # next in order
        for rid in (1, 3):
            slow.answer(session, rid)
        assert wait_until(lambda: 4 in slow.started, 10.0)
        assert session.incoming_request_count == 2  # 4 and 9
    finally:
        session.close()


def test_a_cancel_request_for_a_held_request_answers_it_without_calling_the_handler() -> None:
    peer, session, slow, _other = _session(max_workers=1)
    try:
        peer.inject({"jsonrpc": "2.0", "id": 1, "method": "slow"})
        peer.inject({"jsonrpc": "2.0", "id": 2, "method": "slow"})  # held behind 1
        assert wait_until(lambda: session.incoming_request_count == 2, 10.0)
        peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}})
        answer = peer.sent(5.0)
        assert answer["id"] == 2 and answer["error"]["code"] == -32800
        peer.inject({"jsonrpc": "2.0", "id": 2, "method": "slow"})  # the id is free again
        assert wait_until(lambda: session.incoming_request_count == 2, 10.0)
        slow.answer(session, 1)
        assert peer.sent(5.0)["id"] == 1
        assert wait_until(lambda: 2 in slow.started, 10.0)
    finally:
        session.close()


def test_a_duplicate_id_of_a_held_request_is_refused() -> None:
    peer, session, _slow, _other = _session(max_workers=1)
    try:
        peer.inject({"jsonrpc": "2.0", "id": 1, "method": "slow"})
        peer.inject({"jsonrpc": "2.0", "id": 2, "method": "slow"})
        peer.inject({"jsonrpc": "2.0", "id": 2, "method": "other"})
        answer = peer.sent(5.0)
        assert answer["id"] == 2 and answer["error"]["code"] == -32600
        assert "already in flight" in answer["error"]["message"]
    finally:
        session.close()
