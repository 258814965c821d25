"""Outgoing requests are cold Observables; disposal, timeouts and close settle them (DESIGN §3)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

from rxacp.errors import (
    AcpConnectionException,
    AcpProtocolException,
    AcpTimeoutException,
)
from rxacp.session import AcpSession

from .conftest import ScriptedTransport, flush


class Recorder:
    def __init__(self) -> None:
        self.values: list[Any] = []
        self.error: Exception | None = None
        self.completed = False
        self.done = threading.Event()

    def subscribe(self, obs: reactivex.Observable[Any]) -> Any:
        return obs.subscribe(self.values.append, self._on_error, self._on_completed)

    def send(self, obs: reactivex.Observable[Any], peer: ScriptedTransport) -> tuple[Any, Any]:
        """Subscribe to the request ``obs``; returns the subscription and the request sent."""
        return self.subscribe(obs), peer.sent()

    def _on_error(self, e: Exception) -> None:
        self.error = e
        self.done.set()

    def _on_completed(self) -> None:
        self.completed = True
        self.done.set()

    def wait(self, timeout: float = 2.0) -> None:
        assert self.done.wait(timeout), "observable did not terminate"


def test_nothing_is_sent_until_subscription(scripted: tuple[AcpSession, ScriptedTransport]) -> None:
    session, peer = scripted
    session.send_request("session/new", {"cwd": "/"})
    assert peer.nothing_sent(session)


def test_each_subscription_sends_one_request_with_a_fresh_id(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    obs = session.send_request("x/y", {"a": 1})
    obs.subscribe()
    obs.subscribe()
    first, second = peer.sent(), peer.sent()
    assert first["method"] == second["method"] == "x/y"
    assert first["params"] == {"a": 1}
    assert first["jsonrpc"] == "2.0"
    assert first["id"] != second["id"]


def test_result_answer_emits_the_result_then_completes(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    rec = Recorder()
    _, req = rec.send(session.send_request("m", None), peer)
    assert "params" not in req
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": {"ok": True}})
    rec.wait()
    assert rec.values == [{"ok": True}] and rec.completed and rec.error is None
    assert session.pending_request_count == 0


def test_error_answer_errors_with_protocol_exception_keeping_code_message_data(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    rec = Recorder()
    _, req = rec.send(session.send_request("m", {}), peer)
    peer.inject(
        {
            "jsonrpc": "2.0",
            "id": req["id"],
            "error": {"code": -32002, "message": "nope", "data": [1]},
        }
    )
    rec.wait()
    assert isinstance(rec.error, AcpProtocolException)
    assert (rec.error.code, rec.error.message, rec.error.data) == (-32002, "nope", [1])


def test_dispose_before_answer_sends_exactly_one_cancel_request_and_drops_the_late_answer(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    rec = Recorder()
    sub, req = rec.send(session.send_request("slow", {}), peer)
    sub.dispose()
    sub.dispose()
    cancel = peer.sent()
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": req["id"]},
    }
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": {"late": True}})
    assert peer.nothing_sent(session)
    assert rec.values == [] and not rec.done.is_set()
    assert session.pending_request_count == 0


def test_dispose_after_answer_sends_nothing(scripted: tuple[AcpSession, ScriptedTransport]) -> None:
    session, peer = scripted
    rec = Recorder()
    sub, req = rec.send(session.send_request("m", {}), peer)
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": {}})
    rec.wait()
    sub.dispose()
    assert peer.nothing_sent(session)


def test_take_until_a_trigger_cancels_the_request(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    trigger: Subject[int] = Subject()
    rec = Recorder()
    _, req = rec.send(session.send_request("m", {}).pipe(ops.take_until(trigger)), peer)
    trigger.on_next(1)
    rec.wait()
    assert rec.completed and rec.values == []
    assert peer.sent() == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": req["id"]},
    }


@pytest.fixture
def timed() -> Iterator[tuple[AcpSession, ScriptedTransport, TestScheduler]]:
    """A started session with a 5 s request timeout on a virtual clock."""
    peer = ScriptedTransport()
    clock = TestScheduler()
    session = AcpSession(peer, role="test", scheduler=clock, request_timeout=5.0)
    session.start()
    yield session, peer, clock
    session.close()


def test_timeout_in_virtual_time_cancels_and_errors_with_timeout_error(
    timed: tuple[AcpSession, ScriptedTransport, TestScheduler],
) -> None:
    session, peer, clock = timed
    rec = Recorder()
    _, req = rec.send(session.send_request("m", {}), peer)
    flush(session)
    clock.advance_by(4.9)
    flush(session)
    assert not rec.done.is_set()
    clock.advance_by(0.2)
    rec.wait()
    assert isinstance(rec.error, AcpTimeoutException) and isinstance(rec.error, TimeoutError)
    assert peer.sent()["params"] == {"requestId": req["id"]}
    assert session.pending_request_count == 0


def test_per_request_timeout_none_disables_the_timer(
    timed: tuple[AcpSession, ScriptedTransport, TestScheduler],
) -> None:
    session, peer, clock = timed
    rec = Recorder()
    rec.send(session.send_request("session/prompt", {}, timeout=None), peer)
    flush(session)
    clock.advance_by(3600)
    assert peer.nothing_sent(session) and not rec.done.is_set()


def test_peer_eof_errors_every_pending_request_at_once_with_the_reason(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    recs = [Recorder() for _ in range(3)]
    for rec in recs:
        rec.send(session.send_request("m", {}), peer)
    peer.eof(exit_code=3, stderr_tail="boom")
    for rec in recs:
        rec.wait(1.0)
        assert isinstance(rec.error, AcpConnectionException)
        assert rec.error.exit_code == 3 and "boom" in str(rec.error)


def test_close_errors_pending_requests_and_is_idempotent() -> None:
    peer = ScriptedTransport()
    session = AcpSession(peer, role="test")
    session.start()
    rec = Recorder()
    rec.send(session.send_request("m", {}), peer)
    session.close()
    session.close()
    rec.wait(1.0)
    assert isinstance(rec.error, AcpConnectionException)
    assert peer.closed.is_set()


def test_subscribing_after_close_errors_without_sending() -> None:
    peer = ScriptedTransport()
    session = AcpSession(peer, role="test", loop=None)
    session.start()
    peer.eof()
    assert session.wait_closed(2.0)
    rec = Recorder()
    rec.subscribe(session.send_request("m", {}))
    rec.wait()
    assert isinstance(rec.error, AcpConnectionException)
    session.close()


def test_typed_result_is_parsed_with_from_wire(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    class Box:
        def __init__(self, v: Any) -> None:
            self.v = v

        @classmethod
        def from_wire(cls, data: Any) -> Box:
            return cls(data)

    session, peer = scripted
    rec = Recorder()
    _, req = rec.send(session.send_request("m", {}, Box), peer)
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": {"x": 1}})
    rec.wait()
    assert isinstance(rec.values[0], Box) and rec.values[0].v == {"x": 1}


def test_unknown_and_duplicate_responses_do_not_disturb_pending_requests(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    rec = Recorder()
    _, req = rec.send(session.send_request("m", {}), peer)
    peer.inject({"jsonrpc": "2.0", "id": 999, "result": {}})
    peer.inject({"jsonrpc": "2.0", "id": "abc", "result": {}})
    flush(session)
    assert not rec.done.is_set()
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": 1})
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": 2})
    rec.wait()
    flush(session)
    assert rec.values == [1]


def test_wait_closed_async_returns_at_once_after_close_from_another_thread() -> None:
    import asyncio

    peer = ScriptedTransport()
    session = AcpSession(peer, role="test")
    session.start()
    session.close()
    asyncio.run(asyncio.wait_for(session.wait_closed_async(), 2))


def test_close_called_from_a_handler_on_the_loop_releases_the_loop_thread() -> None:
    peer = ScriptedTransport()
    session = AcpSession(peer, role="test")
    session.start()
    loop_threads = [t for t in threading.enumerate() if t.name == "rxacp-test-loop"]
    session.queue_on_loop(session.close)
    assert session.wait_closed(2)
    for thread in loop_threads:
        thread.join(2)
        assert not thread.is_alive()


def test_a_request_subscribed_after_close_errors_at_once_even_though_the_loop_is_gone() -> None:
    peer = ScriptedTransport()
    session = AcpSession(peer, role="test")
    session.start()
    session.close()
    assert session.loop.is_closed()
    rec = Recorder()
    rec.subscribe(session.send_request("m", {}))
    assert rec.done.is_set(), "must settle synchronously: no loop is left to do it"
    assert isinstance(rec.error, AcpConnectionException)


def test_a_failing_precondition_errors_the_request_and_sends_nothing(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted

    def gate() -> None:
        raise AcpProtocolException(-32601, "not advertised")

    rec = Recorder()
    rec.subscribe(session.send_request("m", {}, before=gate))
    rec.wait()
    assert isinstance(rec.error, AcpProtocolException) and rec.error.message == "not advertised"
    assert peer.nothing_sent(session)
    ok = Recorder()
    ok.subscribe(session.send_request("m", {}, before=lambda: None))
    assert peer.sent()["method"] == "m"


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ({"result": {}, "error": {"code": 1, "message": "x"}}, "both result and error"),
        ({}, "without result or error"),
        ({"jsonrpc": "1.0", "result": {}}, "jsonrpc"),
    ],
    ids=["both", "neither", "wrong-version"],
)
def test_a_malformed_answer_with_a_valid_id_fails_its_request_at_once(
    scripted: tuple[AcpSession, ScriptedTransport], broken: dict[str, Any], reason: str
) -> None:
    session, peer = scripted
    rec = Recorder()
    _, sent = rec.send(session.send_request("x/y", {}), peer)
    peer.inject({"jsonrpc": "2.0", "id": sent["id"], **broken})
    rec.wait()
    assert isinstance(rec.error, AcpProtocolException)
    assert rec.error.code == -32603
    assert "Malformed response" in rec.error.message and reason in rec.error.message
    assert session.stats.invalid_messages == 1
    assert session.stats.stray_responses == 0
