"""Security helpers: error redaction on the wire and the permission default.

Redaction policy (``rxacp.errors.exception_to_error``): an unexpected exception in a handler is
answered ``-32603`` with ``"Internal error: <Type>: <first line>"``, environment values replaced by
``$NAME``, at most 300 characters and no ``data``; stack traces stay in the local log.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.errors import AcpConnectionException, exception_to_error
from rxacp.schema import NewSessionResponse, PromptResponse, ReadTextFileRequest
from rxacp.session import AcpSession, wait_for
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
    assert error["code"] == -32603 and "data" not in error
    assert error["message"].startswith("Internal error: RuntimeError: token $RXACP_TEST_API_KEY")
    for leak in (SECRET, "Traceback", "hunter2", ".py", 'File "'):
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
    for exc in cases:
        error = exception_to_error(exc)
        text = json.dumps(error)
        assert SECRET not in text and "\n" not in error["message"], (exc, error)
        assert len(error["message"]) <= 300


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
                wait_for(agent.send_request("session/request_permission", params), 5.0)
            assert getattr(info.value, "code", None) == -32601, info.value
            assert "request_permission_handler" in str(info.value)
            refused += 1
    finally:
        agent.close()
        client.close()
    figure("permission_requests_refused_without_handler", refused)
