"""The client/agent behaviour suite over WebSocket: the reference agent (sync and async APIs)
served by a WebSocketAcpAgentServer on loopback, a sync/async rxacp client on the other end."""

from __future__ import annotations

import threading
import time
from typing import Any

from rxacp.schema import PromptRequest, RequestPermissionRequest, RequestPermissionResponse
from rxacp.testing._reference_script import STREAM_WORDS
from tests.cancelling import CancelWhen

from .conftest import GRACE, WAIT, Conversation


def words(count: int) -> list[str]:
    return [STREAM_WORDS[i % len(STREAM_WORDS)] + " " for i in range(count)]


def test_echo_answers_end_turn_after_exactly_one_chunk(conv: Conversation) -> None:
    sid = conv.new_session()
    response = conv.client.prompt(PromptRequest.text(sid, "echo héllo over websocket 🎉"))
    assert response.stop_reason == "end_turn"
    assert conv.chunks(sid) == ["héllo over websocket 🎉"]


def test_a_thousand_streamed_updates_all_arrive_in_order_before_the_answer(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    response = conv.client.prompt(PromptRequest.text(sid, "stream 1000"))
    assert response.stop_reason == "end_turn"
    assert conv.chunks(sid) == words(1000)  # all of them, in order, when prompt() returned


def _sent(conv: Conversation, method: str, key: str) -> list[Any]:
    """``params[key]`` of every ``method`` message the client wrote, in order."""
    return [m["params"][key] for m in conv.wire.sent if m.get("method") == method]


def test_session_cancel_answers_cancelled_after_every_update_of_the_turn(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    canceller = CancelWhen(lambda: conv.wait_for(lambda: len(conv.chunks(sid)) >= 2))
    response = conv.client.prompt(PromptRequest.text(sid, "slow 5"), canceller.stop)
    at_answer = conv.chunks(sid)
    assert response.stop_reason == "cancelled"
    assert 2 <= len(at_answer) < 50
    conv.new_session()  # a later round trip: anything the turn wrote has arrived by now
    assert conv.chunks(sid) == at_answer == words(len(at_answer))
    assert _sent(conv, "session/cancel", "sessionId") == [sid]


def test_disposing_a_prompt_sends_one_session_cancel_and_one_cancel_request(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    subscription = conv.client.async_client.prompt(PromptRequest.text(sid, "slow 5")).subscribe(
        on_next=lambda _: None, on_error=lambda _: None
    )
    assert conv.wait_for(lambda: len(conv.chunks(sid)) >= 1)  # the turn is under way
    subscription.dispose()
    prompt = next(m for m in conv.wire.sent if m.get("method") == "session/prompt")
    answer = conv.wire.wait_received(lambda m: m.get("id") == prompt["id"])
    # session/cancel is written first, so the agent ends the turn `cancelled` (the answer the
    # disposed subscriber no longer sees); $/cancel_request follows for the same id.
    assert answer["result"]["stopReason"] == "cancelled"
    assert _sent(conv, "session/cancel", "sessionId") == [sid]
    assert _sent(conv, "$/cancel_request", "requestId") == [prompt["id"]]


def test_a_stubborn_handler_is_rescued_by_the_grace_period_and_answered_cancelled(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    canceller = CancelWhen(lambda: conv.wait_for(lambda: len(conv.chunks(sid)) >= 1))
    response = conv.client.prompt(PromptRequest.text(sid, "stubborn 5"), canceller.stop)
    waited = time.monotonic() - canceller.join(WAIT)
    assert response.stop_reason == "cancelled"
    assert GRACE - 0.1 <= waited < GRACE + 1.0
    assert len(conv.chunks(sid)) >= 2  # it kept working during the grace period


def test_session_cancel_answers_the_pending_permission_request_cancelled(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    asking = threading.Event()
    release = threading.Event()

    def hold(req: RequestPermissionRequest) -> RequestPermissionResponse:
        asking.set()
        release.wait(WAIT)  # the user never answers
        return RequestPermissionResponse.selected("allow")

    conv.permission = hold
    canceller = CancelWhen(lambda: asking.wait(WAIT))
    try:
        response = conv.client.prompt(
            PromptRequest.text(sid, "permission Delete it"), canceller.stop
        )
    finally:
        release.set()
    assert response.stop_reason == "cancelled"
    assert conv.chunks(sid) == ["cancelled"]  # the agent saw outcome `cancelled`
    permission_answers = [
        m for m in conv.wire.sent if "result" in m and "outcome" in (m["result"] or {})
    ]
    assert [m["result"]["outcome"]["outcome"] for m in permission_answers] == ["cancelled"]


def test_the_agent_reads_a_file_through_the_client(conv: Conversation) -> None:
    sid = conv.new_session()
    conv.files["/project/notes.txt"] = "first line\nsecond — línea"
    response = conv.client.prompt(PromptRequest.text(sid, "read /project/notes.txt"))
    assert response.stop_reason == "end_turn"
    assert "".join(conv.chunks(sid)) == "first line\nsecond — línea"
    reads: list[Any] = [m for m in conv.wire.received if m.get("method") == "fs/read_text_file"]
    assert [m["params"]["path"] for m in reads] == ["/project/notes.txt"]
