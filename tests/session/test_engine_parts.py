"""The engine's parts tested alone: each takes the callables it writes through, no transport,
no loop thread (a runner that runs work at once, virtual time for timers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

from rxacp import jsonrpc
from rxacp.errors import AcpConnectionException, AcpProtocolException, AcpTimeoutException
from rxacp.session.dispatch import InFlightRequests
from rxacp.session.inbox import Inbox
from rxacp.session.incoming import IncomingNotification, IncomingRequest
from rxacp.session.loop import LoopRunner
from rxacp.session.pending import PendingRequest
from rxacp.session.requests import PendingRequests
from rxacp.session.state import NEW, OPEN, STARTING, ConnectionState
from rxacp.session.stats import SessionStats


class _InlineRunner:
    """Runs loop work at once, on the calling thread (the test is 'the loop')."""

    def call(self, fn: Callable[[], Any]) -> None:
        fn()

    def call_later(self, fn: Callable[[], Any]) -> None:
        fn()

    def in_loop(self) -> bool:
        return True


def _runner() -> LoopRunner:
    return cast(LoopRunner, _InlineRunner())


def _open_state() -> ConnectionState:
    state = ConnectionState()
    assert state.advance(NEW, STARTING) and state.advance(STARTING, OPEN)
    return state


def _table(
    written: list[dict[str, Any]], scheduler: Any = None, timeout: float | None = None
) -> PendingRequests:
    return PendingRequests(
        _open_state(),
        _runner(),
        scheduler or TestScheduler(),
        written.append,
        role="test",
        request_timeout=timeout,
        stats=SessionStats(),
    )


def _answer(rid: int, result: Any) -> jsonrpc.Response:
    msg = jsonrpc.parse_message({"jsonrpc": "2.0", "id": rid, "result": result})
    assert isinstance(msg, jsonrpc.Response)
    return msg


def test_the_pending_table_writes_one_request_per_subscription_with_fresh_ids() -> None:
    written: list[dict[str, Any]] = []
    table = _table(written)
    source = table.request("m", {"a": 1})
    source.subscribe()
    source.subscribe()
    assert [(m["id"], m["method"], m["params"]) for m in written] == [
        (1, "m", {"a": 1}),
        (2, "m", {"a": 1}),
    ]
    assert len(table) == 2


def test_the_pending_table_delivers_a_taken_answer_to_its_subscriber() -> None:
    written: list[dict[str, Any]] = []
    table = _table(written)
    got: list[Any] = []
    table.request("m").subscribe(got.append)
    answer = _answer(1, {"ok": True})
    pending = table.take(answer)
    assert pending is not None and len(table) == 0
    table.deliver(pending, answer)
    assert got == [{"ok": True}]


def test_disposing_a_pending_request_sends_cancel_request_exactly_once() -> None:
    written: list[dict[str, Any]] = []
    table = _table(written)
    subscription = table.request("m").subscribe()
    subscription.dispose()
    subscription.dispose()
    assert written[1:] == [
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}
    ]
    assert table.take(_answer(1, {})) is None  # a late answer is a stray


def test_a_pending_request_times_out_in_virtual_time_and_tells_the_peer() -> None:
    written: list[dict[str, Any]] = []
    scheduler = TestScheduler()
    table = _table(written, scheduler, timeout=5.0)
    errors: list[Exception] = []
    table.request("m").subscribe(on_error=errors.append)
    scheduler.advance_by(4.9)
    assert errors == []
    scheduler.advance_by(0.2)
    assert len(errors) == 1 and isinstance(errors[0], AcpTimeoutException)
    assert written[-1]["method"] == "$/cancel_request"


def test_fail_all_errors_every_pending_and_queued_request_once() -> None:
    written: list[dict[str, Any]] = []
    table = _table(written)
    errors: list[Exception] = []
    table.request("a").subscribe(on_error=errors.append)
    table.request("b").subscribe(on_error=errors.append)
    queued = table.take(_answer(2, {}))
    assert queued is not None
    reason = AcpConnectionException("gone")
    table.fail_all(reason, [queued])
    table.fail_all(reason, [queued])
    assert errors == [reason, reason]


def test_the_inbox_delivers_an_answer_only_after_the_notification_before_it_finished() -> None:
    order: list[str] = []
    holding: Subject[Any] = Subject()

    def deliver(_pending: PendingRequest, _msg: Any) -> None:
        order.append("answer")

    inbox = Inbox(_runner(), deliver, role="test")

    def slow(note: IncomingNotification) -> reactivex.Observable[Any]:
        order.append(f"note {note.params['n']}")
        return holding

    inbox.handlers["n"] = (slow, True)
    notification = jsonrpc.parse_message({"jsonrpc": "2.0", "method": "n", "params": {"n": 1}})
    assert isinstance(notification, jsonrpc.Notification)
    inbox.on_notification(notification)
    inbox.on_answer(cast(PendingRequest, object()), _answer(1, {}))
    assert order == ["note 1"] and not inbox.idle
    holding.on_completed()
    assert order == ["note 1", "answer"] and inbox.idle


def test_the_inbox_runs_an_unordered_handler_ahead_of_queued_notifications() -> None:
    seen: list[str] = []
    inbox = Inbox(_runner(), lambda _p, _m: None, role="test")
    inbox.handlers["slow"] = (lambda note: Subject(), True)
    inbox.handlers["cancel"] = (lambda note: seen.append(note.method), False)
    for method in ("slow", "slow", "cancel"):
        msg = jsonrpc.parse_message({"jsonrpc": "2.0", "method": method})
        assert isinstance(msg, jsonrpc.Notification)
        inbox.on_notification(msg)
    assert seen == ["cancel"]


def _in_flight(written: list[dict[str, Any]]) -> InFlightRequests:
    return InFlightRequests(_open_state(), _runner(), written.append, written.append, role="test")


def _request(rid: int, method: str) -> jsonrpc.Request:
    msg = jsonrpc.parse_message({"jsonrpc": "2.0", "id": rid, "method": method})
    assert isinstance(msg, jsonrpc.Request)
    return msg


def test_the_in_flight_table_answers_a_request_with_its_handlers_first_value() -> None:
    written: list[dict[str, Any]] = []
    table = _in_flight(written)
    table.handlers["m"] = lambda req: reactivex.of({"v": 1}, {"v": 2})
    table.on_request(_request(7, "m"))
    assert written == [{"jsonrpc": "2.0", "id": 7, "result": {"v": 1}}]
    assert len(table) == 0


def test_cancel_request_disposes_the_handler_and_answers_request_cancelled() -> None:
    written: list[dict[str, Any]] = []
    table = _in_flight(written)
    disposed: list[bool] = []
    table.handlers["m"] = lambda req: reactivex.never().pipe(
        ops.finally_action(lambda: disposed.append(True))
    )
    table.on_request(_request(3, "m"))
    assert len(table) == 1
    table.on_cancel_request({"requestId": 3})
    assert disposed == [True]
    assert written[0]["error"]["code"] == AcpProtocolException.request_cancelled().code
    assert len(table) == 0


def test_abandoning_the_in_flight_table_disposes_handlers_without_answering() -> None:
    written: list[dict[str, Any]] = []
    table = _in_flight(written)
    answered: list[IncomingRequest] = []

    def handler(req: IncomingRequest) -> None:
        answered.append(req)

    table.handlers["m"] = handler
    table.on_request(_request(1, "m"))
    table.abandon_all()
    assert not answered[0].respond({})  # already settled: no answer can be written
    assert written == [] and len(table) == 0
