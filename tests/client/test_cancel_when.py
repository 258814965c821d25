"""``RequestCancellation.cancel_when(trigger)``: the Java graceful cancel — send the cancel when
the trigger fires and still wait for the peer's answer (issue 19.5)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject

from rxacp.client import RequestCancellation
from rxacp.errors import AcpProtocolException
from rxacp.schema import PromptRequest, PromptResponse
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST

from .conftest import Rig, to_concurrent_future

pytestmark = pytest.mark.timeout(30)

SID = "sess-1"
WAIT = 10.0


def _client(rig: Rig) -> Any:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    return client


def test_a_prompt_cancelled_when_the_trigger_emits_sends_session_cancel_and_keeps_the_answer(
    rig: Rig,
) -> None:
    client = _client(rig)
    stop: Subject[str] = Subject()
    result: list[Any] = []
    done = threading.Event()

    def on_error(error: Exception) -> None:
        result.append(error)
        done.set()

    client.prompt(PromptRequest.text(SID, "wait")).pipe(
        RequestCancellation.cancel_when(stop)
    ).subscribe(result.append, on_error, done.set)
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    stop.on_next("user pressed stop")
    stop.on_next("pressed again")
    assert done.wait(WAIT)
    assert result == [PromptResponse.cancelled()], "the agent's answer was kept"
    client.ext_method("_test/echo", {}).block(WAIT)  # marker: everything before it arrived
    assert rig.agent.count(m.SESSION_CANCEL) == 1
    assert rig.agent.count(CANCEL_REQUEST) == 0


def test_a_request_cancelled_when_the_trigger_completes_ends_with_the_peers_minus_32800(
    rig: Rig,
) -> None:
    client = _client(rig)
    stop: Subject[None] = Subject()
    source = client.ext_method("_test/hang", {}).pipe(RequestCancellation.cancel_when(stop))
    future = to_concurrent_future(source)
    rig.agent.wait_for_method("_test/hang")
    stop.on_completed()
    with pytest.raises(AcpProtocolException) as info:
        future.result(WAIT)
    assert info.value.code == -32800
    hang_id = rig.agent.messages("_test/hang")[0]["id"]
    assert [x["params"] for x in rig.agent.messages(CANCEL_REQUEST)] == [{"requestId": hang_id}]


def test_take_until_by_contrast_drops_the_answer_and_completes_empty(rig: Rig) -> None:
    client = _client(rig)
    stop: Subject[None] = Subject()
    source = client.ext_method("_test/hang", {}).pipe(ops.take_until(stop))
    events: list[Any] = []
    done = threading.Event()
    source.subscribe(events.append, events.append, done.set)
    rig.agent.wait_for_method("_test/hang")
    stop.on_next(None)
    assert done.wait(WAIT) and events == []


def test_a_trigger_that_already_completed_cancels_right_after_the_request_is_written(
    rig: Rig,
) -> None:
    client = _client(rig)
    with pytest.raises(AcpProtocolException) as info:
        client.ext_method("_test/hang", {}).pipe(
            RequestCancellation.cancel_when(reactivex.empty())
        ).block(WAIT)
    assert info.value.code == -32800
    assert rig.agent.count(CANCEL_REQUEST) == 1


def test_a_failing_trigger_is_ignored_and_the_answer_arrives(rig: Rig) -> None:
    client = _client(rig)
    answer = (
        client.ext_method("_test/echo", {"x": 1})
        .pipe(RequestCancellation.cancel_when(reactivex.throw(RuntimeError("trigger broke"))))
        .block(WAIT)
    )
    assert answer == {"x": 1}
    assert rig.agent.count(CANCEL_REQUEST) == 0


def test_disposing_after_the_graceful_cancel_sends_no_second_cancel_request(rig: Rig) -> None:
    client = _client(rig)
    stop: Subject[None] = Subject()
    subscription = (
        client.ext_method("_test/hang", {})
        .pipe(RequestCancellation.cancel_when(stop))
        .subscribe(lambda _: None, lambda _e: None)
    )
    rig.agent.wait_for_method("_test/hang")
    stop.on_next(None)  # both reach the loop, in this order, before any answer can
    subscription.dispose()
    client.ext_method("_test/echo", {}).block(WAIT)  # marker
    assert rig.agent.count(CANCEL_REQUEST) == 1


def test_request_cancellation_is_a_namespace() -> None:
    with pytest.raises(TypeError, match="cancel_when"):
        RequestCancellation()
