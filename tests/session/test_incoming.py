"""Incoming requests get exactly one answer; notifications are handled in arrival order."""

from __future__ import annotations

import threading
from typing import Any

import pydantic
import pytest
import reactivex
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.subject import Subject

from rxacp.errors import AcpProtocolException
from rxacp.session import AcpSession, IncomingNotification, IncomingRequest

from .conftest import ScriptedTransport, flush


def request(id: Any, method: str = "echo", params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def echo(req: IncomingRequest) -> reactivex.Observable[Any]:
    return reactivex.of(req.params)


@pytest.mark.parametrize("rid", [1, 0, -7, 2**53 + 1, 2**70, "abc", "", "7", None])
def test_request_ids_are_echoed_with_their_exact_type(
    scripted: tuple[AcpSession, ScriptedTransport], rid: Any
) -> None:
    session, peer = scripted
    session.set_request_handler("echo", echo)
    peer.inject(request(rid, params={"v": "ü"}))
    answer = peer.sent()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"v": "ü"}}
    assert type(answer["id"]) is type(rid)


def test_unknown_method_is_answered_method_not_found(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    session.unhandled_request_hint = lambda m: (
        "register a handler" if m == "fs/read_text_file" else None
    )
    peer.inject(request(1, "fs/read_text_file", {}))
    answer = peer.sent()
    assert answer["id"] == 1 and answer["error"]["code"] == -32601
    assert (
        "fs/read_text_file" in answer["error"]["message"]
        and "register a handler" in answer["error"]["message"]
    )


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (AcpProtocolException(-32002, "missing", {"path": "/x"}), -32002),
        (RuntimeError("kaput"), -32603),
    ],
)
def test_handler_errors_are_mapped_to_their_wire_code(
    scripted: tuple[AcpSession, ScriptedTransport], exc: Exception, code: int
) -> None:
    session, peer = scripted
    session.set_request_handler("echo", lambda req: reactivex.throw(exc))
    peer.inject(request(5))
    answer = peer.sent()
    assert answer["error"]["code"] == code
    assert "Traceback" not in answer["error"]["message"]
    if isinstance(exc, AcpProtocolException):
        assert answer["error"] == {"code": -32002, "message": "missing", "data": {"path": "/x"}}


def test_validation_error_of_params_is_invalid_params(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    class Params(pydantic.BaseModel):
        cwd: str

    session, peer = scripted

    def handler(req: IncomingRequest) -> reactivex.Observable[Any]:
        Params.model_validate(req.params)
        return reactivex.of({})

    session.set_request_handler("echo", handler)
    peer.inject(request(5, params={"cwd": 3}))
    assert peer.sent()["error"]["code"] == -32602


def test_handler_that_completes_empty_still_gets_an_answer(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    session.set_request_handler("echo", lambda req: reactivex.empty())
    peer.inject(request(5))
    assert peer.sent()["error"]["code"] == -32603


def test_cancel_request_disposes_the_handler_and_answers_request_cancelled_at_once(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    disposed = threading.Event()

    def never(req: IncomingRequest) -> reactivex.Observable[Any]:
        return reactivex.create(lambda obs, sch: Disposable(disposed.set))

    session.set_request_handler("echo", never)
    peer.inject(request("r1"))
    flush(session)
    assert session.incoming_request_count == 1
    peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "r1"}})
    answer = peer.sent()
    assert answer["id"] == "r1" and answer["error"]["code"] == -32800
    assert disposed.wait(1)
    assert session.incoming_request_count == 0
    peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "r1"}})
    peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "nope"}})
    assert peer.nothing_sent(session)


def test_cancel_request_with_request_id_null_cancels_the_request_whose_id_is_null(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    disposed = threading.Event()
    session.set_request_handler(
        "echo", lambda req: reactivex.create(lambda obs, sch: Disposable(disposed.set))
    )
    peer.inject(request(None))
    flush(session)
    assert session.incoming_request_count == 1
    peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {}})  # names none
    assert peer.nothing_sent(session)
    peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": None}})
    answer = peer.sent()
    assert answer["id"] is None and answer["error"]["code"] == -32800
    assert disposed.wait(1)
    assert session.incoming_request_count == 0


