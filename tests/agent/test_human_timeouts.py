"""Issue 30 item 4: requests a person answers (permission, elicitation) and their timeout.

The 60 s request timeout (the Java SDK's default) also bounded ``session/request_permission``,
so a person who took longer than a minute to click got the turn failed as ``-32603 Internal
error: AcpTimeoutException``. The default stays; the error now says which request, after how
long and which setting changes it, and ``human_request_timeout()`` sets a separate limit for
the requests a person answers. Timers run on the harness's virtual clock.
"""

from __future__ import annotations

from typing import Any

import pytest
from reactivex import operators as ops

from rxacp.errors import AcpTimeoutException, exception_to_error
from rxacp.schema import PromptResponse

from .harness import AgentHarness

CAPS = {"fs": {"readTextFile": True}}


def _asks_permission(_request: Any, ctx: Any) -> Any:
    return ctx.ask_permission("deploy").pipe(
        ops.map(lambda allowed: PromptResponse(stop_reason="end_turn" if allowed else "refusal"))
    )


def _reads_a_file(_request: Any, ctx: Any) -> Any:
    return ctx.read_file("/a").pipe(ops.map(lambda _text: PromptResponse(stop_reason="end_turn")))


def _agent(handler: Any, human: float | None = None, api: str = "async") -> AgentHarness:
    def configure(builder: Any) -> None:
        builder.prompt_handler(handler)
        if human is not None:
            builder.human_request_timeout(human)

    return AgentHarness(api, configure=configure, client_capabilities=CAPS)


def test_a_permission_request_timing_out_says_which_request_after_how_long_and_what_to_set() -> (
    None
):
    h = _agent(_asks_permission)
    try:
        rid = h.prompt()
        asked = h.next()
        assert asked["method"] == "session/request_permission"
        h.advance(59.9)
        assert h.idle()  # still waiting for the person
        h.advance(0.1)
        cancel = h.next()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": asked["id"]},
        }
        answer = h.next()
        assert answer["id"] == rid and answer["error"]["code"] == -32603
        message = answer["error"]["message"]
        assert "session/request_permission timed out after 60 s without an answer" in message
        assert "request_timeout()" in message and "human_request_timeout()" in message
    finally:
        h.close()


def test_human_request_timeout_bounds_permission_requests_and_not_the_others() -> None:
    h = _agent(_asks_permission, human=600)
    try:
        h.prompt()
        asked = h.next()
        h.advance(300)  # past the 60 s request timeout: the person still has time
        assert h.idle()
        h.advance(300)
        assert h.next()["params"] == {"requestId": asked["id"]}  # $/cancel_request at 600 s
        message = h.next()["error"]["message"]
        assert "session/request_permission timed out after 600 s" in message
        assert "human_request_timeout()" in message
    finally:
        h.close()
    h = _agent(_reads_a_file, human=600)
    try:
        h.prompt()
        read = h.next()
        assert read["method"] == "fs/read_text_file"
        h.advance(60)  # a machine answers fs/read_text_file: the request timeout applies
        assert h.next()["params"] == {"requestId": read["id"]}
        assert "fs/read_text_file timed out after 60 s" in h.next()["error"]["message"]
    finally:
        h.close()


def test_a_sync_handler_waits_for_a_person_as_long_as_human_request_timeout_allows() -> None:
    def asks(_request: Any, ctx: Any) -> PromptResponse:
        allowed = ctx.ask_permission("deploy")
        return PromptResponse(stop_reason="end_turn" if allowed else "refusal")

    h = _agent(asks, human=3600, api="sync")
    try:
        rid = h.prompt()
        asked = h.next(30.0)
        h.advance(120)
        assert h.idle()  # the blocking call still waits (its own bound is the longest limit)
        h.send(
            {"id": asked["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}
        )
        answer = h.next(30.0)
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}
    finally:
        h.close()


@pytest.mark.parametrize("bad", [-1, "soon"])
def test_human_request_timeout_refuses_a_bad_duration(bad: Any) -> None:
    from rxacp.agent import AcpAgent
    from tests.session.conftest import ScriptedTransport

    with pytest.raises((TypeError, ValueError), match="human_request_timeout"):
        AcpAgent.async_(ScriptedTransport()).human_request_timeout(bad)


def test_the_timeout_error_keeps_its_setting_through_pickling_and_on_the_wire() -> None:
    import pickle

    error = AcpTimeoutException("elicitation/create", 90, setting="human_request_timeout")
    again = pickle.loads(pickle.dumps(error))
    assert again.setting == "human_request_timeout" and str(again) == str(error)
    wire = exception_to_error(error)
    assert wire["code"] == -32603
    assert "elicitation/create timed out after 90 s" in wire["message"]
    assert "human_request_timeout()" in wire["message"]
