"""Security helpers: nothing secret in wire errors, and the permission default.

Policy (``rxacp.errors.exception_to_error``, issue 17 item 8): an unexpected exception in a
handler is answered ``-32603`` ``"Internal error: <Type> (details logged, not sent)"`` with no
``data``: not one character of its text reaches the peer; the exception and its traceback go to
the local log. Only an ``AcpProtocolException`` the handler raised on purpose keeps its text.
"""

from __future__ import annotations

import json
import logging
import os
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import pydantic
import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.errors import AcpConnectionException, AcpProtocolException, exception_to_error
from rxacp.schema import (
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
)
from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.testing.memory import InMemoryTransportPair
from tests.session.conftest import ScriptedTransport

from .conftest import Figure

SECRET = "sk-live-5b2c9e77f1d04a3f"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("RXACP_TEST_API_KEY", SECRET)
    yield SECRET


def _boom_with_everything() -> None:
    try:
        raise KeyError("inner")
    except KeyError:
        tb = traceback.format_exc()
    raise RuntimeError(
        f"token {os.environ['RXACP_TEST_API_KEY']} rejected\n{tb}\nfile says: password=hunter2"
    )


def test_a_failing_handler_never_puts_secrets_tracebacks_or_file_text_on_the_wire(
    secret_env: str, figure: Figure
) -> None:
    peer = ScriptedTransport()

    def prompt(req: Any, ctx: Any) -> PromptResponse:
        _boom_with_everything()
        return PromptResponse.end_turn()

    agent = (
        AcpAgent.sync(peer)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(prompt)
        .build()
    )
    agent.start()
    try:
        peer.inject(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "x"}]},
            }
        )
        answer = peer.sent(5.0)
    finally:
        agent.close()
    wire = json.dumps(answer)
    error = answer["error"]
    assert error == {
        "code": -32603,
        "message": "Internal error: RuntimeError (details logged, not sent)",
    }
    for leak in (SECRET, "RXACP_TEST_API_KEY", "Traceback", "hunter2", ".py", 'File "'):
        assert leak not in wire, leak
    figure("secret_leaks", 0)


def test_exception_mapping_redacts_every_non_protocol_exception(secret_env: str) -> None:
    cases: list[BaseException] = [
        ValueError(f"bad value {SECRET}"),
        AcpConnectionException("peer gone", exit_code=1, stderr_tail=f"export KEY={SECRET}"),
        OSError(f"cannot open /x: {SECRET}\nline two"),
    ]
    try:
        ReadTextFileRequest.model_validate({"sessionId": SECRET, "path": 7})
    except pydantic.ValidationError as exc:
        cases.append(exc)
    for failure in cases:
        error = exception_to_error(failure)
        text = json.dumps(error)
        assert SECRET not in text and "RXACP_TEST" not in text, (failure, error)
        assert "\n" not in error["message"] and len(error["message"]) <= 300


PIN = "4711"  # an environment value under 6 characters: redaction by value could not catch it
FILE_TOKEN = "tok-read-from-a-file-93ab"  # not in the environment: redaction by value misses it
TOKEN_PATH = "/home/alice/.config/agent/token-sk-live-77"


def _leaky_failures() -> list[tuple[str, Callable[[], Any]]]:
    def bad_int() -> Any:
        return int(FILE_TOKEN)

    def bad_key() -> Any:
        empty: dict[str, str] = {}
        return empty[FILE_TOKEN]

    def missing_file() -> Any:
        raise FileNotFoundError(2, "No such file or directory", TOKEN_PATH)

    def short_env() -> Any:
        raise ValueError(f"pin {os.environ['RXACP_TEST_PIN']} refused")

    return [("int", bad_int), ("key", bad_key), ("file", missing_file), ("pin", short_env)]


def test_int_key_and_file_errors_reach_the_peer_as_their_type_only_on_both_sides(
    secret_env: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    figure: Figure,
) -> None:
    monkeypatch.setenv("RXACP_TEST_PIN", PIN)
    failures = dict(_leaky_failures())
    leaks: list[str] = []

    def prompt(req: PromptRequest, ctx: Any) -> PromptResponse:
        text = req.prompt_text()
        if text == "on purpose":
            raise AcpProtocolException(-32002, "session file s1.json not found", {"id": "s1"})
        failures[text]()
        return PromptResponse.end_turn()

    def read_file(req: ReadTextFileRequest) -> ReadTextFileResponse:
        failures[req.path.rsplit("/", 1)[-1]]()
        return ReadTextFileResponse(content="")

    pair = InMemoryTransportPair.create()
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(prompt)
        .build()
    )
    client = AcpClient.sync(pair.client_transport).read_text_file_handler(read_file).build()
    caplog.set_level(logging.WARNING, logger="rxacp.errors")
    answers: list[AcpProtocolException] = []
    try:
        agent.start()
        client.initialize()
        for name in failures:  # agent handlers, answering the client
            with pytest.raises(AcpProtocolException) as info:
                client.prompt(PromptRequest.text("s1", name))
            answers.append(info.value)
        for name in failures:  # client handlers, answering the agent
            params = {"sessionId": "s1", "path": f"/w/{name}"}
            with pytest.raises(AcpProtocolException) as info:
                wait_for(agent.session.send_request("fs/read_text_file", params), 30.0)
            answers.append(info.value)
        with pytest.raises(AcpProtocolException) as info:
            client.prompt(PromptRequest.text("s1", "on purpose"))
        on_purpose = info.value
    finally:
        client.close()
        agent.close()
    for answer in answers:
        wire = repr((answer.code, answer.message, answer.data))
        leaks += [s for s in (SECRET, FILE_TOKEN, PIN, TOKEN_PATH, "RXACP_TEST") if s in wire]
    figure("failures_answered", len(answers))
    figure("secret_leaks", len(leaks))
    assert leaks == []
    for answer in answers:
        assert answer.code == -32603 and answer.data is None, answer
        assert answer.message.endswith("(details logged, not sent)"), answer.message
    kinds = sorted({a.message.split(": ", 1)[1].split(" ")[0] for a in answers})
    assert kinds == ["FileNotFoundError", "KeyError", "ValueError"], kinds
    # an AcpProtocolException raised on purpose keeps its code, text and data
    assert (on_purpose.code, on_purpose.message, on_purpose.data) == (
        -32002,
        "session file s1.json not found",
        {"id": "s1"},
    )
    # the full detail stays in the local log
    logged = "\n".join(r.getMessage() + str(r.exc_info and r.exc_info[1]) for r in caplog.records)
    assert FILE_TOKEN in logged and TOKEN_PATH in logged and PIN in logged
    assert "session/prompt" in logged and "fs/read_text_file" in logged


def test_without_a_permission_handler_every_permission_request_is_refused_and_no_option_invented(
    figure: Figure,
) -> None:
    pair = InMemoryTransportPair.create()
    client = AcpClient.sync(pair.client_transport).build()
    agent = AcpSession(pair.agent_transport, role="agent")
    try:
        client.session.start()
        refused = 0
        for options in ([], [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]):
            params = {"sessionId": "s1", "toolCall": {"toolCallId": "t"}, "options": options}
            with pytest.raises(Exception) as info:
                wait_for(agent.send_request("session/request_permission", params), 30.0)
            assert getattr(info.value, "code", None) == -32601, info.value
            assert "request_permission_handler" in str(info.value)
            refused += 1
    finally:
        agent.close()
        client.close()
    figure("permission_requests_refused_without_handler", refused)
