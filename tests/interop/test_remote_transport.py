"""The remote transport (Streamable HTTP and WebSocket at ``/acp``) against the official SDKs,
both directions: their clients (TypeScript 2.4.0 ``experimental/http-client`` and
``ws-client``; Python 1.0.0rc3 ``acp.http``) drive the rxacp reference agent served by
``AcpAsgiApp``; rxacp's clients drive their servers (TypeScript ``AcpServer`` over node:http;
Python ``create_asgi_app`` under uvicorn). Scenarios: stream (every update counted before the
answer), cancel (``session/cancel`` mid-turn), permission.

The peers are ``tests/interop/ts/ts_remote.mjs`` and ``tests/interop/peers/python1_remote.py``;
the setup scripts install them (a missing peer FAILS, never skips).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rxacp.client import AcpClient, CancellationSignal
from rxacp.schema import (
    NewSessionRequest,
    PromptRequest,
    RequestPermissionResponse,
    SessionNotification,
)
from rxacp.transport import AcpTransport
from rxacp.transport.http import HttpAcpClientTransport
from rxacp.transport.http._serve import UvicornThread
from rxacp.transport.websocket import WebSocketAcpClientTransport
from tests.remote.conftest import reference_app
from tests.setup_scripts import ROOT, run_setup_script

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

SETUP_TIMEOUT_S = 600
RUN_TIMEOUT_S = 120
STREAM_N = 200
PY1 = ROOT / ".venv-interop-py1" / "bin" / "python"
PY1_PEER = ROOT / "tests" / "interop" / "peers" / "python1_remote.py"
TS_PEER = ROOT / "tests" / "interop" / "ts" / "ts_remote.mjs"


@pytest.fixture(scope="module")
def python1() -> Path:
    run_setup_script(
        "setup_interop_py1.sh",
        timeout=SETUP_TIMEOUT_S,
        needs="the remote-transport interop tests need the official Python SDK 1.0.0rc3",
    )
    return PY1


@pytest.fixture(scope="module")
def node() -> str:
    run_setup_script(
        "setup_interop_ts.sh",
        timeout=SETUP_TIMEOUT_S,
        needs="the remote-transport interop tests need the TypeScript SDK 2.4.0 peers",
    )
    found = shutil.which("node")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def served() -> Iterator[UvicornThread]:
    with UvicornThread(reference_app("async")) as server:
        yield server


def facts_of(command: list[str]) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=ROOT, check=False
    )
    facts: dict[str, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            facts[item["scenario"]] = item
    assert done.returncode == 0, f"{facts}\n{done.stderr[-3000:]}"
    return facts


def assert_peer_client_facts(facts: dict[str, dict[str, Any]]) -> None:
    assert facts["initialize"]["agent"] == "rxacp-reference"
    stream = facts["stream"]
    assert stream == {"scenario": "stream", "stopReason": "end_turn", "atAnswer": STREAM_N}
    cancel = facts["cancel"]
    assert cancel["stopReason"] == "cancelled"
    assert cancel["updatesBefore"] >= 2
    assert cancel["cancelToAnswerMs"] < 2000
    permission = facts["permission"]
    assert permission["stopReason"] == "end_turn"
    assert permission["texts"] == ["allow"]  # the reference agent echoes the chosen option


# ------------------------------------------------------------- their clients, rxacp's app
def test_the_typescript_http_client_streams_cancels_and_answers_permissions(
    node: str, served: UvicornThread
) -> None:
    assert_peer_client_facts(facts_of([node, str(TS_PEER), "client-http", served.url]))


def test_the_typescript_websocket_client_streams_cancels_and_answers_permissions(
    node: str, served: UvicornThread
) -> None:
    url = "ws" + served.url.removeprefix("http")
    command = [node, "--experimental-websocket", str(TS_PEER), "client-ws", url]
    assert_peer_client_facts(facts_of(command))


def test_the_python_http_client_streams_cancels_and_answers_permissions(
    python1: Path, served: UvicornThread
) -> None:
    # its permission answer carries no Acp-Session-Id (the RFD asks for one): rxacp accepts it
    assert_peer_client_facts(facts_of([str(python1), "-I", str(PY1_PEER), "client", served.url]))


# ------------------------------------------------------------- rxacp's clients, their servers
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def peer_server(request: pytest.FixtureRequest, python1: Path, node: str) -> Iterator[str]:
    """``http://127.0.0.1:PORT/acp`` of the official server named by the test's param."""
    port = _free_port()
    if request.param == "python":
        command = [str(python1), "-I", str(PY1_PEER), "serve", str(port)]
    else:
        command = [node, str(TS_PEER), "serve", str(port)]
    child = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        child.kill()
        child.wait(10)
        if child.stdout is not None:
            child.stdout.close()


class Client:
    """A sync rxacp client recording updates, allowing permissions."""

    def __init__(self, transport: AcpTransport) -> None:
        self.notes: list[SessionNotification] = []
        self._cond = threading.Condition()
        self.client = (
            AcpClient.sync(transport)
            .session_update_consumer(self._record)
            .request_permission_handler(lambda req: RequestPermissionResponse.selected("allow"))
            .build()
        )
        self.client.initialize()

    def _record(self, note: SessionNotification) -> None:
        with self._cond:
            self.notes.append(note)
            self._cond.notify_all()

    def texts(self, sid: str) -> list[str]:
        with self._cond:
            return [
                str(getattr(getattr(n.update, "content", None), "text", ""))
                for n in self.notes
                if n.session_id == sid
            ]

    def wait_texts(self, sid: str, count: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self.texts(sid)) >= count, 20)


def _transports(url: str, server: str) -> list[AcpTransport]:
    out: list[AcpTransport] = [HttpAcpClientTransport(url)]
    if server == "python":  # the TypeScript AcpServer's upgrade needs the `ws` package
        out.append(WebSocketAcpClientTransport("ws" + url.removeprefix("http")))
    return out


def _scenarios(peer: Client) -> None:
    sid = peer.client.new_session(NewSessionRequest.of("/tmp")).session_id
    answer = peer.client.prompt(PromptRequest.text(sid, f"stream {STREAM_N}"))
    assert answer.stop_reason == "end_turn"
    assert peer.texts(sid) == [str(i) for i in range(STREAM_N)]  # all of them, in order, first

    sid = peer.client.new_session(NewSessionRequest.of("/tmp")).session_id
    signal = CancellationSignal()

    def cancel_after_two() -> None:
        if peer.wait_texts(sid, 2):
            signal.cancel()

    threading.Thread(target=cancel_after_two, daemon=True).start()
    answer = peer.client.prompt(PromptRequest.text(sid, "slow 5"), signal)
    assert answer.stop_reason == "cancelled"
    assert len(peer.texts(sid)) >= 2

    sid = peer.client.new_session(NewSessionRequest.of("/tmp")).session_id
    answer = peer.client.prompt(PromptRequest.text(sid, "permission"))
    assert answer.stop_reason == "end_turn"
    assert peer.texts(sid)[-1] in ("allow", "permission:allow")  # what each peer agent says


@pytest.mark.parametrize("peer_server", ["python", "typescript"], indirect=True)
def test_rxacp_clients_stream_cancel_and_answer_permissions_against_official_servers(
    peer_server: str, request: pytest.FixtureRequest
) -> None:
    server = request.node.callspec.params["peer_server"]
    for transport in _transports(peer_server, server):
        peer = Client(transport)
        try:
            _scenarios(peer)
        finally:
            peer.client.close()