def test_exactly_one_answer_when_result_and_cancel_race(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    results: Subject[Any] = Subject()
    session.set_request_handler("echo", lambda req: results)
    peer.inject(request(9))
    flush(session)
    peer.inject({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 9}})
    flush(session)
    results.on_next({"late": 1})
    answer = peer.sent()
    assert answer["error"]["code"] == -32800
    assert peer.nothing_sent(session)


def test_duplicate_in_flight_request_id_is_rejected(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    session.set_request_handler("echo", lambda req: reactivex.never())
    peer.inject(request(1))
    peer.inject(request(1))
    answer = peer.sent()
    assert answer["id"] == 1 and answer["error"]["code"] == -32600


def test_malformed_lines_are_answered_and_the_next_request_is_served(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    session.set_request_handler("echo", echo)
    peer.inject(b"{not json")
    first = peer.sent()
    assert first["id"] is None and first["error"]["code"] == -32700
    peer.inject(b"[1, 2]")
    second = peer.sent()
    assert second["id"] is None and second["error"]["code"] == -32600
    peer.inject(b"42")
    assert peer.sent()["error"]["code"] == -32600
    peer.inject(request(3, params={"ok": 1}))
    assert peer.sent() == {"jsonrpc": "2.0", "id": 3, "result": {"ok": 1}}


def test_notifications_are_handled_in_arrival_order_even_with_a_slow_async_handler(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    seen: list[Any] = []
    gate: Subject[Any] = Subject()

    def handler(note: IncomingNotification) -> reactivex.Observable[Any] | None:
        seen.append(("start", note.params["n"]))
        if note.params["n"] == 0:
            return gate.pipe(
                ops.take(1), ops.do_action(on_completed=lambda: seen.append(("end", 0)))
            )
        seen.append(("end", note.params["n"]))
        return None

    session.set_notification_handler("note", handler)
    for n in range(3):
        peer.inject({"jsonrpc": "2.0", "method": "note", "params": {"n": n}})
    flush(session)
    assert seen == [("start", 0)]
    gate.on_next(1)
    flush(session)
    assert seen == [("start", 0), ("end", 0), ("start", 1), ("end", 1), ("start", 2), ("end", 2)]


def test_a_response_is_delivered_after_the_notifications_that_arrived_before_it(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    order: list[str] = []
    gate: Subject[Any] = Subject()

    def handler(note: IncomingNotification) -> reactivex.Observable[Any]:
        order.append(f"note{note.params['n']}")
        return gate.pipe(ops.take(1))

    session.set_notification_handler("note", handler)
    session.send_request("m", {}).subscribe(lambda v: order.append("answer"))
    req = peer.sent()
    peer.inject({"jsonrpc": "2.0", "method": "note", "params": {"n": 1}})
    peer.inject({"jsonrpc": "2.0", "id": req["id"], "result": {}})
    flush(session)
    assert order == ["note1"]
    gate.on_next(0)
    flush(session)
    assert order == ["note1", "answer"]


def test_a_failing_notification_handler_does_not_stop_the_drain(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    seen: list[int] = []

    def handler(note: IncomingNotification) -> None:
        seen.append(note.params["n"])
        if note.params["n"] == 1:
            raise ValueError("bad consumer")

    session.set_notification_handler("note", handler)
    for n in range(3):
        peer.inject({"jsonrpc": "2.0", "method": "note", "params": {"n": n}})
    flush(session)
    assert seen == [0, 1, 2]


def test_blocking_handlers_run_on_a_worker_thread_not_the_loop(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted
    threads: list[str] = []

    def blocking() -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return {"done": True}

    session.set_request_handler("echo", lambda req: session.run_blocking(blocking))
    peer.inject(request(1))
    assert peer.sent()["result"] == {"done": True}
    assert threads and "worker" in threads[0]


def test_notification_handler_is_never_answered_even_on_error(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, peer = scripted

    def boom(note: IncomingNotification) -> None:
        raise RuntimeError("x")

    session.set_notification_handler("note", boom)
    peer.inject({"jsonrpc": "2.0", "method": "note", "params": {}})
    peer.inject({"jsonrpc": "2.0", "method": "unknown/note", "params": {}})
    assert peer.nothing_sent(session)
