"""Issue 22, client side: the sync client's blocking handlers for two sessions run at once.

The reference agent (async API, a real subprocess over stdio) asks ``fs/read_text_file`` in two
sessions' turns at the same time; each read handler waits (bounded) until the other one runs. A
first read beforehand leaves the client's pool with one idle worker, the state that serialized
the burst.
"""

from __future__ import annotations

import sys
import threading

import pytest

from rxacp.client import AcpClient
from rxacp.schema import (
    NewSessionRequest,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    SessionNotification,
)
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .._notes import chunk_text
from ..reference_agent.conftest import agent_command, agent_env

pytestmark = pytest.mark.timeout(60)

MEET = 15.0


def test_blocking_read_handlers_of_two_sessions_run_at_the_same_time_over_stdio() -> None:
    meeting = threading.Barrier(2)
    warm = threading.Event()
    messages: dict[str, list[str]] = {}
    lock = threading.Lock()

    def read(req: ReadTextFileRequest) -> ReadTextFileResponse:
        if not warm.is_set():  # the first read leaves an idle worker behind (issue 22's case)
            warm.set()
            return ReadTextFileResponse(content="warm")
        try:
            meeting.wait(MEET)
            return ReadTextFileResponse(content=f"met in {req.session_id}")
        except threading.BrokenBarrierError:
            return ReadTextFileResponse(content="alone")

    def record(note: SessionNotification) -> None:
        if note.update.session_update == "agent_message_chunk":
            with lock:
                messages.setdefault(note.session_id, []).append(chunk_text(note))

    transport = StdioAcpClientTransport(
        AgentParameters(sys.executable, agent_command("--api", "async")[1:], env=agent_env())
    )
    client = (
        AcpClient.sync(transport)
        .session_update_consumer(record)
        .read_text_file_handler(read)
        .build()
    )
    try:
        client.initialize()
        sessions = [client.new_session(NewSessionRequest.of("/tmp")).session_id for _ in range(2)]
        client.prompt(PromptRequest.text(sessions[0], "read /etc/hostname"))
        messages.clear()
        answers: dict[str, str] = {}

        def turn(sid: str) -> None:
            answers[sid] = client.prompt(PromptRequest.text(sid, "read /etc/hostname")).stop_reason

        threads = [threading.Thread(target=turn, args=(sid,)) for sid in sessions]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(MEET + 15)
        assert answers == dict.fromkeys(sessions, "end_turn")
        for sid in sessions:
            assert messages[sid] == [f"met in {sid}"], "the read handlers ran one after another"
    finally:
        client.close_gracefully(3.0)
