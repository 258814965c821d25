"""The client/agent behaviour suite of ``tests/websocket`` over the remote endpoint: the
reference agent (sync and async APIs) served by ``AcpAsgiApp`` under uvicorn, an rxacp client
over Streamable HTTP and over the WebSocket upgrade of the same ``/acp`` path."""

from __future__ import annotations

from tests.websocket.test_behaviours import (
    test_a_stubborn_handler_is_rescued_by_the_grace_period_and_answered_cancelled,
    test_a_thousand_streamed_updates_all_arrive_in_order_before_the_answer,
    test_disposing_a_prompt_sends_one_session_cancel_and_one_cancel_request,
    test_echo_answers_end_turn_after_exactly_one_chunk,
    test_session_cancel_answers_cancelled_after_every_update_of_the_turn,
    test_session_cancel_answers_the_pending_permission_request_cancelled,
    test_the_agent_reads_a_file_through_the_client,
)

__all__ = [
    "test_a_stubborn_handler_is_rescued_by_the_grace_period_and_answered_cancelled",
    "test_a_thousand_streamed_updates_all_arrive_in_order_before_the_answer",
    "test_disposing_a_prompt_sends_one_session_cancel_and_one_cancel_request",
    "test_echo_answers_end_turn_after_exactly_one_chunk",
    "test_session_cancel_answers_cancelled_after_every_update_of_the_turn",
    "test_session_cancel_answers_the_pending_permission_request_cancelled",
    "test_the_agent_reads_a_file_through_the_client",
]
