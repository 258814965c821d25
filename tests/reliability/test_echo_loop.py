"""Issue 30 item 6: two peers must never amplify each other's errors.

An agent that echoes its stdin to stdout with a prefix (never JSON) turned every ``-32700`` the
client answered into another unparseable line: ~112,000 messages in 6 s, for as long as both
ran. Malformed input is now answered only while the peer also sends something well-formed:
after ``MAX_MALFORMED_IN_A_ROW`` malformed frames with no request or notification between them
the rest are counted, not answered, and the loop dies. Responses are never answered and never
reset the count (an echo of our own answer is a response).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rxacp.session import AcpSession
from rxacp.session.wire import MAX_MALFORMED_IN_A_ROW
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests.session.conftest import ScriptedTransport, flush

from .conftest import ROOT, Figure, wait_until

ODD_AGENT = os.path.join(ROOT, "tests", "cli", "odd_agent.py")


def drain(transport: ScriptedTransport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while not transport._sent.empty():
        out.append(transport.sent(0.0))
    return out


@pytest.fixture
def scripted() -> Iterator[tuple[AcpSession, ScriptedTransport]]:
    transport = ScriptedTransport()
    session = AcpSession(transport, role="test")
    session.start()
    yield session, transport
    session.close()


def test_an_agent_that_echoes_stdin_does_not_loop_with_the_clients_parse_errors(
    tmp_path: Path, figure: Figure
) -> None:
    count_file = tmp_path / "lines"
    params = (
        AgentParameters.builder(sys.executable)
        .args(ODD_AGENT, "echo")
        .env({**os.environ, "ODD_COUNT_FILE": str(count_file)})
        .build()
    )
    session = AcpSession(StdioAcpClientTransport(params), role="client")
    try:
        session.send_request("initialize", {"protocolVersion": 1}).subscribe(on_error=print)
        assert wait_until(lambda: session.stats.parse_errors > MAX_MALFORMED_IN_A_ROW, 30.0)
    finally:
        session.close()  # the agent's stdin ends: it writes how many lines it read
    assert wait_until(count_file.exists, 30.0)
    lines = int(count_file.read_text())
    figure("echo_agent_lines_read", lines)
    # initialize, then one -32700 per answered echo: the loop stopped by itself
    assert lines == 1 + MAX_MALFORMED_IN_A_ROW
    assert session.stats.malformed_unanswered >= 1


def test_malformed_lines_in_a_row_are_answered_up_to_the_bound_then_only_counted(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, transport = scripted
    for _ in range(MAX_MALFORMED_IN_A_ROW + 50):
        transport.inject(b"echo: not json")
    flush(session)
    answers = drain(transport)
    assert len(answers) == MAX_MALFORMED_IN_A_ROW
    assert {a["error"]["code"] for a in answers} == {-32700}
    assert session.stats.parse_errors == MAX_MALFORMED_IN_A_ROW + 50
    assert session.stats.malformed_unanswered == 50


def test_a_request_or_notification_from_the_peer_restores_answers_to_malformed_lines(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, transport = scripted
    for _ in range(MAX_MALFORMED_IN_A_ROW + 1):
        transport.inject(b"{broken")
    transport.inject({"jsonrpc": "2.0", "method": "_x/hello", "params": {}})
    transport.inject([1, 2])  # valid JSON, not a message: -32600
    flush(session)
    answers = drain(transport)
    assert len(answers) == MAX_MALFORMED_IN_A_ROW + 1
    assert answers[-1]["error"]["code"] == -32600


def test_responses_are_never_answered_and_do_not_restore_answers(
    scripted: tuple[AcpSession, ScriptedTransport],
) -> None:
    session, transport = scripted
    echoed = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    for n in range(MAX_MALFORMED_IN_A_ROW):
        transport.inject(b"garbage")
        transport.inject(echoed)  # our own answer, echoed back verbatim
        transport.inject({"jsonrpc": "2.0", "id": 10_000 + n, "result": {}})  # a stray answer
    transport.inject(b"garbage")
    flush(session)
    answers = drain(transport)
    assert len(answers) == MAX_MALFORMED_IN_A_ROW, json.dumps(answers[-1:])
    assert all(a["id"] is None and a["error"]["code"] == -32700 for a in answers)
    assert session.stats.malformed_unanswered == 1
