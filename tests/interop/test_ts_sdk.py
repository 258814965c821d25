"""Interop with the OFFICIAL TypeScript ACP SDK (``@agentclientprotocol/sdk``), over real stdio.

Two directions, each a row of the combined interop matrix (``tests/interop/matrix.py``):

* rxacp client → TS-SDK agent (``tests/interop/ts/ts_agent.mjs``, one fresh process per test);
* TS-SDK client (``tests/interop/ts/ts_client.mjs``) → rxacp reference agent
  (``python -m rxacp.testing.reference_agent --api sync|async|decorators``); the TS client runs
  every scenario once per API and prints one JSON line of facts per scenario, asserted here.

The TS peers are installed by ``scripts/setup_interop_ts.sh`` (``npm ci`` from the committed lock
file); if node/npm or the registry is unavailable the session fixture FAILS (never skips).

This module is *not* responsible for the Python-SDK interop (``test_client_vs_python_sdk.py``),
for the peers' code (``tests/interop/ts/``) or for the conformance checker.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rxacp.client import AcpClient, AcpSyncClient, CancellationSignal
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    AgentMessageChunk,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TextContent,
)
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests.interop.matrix import MATRIX, SCENARIOS, Matrix
from tests.interop.peer_clients import (
    CANCEL_BOUND_MS,
    CHECKS,
    STREAM_N,
    Check,
    run_peer_client,
    scenario_facts,
)
from tests.setup_scripts import run_setup_script

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
TS_DIR = ROOT / "tests" / "interop" / "ts"
TS_AGENT = TS_DIR / "ts_agent.mjs"
TS_CLIENT = TS_DIR / "ts_client.mjs"
SETUP_TIMEOUT_S = 420.0
WAIT_S = 30.0  # a bound for waits that succeed at once; generous for a loaded machine
"""Bound of every wait in these tests (an answer normally takes milliseconds)."""
SLOW_SECONDS = 5
"""``slow`` runs this long unless cancelled; cancellation must answer far sooner."""
TS_FAIL_CODE = -32042
"""The code ``ts_agent.mjs`` answers ``fail`` with."""
NON_ASCII = "ünïcödé ✓ 日本語 — ölçü\nzweite Zeile: ß\n"

RXACP_TO_TS = "rxacp client -> TS-SDK agent"
APIS = ("sync", "async", "decorators")


def ts_to_rxacp(api: str) -> str:
    """The matrix row of the TS-SDK client driving the reference agent with ``api``."""
    return f"TS-SDK client -> rxacp agent ({api})"


# --------------------------------------------------------------------------------- matrix
@pytest.fixture(scope="module")
def matrix() -> Matrix:
    """The combined interop matrix (printed once at session end by tests/interop/conftest.py)."""
    return MATRIX


# --------------------------------------------------------------------------------- setup
@pytest.fixture(scope="session")
def ts_peers() -> Path:
    """Install the TS peers (``npm ci`` from the lock file). FAILS loudly if it cannot."""
    run_setup_script(
        "setup_interop_ts.sh",
        timeout=SETUP_TIMEOUT_S,
        needs="the TypeScript interop tests need the TS ACP SDK peers (node/npm and the registry)",
    )
    return TS_DIR


@pytest.fixture(scope="session")
def unicode_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An absolute path with non-ASCII name and content."""
    path = tmp_path_factory.mktemp("interop-files") / "dätei-日本.txt"
    path.write_text(NON_ASCII, encoding="utf-8")
    return path


# ------------------------------------------------------------ rxacp client -> TS-SDK agent
def _record(errors: list[Exception], error: Exception, done: threading.Event) -> None:
    errors.append(error)
    done.set()


