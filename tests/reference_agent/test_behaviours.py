"""Every reference-agent behaviour over real stdio, once per API (sync, async, decorators)."""

from __future__ import annotations

import threading
import time

import pytest

from rxacp.client import CancellationSignal
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
)
from rxacp.testing._reference_script import STREAM_WORDS
from tests.cancelling import CancelWhen

from .conftest import GRACE_S, WAIT, Conversation


def ask(
    conv: Conversation, session_id: str, text: str, stop: CancellationSignal | None = None
) -> PromptResponse:
    return conv.client.prompt(PromptRequest.text(session_id, text), stop)


def test_initialize_names_the_reference_agent_and_its_session_capabilities(
    conv: Conversation,
) -> None:
    assert conv.init.agent_info is not None
    assert conv.init.agent_info.name == "rxacp-reference"
    caps = conv.client.agent_capabilities
    assert caps is not None
    assert caps.supports("loadSession")
    assert caps.supports("sessionCapabilities.list")
    assert caps.supports("sessionCapabilities.close")


def test_echo_sends_exactly_one_message_chunk_then_ends_the_turn(conv: Conversation) -> None:
    sid = conv.new_session()
    response = ask(conv, sid, "echo hello there")
    assert response.stop_reason == "end_turn"
    chunks = conv.of(sid, "agent_message_chunk")
    assert [c.content.text for c in chunks] == ["hello there"]


def test_unknown_text_is_echoed_whole(conv: Conversation) -> None:
    sid = conv.new_session()
    assert ask(conv, sid, "what is ACP?").stop_reason == "end_turn"
    assert conv.text(sid) == "what is ACP?"


def test_stream_sends_n_chunks_in_order(conv: Conversation) -> None:
    sid = conv.new_session()
    assert ask(conv, sid, "stream 20").stop_reason == "end_turn"
    chunks = [c.content.text for c in conv.of(sid, "agent_message_chunk")]
    assert len(chunks) == 20
    assert chunks[:3] == [w + " " for w in STREAM_WORDS[:3]]


def test_stream_with_a_bad_count_is_answered_invalid_params(conv: Conversation) -> None:
    sid = conv.new_session()
    with pytest.raises(AcpProtocolException) as info:
        ask(conv, sid, "stream lots")
    assert info.value.code == -32602
    assert "stream" in str(info.value)


def test_slow_stops_at_once_when_cancelled_and_is_answered_cancelled(conv: Conversation) -> None:
    sid = conv.new_session()
    canceller = CancelWhen(
        lambda: conv.wait_for(lambda: len(conv.of(sid, "agent_message_chunk")) >= 2)
    )
    response = ask(conv, sid, "slow 5", canceller.stop)
    done = time.monotonic()
    cancelled_at = canceller.join(WAIT)
    assert response.stop_reason == "cancelled"
    assert done - cancelled_at < GRACE_S  # cooperative: before the grace period ended
    assert len(conv.of(sid, "agent_message_chunk")) < 5


def test_stubborn_ignores_cancel_and_the_grace_period_answers_cancelled(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    canceller = CancelWhen(
        lambda: conv.wait_for(lambda: len(conv.of(sid, "agent_message_chunk")) >= 1)
    )
    response = ask(conv, sid, "stubborn 5", canceller.stop)
    waited = time.monotonic() - canceller.join(WAIT)
    assert response.stop_reason == "cancelled"
    assert GRACE_S * 0.9 <= waited < GRACE_S + 15.0  # the grace period answered, not earlier
    chunks_after_cancel = len(conv.of(sid, "agent_message_chunk"))
    assert chunks_after_cancel >= 3  # it kept working during the grace period


def test_read_echoes_the_file_the_client_serves(conv: Conversation) -> None:
    sid = conv.new_session()
    conv.files["/work/notes.txt"] = "line one\nline two"
    assert ask(conv, sid, "read /work/notes.txt").stop_reason == "end_turn"
    assert conv.text(sid) == "line one\nline two"


def test_read_of_a_relative_path_is_invalid_params(conv: Conversation) -> None:
    sid = conv.new_session()
    with pytest.raises(AcpProtocolException) as info:
        ask(conv, sid, "read notes.txt")
    assert info.value.code == -32602


def test_write_sends_the_text_through_the_client(conv: Conversation) -> None:
    sid = conv.new_session()
    assert ask(conv, sid, "write /work/out.txt hello  world").stop_reason == "end_turn"
    assert conv.files["/work/out.txt"] == "hello  world"
    assert "wrote 12 bytes" in conv.text(sid)


@pytest.mark.parametrize("option", ["allow", "reject"])
def test_permission_echoes_the_option_the_client_chose(conv: Conversation, option: str) -> None:
    sid = conv.new_session()
    asked: list[RequestPermissionRequest] = []

    def choose(req: RequestPermissionRequest) -> RequestPermissionResponse:
        asked.append(req)
        return RequestPermissionResponse.selected(option)

    conv.permission = choose
    assert ask(conv, sid, "permission Delete everything").stop_reason == "end_turn"
    assert conv.text(sid) == option
    assert [o.option_id for o in asked[0].options] == ["allow", "reject"]
    assert asked[0].tool_call.title == "Delete everything"


def test_permission_cancelled_while_asking_echoes_cancelled(conv: Conversation) -> None:
    sid = conv.new_session()
    asking = threading.Event()
    never = threading.Event()

    def hold(req: RequestPermissionRequest) -> RequestPermissionResponse:
        asking.set()
        never.wait(WAIT)
        return RequestPermissionResponse.selected("allow")

    conv.permission = hold
    canceller = CancelWhen(lambda: asking.wait(WAIT))
    try:
        response = ask(conv, sid, "permission", canceller.stop)
    finally:
        never.set()
    assert response.stop_reason == "cancelled"
    assert conv.text(sid) == "cancelled"


def test_terminal_runs_the_command_in_a_client_terminal_and_echoes_its_output(
    conv: Conversation,
) -> None:
    sid = conv.new_session()
    assert ask(conv, sid, "terminal echo from-the-terminal").stop_reason == "end_turn"
    assert conv.text(sid).strip() == "from-the-terminal"
    thoughts = "".join(t.content.text for t in conv.of(sid, "agent_thought_chunk"))
    assert "exit code 0" in thoughts
    # ctx.execute releases the terminal after use (fire-and-forget, so possibly after the answer)
    assert conv.terminals.any_released.wait(WAIT)


def test_plan_sends_the_plan_as_it_progresses(conv: Conversation) -> None:
    sid = conv.new_session()
    assert ask(conv, sid, "plan").stop_reason == "end_turn"
    plans = conv.of(sid, "plan")
    assert len(plans) == 4
    assert [e.status for e in plans[0].entries] == ["in_progress", "pending", "pending"]
    assert all(e.status == "completed" for e in plans[-1].entries)


def test_tool_announces_a_tool_call_and_completes_it(conv: Conversation) -> None:
    sid = conv.new_session()
    assert ask(conv, sid, "tool").stop_reason == "end_turn"
    calls = conv.of(sid, "tool_call")
    updates = conv.of(sid, "tool_call_update")
    assert len(calls) == 1
    assert [u.status for u in updates] == ["in_progress", "completed"]
    assert {u.tool_call_id for u in updates} == {calls[0].tool_call_id}
    assert updates[-1].content[0].content.text == "42"


def test_fail_is_answered_internal_error(conv: Conversation) -> None:
    sid = conv.new_session()
    with pytest.raises(AcpProtocolException) as info:
        ask(conv, sid, "fail")
    assert info.value.code == -32603
