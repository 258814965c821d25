"""Testing ACP *client* code against MockAcpAgent (see docs/testing.md).

Run: ``pytest examples/test_my_client.py`` (fixtures as in ``test_my_agent.py``).
"""

from __future__ import annotations

from rxacp.client import AcpClient
from rxacp.errors import AcpProtocolException
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.schema.strict import validate_message, validate_strict
from rxacp.transport import AcpTransport, WireTapTransport


# --- the client code under test ------------------------------------------------------------------
def ask(transport: AcpTransport, question: str) -> str:
    """Ask an agent one question and return its streamed answer as one string."""
    chunks: list[str] = []

    def on_update(note):
        if note.update.session_update == "agent_message_chunk":
            chunks.append(note.update.content.text)

    with AcpClient.sync(transport).session_update_consumer(on_update).build() as client:
        client.initialize()
        session = client.new_session(NewSessionRequest.of("/work")).session_id
        client.prompt(PromptRequest.text(session, question))
    return "".join(chunks)


# --- its tests -----------------------------------------------------------------------------------
def test_joins_the_streamed_chunks(mock_agent):
    mock_agent.on_prompt(updates=["The answer", " is ", "42"])
    assert ask(mock_agent.client_transport, "What is the answer?") == "The answer is 42"
    [prompt] = mock_agent.expect_prompts(1)
    assert prompt.prompt_text() == "What is the answer?"


def test_reports_agent_errors(mock_agent):
    mock_agent.on("session/new", AcpProtocolException(-32000, "Authentication required"))
    try:
        ask(mock_agent.client_transport, "hi")
    except AcpProtocolException as error:
        assert error.code == -32000
    else:
        raise AssertionError("the error was swallowed")
    assert [method for method, _ in mock_agent.received] == ["initialize", "session/new"]


# --- watching the wire and validating strictly ---------------------------------------------------
def test_the_conversation_is_schema_clean(mock_agent):
    mock_agent.on_prompt(updates=["hello"])
    tap = WireTapTransport(mock_agent.client_transport, record=True)
    assert ask(tap, "hi") == "hello"
    for frame in tap.frames:  # WireFrame(direction, raw, message), in order
        print(frame.direction, frame.method or "answer", frame.message)
    assert all(not validate_message(f.message) for f in tap.frames if f.method)


def test_strict_validation_reports_what_lenient_parsing_repairs():
    plan = {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": [{}]}}
    assert validate_strict("session/update", plan) == [
        "update.entries: 1 invalid item(s) (the lenient model skipped them)"
    ]
    no_id = {"jsonrpc": "2.0", "error": {"code": -32601, "message": "no"}}
    assert validate_message(no_id) == [
        'a response must carry an "id" (null only when the request\'s id could not be read)'
    ]