class TsAgentRig:
    """An rxacp sync client connected to a fresh ``ts_agent.mjs`` over stdio."""

    def __init__(self) -> None:
        self.updates: list[SessionNotification] = []
        self.first_update = threading.Event()
        self.reads: list[str] = []
        self.permission_requests: list[RequestPermissionRequest] = []
        self.permission_choice = "allow"
        self.stderr: list[str] = []
        params = (
            AgentParameters.builder("node")
            .args(str(TS_AGENT))
            .cwd(TS_DIR)
            .on_stderr_line(self.stderr.append)
            .build()
        )
        self.client: AcpSyncClient = (
            AcpClient.sync(StdioAcpClientTransport(params))
            .request_timeout(WAIT_S)
            .prompt_timeout(WAIT_S * 2)
            .session_update_consumer(self._on_update)
            .read_text_file_handler(self._read)
            .request_permission_handler(self._permission)
            .build()
        )

    def _on_update(self, note: SessionNotification) -> None:
        self.updates.append(note)
        self.first_update.set()

    def _read(self, req: ReadTextFileRequest) -> ReadTextFileResponse:
        self.reads.append(req.path)
        return ReadTextFileResponse(content=Path(req.path).read_text(encoding="utf-8"))

    def _permission(self, req: RequestPermissionRequest) -> RequestPermissionResponse:
        self.permission_requests.append(req)
        prefix = f"{self.permission_choice}_"
        option = next(o for o in req.options if str(o.kind).startswith(prefix))
        return RequestPermissionResponse.selected(option.option_id)

    def texts(self, session_id: str | None = None) -> list[str]:
        """The text of every agent_message_chunk (of ``session_id`` if given), in order."""
        out: list[str] = []
        for note in self.updates:
            update = note.update
            if session_id is not None and note.session_id != session_id:
                continue
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
                out.append(update.content.text)
        return out

    def start(self) -> str:
        """initialize + session/new; returns the session id."""
        self.client.initialize()
        return self.client.new_session({"cwd": str(TS_DIR), "mcpServers": []}).session_id

    def stats(self) -> dict[str, Any]:
        """What the TS agent observed (``_interop/stats``); also a round trip: every update the
        agent wrote before this answer has been consumed when it returns."""
        result: dict[str, Any] = self.client.ext_method("_interop/stats")
        return result


@pytest.fixture
def ts_agent(ts_peers: Path) -> Iterator[TsAgentRig]:
    rig = TsAgentRig()
    yield rig
    rig.client.close()


def test_rxacp_client_initializes_the_ts_sdk_agent(ts_agent: TsAgentRig, matrix: Matrix) -> None:
    with matrix.cell(RXACP_TO_TS, "initialize"):
        init = ts_agent.client.initialize()
        assert init.protocol_version == 1
        assert init.agent_info is not None and init.agent_info.name == "ts-sdk-interop-agent"


def test_rxacp_client_opens_distinct_sessions_on_the_ts_sdk_agent(
    ts_agent: TsAgentRig, matrix: Matrix
) -> None:
    with matrix.cell(RXACP_TO_TS, "new_session"):
        first = ts_agent.start()
        second = ts_agent.client.new_session({"cwd": str(TS_DIR), "mcpServers": []}).session_id
        assert first and second and first != second


def test_rxacp_client_gets_the_ts_sdk_agent_echo_with_non_ascii_text(
    ts_agent: TsAgentRig, matrix: Matrix
) -> None:
    with matrix.cell(RXACP_TO_TS, "echo"):
        sid = ts_agent.start()
        answer = ts_agent.client.prompt(PromptRequest.text(sid, "echo grüße ✓ 日本"))
        assert answer.stop_reason == "end_turn"
        assert ts_agent.texts(sid) == ["grüße ✓ 日本"]


def test_rxacp_client_receives_all_10000_streamed_updates_in_order(
    ts_agent: TsAgentRig, matrix: Matrix
) -> None:
    with matrix.cell(RXACP_TO_TS, "stream_10000"):
        sid = ts_agent.start()
        answer = ts_agent.client.prompt(PromptRequest.text(sid, f"stream {STREAM_N}"))
        assert answer.stop_reason == "end_turn"
        # The prompt's answer is emitted only after its updates were consumed.
        assert ts_agent.texts(sid) == [str(i) for i in range(STREAM_N)]


