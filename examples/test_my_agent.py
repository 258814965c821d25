"""Testing an ACP agent with rxacp's pytest fixtures (see docs/testing.md).

Run: ``pytest examples/test_my_agent.py`` (with rxacp installed the fixtures are registered
automatically; from a source checkout add ``-p rxacp.testing.pytest_plugin``).
"""

from __future__ import annotations

import threading

from rxacp.agent import AcpAgent, SyncAgentBuilder, SyncPromptContext
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.transport import AcpTransport


# --- the agent under test ----------------------------------------------------------------------
def answer(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    """``read <path>`` shows a file, ``count <n>`` streams numbers, anything else is echoed."""
    text = req.prompt_text()
    if text.startswith("read "):
        ctx.send_message(ctx.read_file(text.removeprefix("read ")))
    elif text.startswith("count "):
        stopped = threading.Event()
        ctx.on_cancel(stopped.set)
        for i in range(int(text.removeprefix("count "))):
            if ctx.is_cancelled():
                break
            ctx.send_message(f"{i} ")
            stopped.wait(0.01)  # "thinking"; returns at once when the turn is cancelled
    elif text == "delete":
        if ctx.ask_permission("Delete the build directory"):
            ctx.send_message("deleted")
        else:
            ctx.send_message("kept")
    else:
        ctx.send_message(text)
    return PromptResponse.end_turn()


def my_agent(transport: AcpTransport) -> SyncAgentBuilder:
    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="session-1"))
        .prompt_handler(answer)
    )


# --- its tests -----------------------------------------------------------------------------------
def test_echoes_the_prompt(mock_client):
    client = mock_client(my_agent)
    assert client.prompt("hello").stop_reason == "end_turn"
    assert client.text() == "hello"


def test_shows_a_file_from_the_client(mock_client):
    client = mock_client(my_agent)
    client.file("/project/notes.txt", "remember the milk")
    client.prompt("read /project/notes.txt")
    assert client.text() == "remember the milk"
    assert client.calls("fs/read_text_file")[0]["path"] == "/project/notes.txt"


def test_asks_before_deleting(mock_client):
    client = mock_client(my_agent)
    client.prompt("delete")  # permission requests are rejected unless told otherwise
    client.permission("allow")
    client.prompt("delete")
    assert client.text() == "keptdeleted"
    assert len(client.permission_requests) == 2


def test_stops_streaming_when_cancelled(mock_client):
    client = mock_client(my_agent)
    response = client.prompt_and_cancel_after(3, "count 1000")
    assert response.stop_reason == "cancelled"
    assert 3 <= len(client.updates) < 1000
