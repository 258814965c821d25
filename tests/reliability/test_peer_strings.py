"""Issue 30 item 5: a peer's string is echoed into an error answer as a bounded prefix only.

A 30 MiB session id sent to the reference agent came back whole in a 31 MB ``-32002``; every
place that puts a peer's string (session id, method name, path, terminal id, environment
variable name) into an error message now goes through :func:`rxacp.errors.peer_echo`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rxacp.client import LocalTerminals, WorkspaceFileSystem
from rxacp.errors import MAX_ECHO, AcpProtocolException, peer_echo
from rxacp.schema import (
    CreateTerminalRequest,
    EnvVariable,
    ReadTextFileRequest,
    TerminalOutputRequest,
)
from rxacp.session import AcpSession
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from tests.session.conftest import ScriptedTransport, flush

from .conftest import Figure

MIB = 1024 * 1024
HUGE = 30 * MIB
SMALL_ANSWER = 2048


def huge(char: str = "s") -> str:
    return char * HUGE


def test_peer_echo_keeps_short_strings_and_cuts_long_ones_to_a_prefix_and_a_length() -> None:
    assert peer_echo("sess-1") == "'sess-1'"
    assert peer_echo("sess-1", quote=False) == "sess-1"
    long = peer_echo("x" * (MAX_ECHO + 1))
    assert long == repr("x" * MAX_ECHO) + f"… ({MAX_ECHO + 1} characters)"
    assert len(peer_echo(huge())) < MAX_ECHO + 40
    assert len(peer_echo({"a": ["x" * HUGE]})) <= MAX_ECHO + 1


@pytest.fixture
def reference() -> Iterator[ScriptedTransport]:
    transport = ScriptedTransport()
    agent = build_agent("sync", transport, ReferenceOptions())
    agent.start()
    yield transport
    agent.close()


def test_a_30_mib_session_id_is_not_echoed_whole_by_the_reference_agent(
    reference: ScriptedTransport, figure: Figure
) -> None:
    reference.inject(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    assert "result" in reference.sent(10.0)
    prompt = {"sessionId": huge(), "prompt": [{"type": "text", "text": "hi"}]}
    reference.inject({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": prompt})
    answer = reference.sent(30.0)
    message = answer["error"]["message"]
    figure("answer_to_a_30_mib_session_id_bytes", len(str(answer)))
    assert len(message) < SMALL_ANSWER and f"({HUGE} characters)" in message


def test_a_huge_method_name_is_not_echoed_whole_in_method_not_found() -> None:
    transport = ScriptedTransport()
    session = AcpSession(transport, role="test")
    session.start()
    try:
        transport.inject({"jsonrpc": "2.0", "id": 7, "method": huge("m")})
        flush(session)
        answer = transport.sent(10.0)
    finally:
        session.close()
    assert answer["error"]["code"] == -32601
    assert len(answer["error"]["message"]) < SMALL_ANSWER


@pytest.mark.parametrize(
    "path",
    [huge("a"), "/" + huge("a"), "/d" * 50_000 + "/f"],
    ids=["relative", "outside", "deep-inside"],
)
def test_workspace_file_refusals_echo_a_bounded_path(tmp_path: Path, path: str) -> None:
    fs = WorkspaceFileSystem([str(tmp_path)])
    if path.startswith("/d/d"):
        path = str(tmp_path) + path
    with pytest.raises(AcpProtocolException) as excinfo:
        fs.read_text_file(ReadTextFileRequest(session_id="s", path=path))
    error: Any = excinfo.value
    assert len(error.message) < SMALL_ANSWER
    assert len(str(error.data)) < SMALL_ANSWER


def test_terminal_refusals_echo_a_bounded_terminal_id_and_variable_name(tmp_path: Path) -> None:
    with LocalTerminals([str(tmp_path)]) as terminals:
        with pytest.raises(AcpProtocolException) as unknown:
            terminals.terminal_output(TerminalOutputRequest(session_id="s", terminal_id=huge()))
        bad_env = CreateTerminalRequest(
            session_id="s",
            command=sys.executable,
            env=[EnvVariable(name=huge("="), value="v")],
        )
        with pytest.raises(AcpProtocolException) as env:
            terminals.create_terminal(bad_env)
    assert len(unknown.value.message) < SMALL_ANSWER
    assert len(env.value.message) < SMALL_ANSWER