def test_rxacp_client_serves_a_non_ascii_file_to_the_ts_sdk_agent(
    ts_agent: TsAgentRig, matrix: Matrix, unicode_file: Path
) -> None:
    with matrix.cell(RXACP_TO_TS, "read_non_ascii"):
        sid = ts_agent.start()
        answer = ts_agent.client.prompt(PromptRequest.text(sid, f"read {unicode_file}"))
        assert answer.stop_reason == "end_turn"
        assert ts_agent.reads == [str(unicode_file)]
        assert ts_agent.texts(sid) == [NON_ASCII]


@pytest.mark.parametrize("choice", ["allow", "reject"])
def test_rxacp_client_answers_the_ts_sdk_agent_permission_request(
    ts_agent: TsAgentRig, matrix: Matrix, choice: str
) -> None:
    with matrix.cell(RXACP_TO_TS, f"permission_{choice}"):
        ts_agent.permission_choice = choice
        sid = ts_agent.start()
        answer = ts_agent.client.prompt(PromptRequest.text(sid, "permission"))
        assert answer.stop_reason == "end_turn"
        assert len(ts_agent.permission_requests) == 1
        assert ts_agent.permission_requests[0].session_id == sid
        assert ts_agent.texts(sid) == [choice]


def test_rxacp_stop_signal_gets_cancelled_from_the_ts_sdk_agent_and_no_later_update(
    ts_agent: TsAgentRig, matrix: Matrix
) -> None:
    with matrix.cell(RXACP_TO_TS, "session_cancel"):
        sid = ts_agent.start()
        stop = CancellationSignal()
        answers: list[Any] = []
        errors: list[Exception] = []
        done = threading.Event()
        ts_agent.client.async_client.prompt(
            PromptRequest.text(sid, f"slow {SLOW_SECONDS}"), stop
        ).subscribe(answers.append, lambda e: _record(errors, e, done), done.set)
        assert ts_agent.first_update.wait(WAIT_S), "the slow turn never started"
        stop.cancel()
        assert done.wait(CANCEL_BOUND_MS / 1000), "no answer after session/cancel"
        assert errors == [] and [a.stop_reason for a in answers] == ["cancelled"]
        seen_at_answer = len(ts_agent.updates)
        stats = ts_agent.stats()  # round trip: anything written before it is consumed now
        assert len(ts_agent.updates) == seen_at_answer, "session/update after the answer"
        assert stats["sessionCancels"] == 1 and stats["slowOutcomes"] == ["cancelled"]


def test_disposing_a_prompt_sends_session_cancel_and_cancel_request_and_rxacp_settles(
    ts_agent: TsAgentRig, matrix: Matrix, caplog: pytest.LogCaptureFixture
) -> None:
    with matrix.cell(RXACP_TO_TS, "cancel_request"):
        caplog.set_level(logging.WARNING, logger="rxacp")
        sid = ts_agent.start()
        outcome: list[Any] = []
        subscription = ts_agent.client.async_client.prompt(
            PromptRequest.text(sid, f"slow {SLOW_SECONDS}")
        ).subscribe(outcome.append, outcome.append, lambda: outcome.append("completed"))
        assert ts_agent.first_update.wait(WAIT_S), "the slow turn never started"
        disposer = threading.Thread(target=subscription.dispose)
        disposer.start()
        disposer.join(WAIT_S)
        assert not disposer.is_alive(), "dispose() hung"
        # The connection still serves: the next turn of the same session works.
        answer = ts_agent.client.prompt(PromptRequest.text(sid, "echo still here"))
        assert answer.stop_reason == "end_turn" and ts_agent.texts(sid)[-1] == "still here"
        # Disposal wrote session/cancel, then $/cancel_request: the TS SDK agent saw each once
        # and the turn ended exactly once, by whichever reached the handler first (the TS SDK
        # aborts on $/cancel_request in its dispatcher, ahead of the session/cancel handler);
        # rxacp dropped that late answer.
        stats = ts_agent.stats()
        assert stats["sessionCancels"] == 1 and stats["cancelRequests"] == 1
        assert stats["slowOutcomes"] in (["cancelled"], ["cancel_request"])
        assert outcome == [], "a disposed prompt must not emit"
        assert ts_agent.client.session.pending_request_count == 0
        assert [r.getMessage() for r in caplog.records if r.name.startswith("rxacp")] == []


def test_an_error_from_the_ts_sdk_agent_crosses_with_its_code_and_data(
    ts_agent: TsAgentRig, matrix: Matrix
) -> None:
    with matrix.cell(RXACP_TO_TS, "error_code"):
        sid = ts_agent.start()
        with pytest.raises(AcpProtocolException) as caught:
            ts_agent.client.prompt(PromptRequest.text(sid, "fail"))
        assert caught.value.code == TS_FAIL_CODE
        assert caught.value.data == {"behaviour": "fail"}
        # The session is still usable after a failed turn.
        assert ts_agent.client.prompt(PromptRequest.text(sid, "echo ok")).stop_reason == "end_turn"


def test_an_unknown_method_gets_method_not_found_from_the_ts_sdk_agent(
    ts_agent: TsAgentRig, matrix: Matrix
) -> None:
    with matrix.cell(RXACP_TO_TS, "unknown_method"):
        ts_agent.start()
        with pytest.raises(AcpProtocolException) as caught:
            ts_agent.client.ext_method("_nope", {"x": 1})
        assert caught.value.code == -32601


# ------------------------------------------------------------ TS-SDK client -> rxacp agent
@pytest.fixture(scope="module")
def ts_client_results(ts_peers: Path, unicode_file: Path) -> dict[str, dict[str, Any]]:
    """The TS client's facts per API (all three APIs run concurrently, once per module)."""
    with concurrent.futures.ThreadPoolExecutor(len(APIS)) as pool:
        futures = {
            api: pool.submit(
                run_peer_client,
                ["node", str(TS_CLIENT)],
                api,
                unicode_file,
                timeout_s=300,
                step_timeout_s=60,
            )
            for api in APIS
        }
        return {api: f.result(timeout=120) for api, f in futures.items()}


def _check_cancel_request(f: dict[str, Any], _file: Path) -> None:
    assert f["sentCancelRequest"] is True
    # Protocol (cancellation.mdx): answer -32800 or a valid response with a cancellation marker.
    # rxacp's stricter policy (always -32800 without session/cancel) is the agent tests' concern.
    cancelled = f["error"] is None and f["stopReason"] == "cancelled"
    assert cancelled or (f["error"] is not None and f["error"]["code"] == -32800), f
    assert f["afterAnswer"] == 0, "session/update after the answer"
    assert f["cancelToAnswerMs"] < CANCEL_BOUND_MS
    assert f["followUpStopReason"] == "end_turn" and f["followUpText"] == "still alive"


def _check_fail(f: dict[str, Any], _file: Path) -> None:
    assert f["error"]["code"] == -32603


TS_CHECKS: dict[str, Check] = {
    **CHECKS,
    "cancel_request": _check_cancel_request,
    "error_code": _check_fail,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("api", APIS)
def test_ts_sdk_client_drives_the_rxacp_reference_agent(
    ts_client_results: dict[str, dict[str, Any]],
    matrix: Matrix,
    unicode_file: Path,
    api: str,
    scenario: str,
) -> None:
    with matrix.cell(ts_to_rxacp(api), scenario):
        facts = scenario_facts(ts_client_results[api], scenario, "ts_client.mjs")
        if "agentStderr" in facts:  # the scenario threw inside ts_client.mjs
            pytest.fail(f"scenario crashed in ts_client.mjs: {facts}")
        TS_CHECKS[scenario](facts, unicode_file)
