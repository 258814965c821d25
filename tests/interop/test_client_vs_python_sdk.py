"""Interop: the rxacp client drives an agent written with the official Python ACP SDK, over stdio.

The official SDK (``agent-client-protocol`` from PyPI) lives in its own virtualenv,
``.venv-interop-py/`` at the repo root, created by ``scripts/setup_interop.sh``; its pydantic and
schema never mix with ours (the agent runs as ``python -I``). If the venv is missing the fixture
runs the script (bounded); if that fails the tests FAIL, they are never skipped.

Every scenario records its verdict in the combined interop matrix (``tests/interop/matrix.py``).
``$/cancel_request`` is N/A for this peer (SDK 0.12.1 does not handle it: "method not found",
logged, the handler keeps running); its test asserts rxacp's side still behaves.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rxacp.client import AcpClient, AcpSyncClient, CancellationSignal
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
)
from rxacp.session.blocking import wait_for
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests.interop.matrix import MATRIX, NA
from tests.setup_scripts import run_setup_script

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv-interop-py" / "bin" / "python"
PEER = Path(__file__).resolve().parent / "peers" / "python_sdk_agent.py"
SETUP_TIMEOUT = 240
PEER_ROW = "rxacp client -> Python-SDK agent"
WAIT_S = 30.0  # a bound for waits that succeed at once; generous for a loaded machine
CANCEL_BOUND_S = 2.0
FAIL_CODE = -32042

pytestmark = pytest.mark.timeout(SETUP_TIMEOUT + 60)

NON_ASCII = "Grüße, naïve café — 日本語 ✓ 🚀"


def _interop_python() -> Path:
    if not VENV_PYTHON.exists():
        run_setup_script(
            "setup_interop.sh",
            timeout=SETUP_TIMEOUT,
            needs="the interop tests need the official Python ACP SDK in .venv-interop-py/",
        )
    check = subprocess.run(
        [str(VENV_PYTHON), "-I", "-c", "import acp"], capture_output=True, text=True, timeout=60
    )
    if check.returncode != 0:
        pytest.fail(f"the interop venv cannot import the official SDK:\n{check.stderr}")
    return VENV_PYTHON


class Interop:
    """One rxacp sync client connected to the official-SDK agent process."""

    def __init__(self, python: Path) -> None:
        self.updates: dict[str, list[str]] = defaultdict(list)
        self.first_update: dict[str, threading.Event] = defaultdict(threading.Event)
        self.permission_choice = "allow"
        self.permission_requests: list[RequestPermissionRequest] = []
        self.read_requests: list[ReadTextFileRequest] = []
        params = AgentParameters(str(python), ["-I", str(PEER)], cwd=str(ROOT))
        self.client: AcpSyncClient = (
            AcpClient.sync(StdioAcpClientTransport(params))
            .session_update_consumer(self._on_update)
            .request_permission_handler(self._on_permission)
            .read_text_file_handler(self._on_read)
            .build()
        )

    def _on_update(self, note: SessionNotification) -> None:
        update: Any = note.update
        if update.session_update == "agent_message_chunk":
            self.updates[note.session_id].append(update.content.text)
            self.first_update[note.session_id].set()

    def _on_permission(self, req: RequestPermissionRequest) -> RequestPermissionResponse:
        self.permission_requests.append(req)
        return RequestPermissionResponse.selected(self.permission_choice)

    def _on_read(self, req: ReadTextFileRequest) -> ReadTextFileResponse:
        self.read_requests.append(req)
        return ReadTextFileResponse(content=NON_ASCII)

    def new_session(self) -> str:
        return self.client.new_session({"cwd": str(ROOT), "mcpServers": []}).session_id

    def stats(self) -> dict[str, Any]:
        """What the agent observed; also a round trip (earlier updates are consumed by now)."""
        result: dict[str, Any] = self.client.ext_method("_interop/stats")
        return result


@pytest.fixture(scope="module")
def interop() -> Iterator[Interop]:
    rig = Interop(_interop_python())
    rig.client.initialize()
    yield rig
    rig.client.close()


def test_initialize_negotiates_version_1_with_the_official_sdk_agent(interop: Interop) -> None:
    with MATRIX.cell(PEER_ROW, "initialize"):
        response = interop.client.initialize_response
        assert response is not None and response.protocol_version == 1
        assert response.agent_info is not None
        assert response.agent_info.name == "python-sdk-interop-agent"
        caps = interop.client.agent_capabilities
        assert caps is not None and not caps.supports_load_session()


def test_new_session_returns_the_agents_session_id(interop: Interop) -> None:
    with MATRIX.cell(PEER_ROW, "new_session"):
        first, second = interop.new_session(), interop.new_session()
        assert first.startswith("py-sess-") and second.startswith("py-sess-") and first != second


def test_echo_prompt_round_trip(interop: Interop) -> None:
    with MATRIX.cell(PEER_ROW, "echo"):
        sid = interop.new_session()
        answer = interop.client.prompt(PromptRequest.text(sid, "echo hello from rxacp ✓ 日本"))
        assert answer.stop_reason == "end_turn"
        assert interop.updates[sid] == ["hello from rxacp ✓ 日本"]


def test_ten_thousand_streamed_updates_all_arrive_in_order_before_the_answer(
    interop: Interop,
) -> None:
    with MATRIX.cell(PEER_ROW, "stream_10000"):
        sid = interop.new_session()
        answer = interop.client.prompt(PromptRequest.text(sid, "stream 10000"))
        assert answer.stop_reason == "end_turn"
        assert interop.updates[sid] == [str(i) for i in range(10_000)]


@pytest.mark.parametrize("choice", ["allow", "reject"])
def test_permission_requests_are_answered_by_the_rxacp_handler(
    interop: Interop, choice: str
) -> None:
    with MATRIX.cell(PEER_ROW, f"permission_{choice}"):
        sid = interop.new_session()
        interop.permission_choice = choice
        answer = interop.client.prompt(PromptRequest.text(sid, "permission"))
        assert answer.stop_reason == "end_turn"
        assert interop.updates[sid] == [f"permission:selected:{choice}"]
        assert interop.permission_requests[-1].tool_call.tool_call_id == "call-1"


def test_the_agent_reads_a_non_ascii_file_served_by_the_rxacp_client(interop: Interop) -> None:
    with MATRIX.cell(PEER_ROW, "read_non_ascii"):
        sid = interop.new_session()
        answer = interop.client.prompt(PromptRequest.text(sid, "read /work/ünïcode.txt"))
        assert answer.stop_reason == "end_turn"
        assert interop.updates[sid] == [f"read:{NON_ASCII}"]
        assert interop.read_requests[-1].path == "/work/ünïcode.txt"


def test_session_cancel_from_a_stop_signal_ends_the_turn_cancelled(interop: Interop) -> None:
    sid = interop.new_session()
    stop = CancellationSignal()
    answers: list[Any] = []
    done = threading.Event()
    interop.client.async_client.prompt(PromptRequest.text(sid, "wait"), stop).subscribe(
        answers.append, on_completed=done.set
    )
    # the official SDK handles each message in its own task, so a round trip does not prove the
    # prompt handler runs; a second session's echo through the same agent is a bounded barrier
    other = interop.new_session()
    interop.client.prompt(PromptRequest.text(other, "echo barrier"))
    stop.cancel()
    assert done.wait(10)
    assert answers[0].stop_reason == "cancelled"
    assert interop.client.wait_for_consumers(10)  # async_client's answer can overtake them
    assert interop.updates[sid] == ["after-cancel"]


def _run_slow(interop: Interop, sid: str, stop: CancellationSignal | None = None) -> Any:
    """Start ``slow 5`` and wait (bounded) until its first update arrived."""
    outcome: list[Any] = []
    done = threading.Event()

    def on_error(error: Exception) -> None:
        outcome.append(error)
        done.set()

    subscription = interop.client.async_client.prompt(
        PromptRequest.text(sid, "slow 5"), stop
    ).subscribe(outcome.append, on_error, done.set)
    assert interop.first_update[sid].wait(WAIT_S), "the slow turn never started"
    return outcome, done, subscription


def test_session_cancel_during_a_streaming_turn_answers_cancelled_with_no_update_after(
    interop: Interop,
) -> None:
    with MATRIX.cell(PEER_ROW, "session_cancel"):
        sid = interop.new_session()
        stop = CancellationSignal()
        outcome, done, _ = _run_slow(interop, sid, stop)
        stop.cancel()
        assert done.wait(CANCEL_BOUND_S), "no answer after session/cancel"
        assert [getattr(a, "stop_reason", a) for a in outcome] == ["cancelled"]
        assert interop.client.wait_for_consumers(10)  # every update that came before the answer
        seen_at_answer = len(interop.updates[sid])
        stats = interop.stats()  # round trip: anything written before it is consumed now
        assert len(interop.updates[sid]) == seen_at_answer, "session/update after the answer"
        assert stats["slowOutcomes"][-1] == "cancelled"


def test_disposing_a_prompt_ends_the_python_sdk_agents_turn_and_rxacp_still_settles(
    interop: Interop, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK (0.12.1) answers nothing to $/cancel_request (it logs "method not found"): N/A for
    the peer. Disposal also sends session/cancel, which it honours. rxacp's side: dispose
    returns at once, the prompt emits nothing, nothing stays pending, the agent ends the turn
    `cancelled` (that late answer is dropped quietly) and the session serves the next turn."""
    with MATRIX.cell(PEER_ROW, "cancel_request", passed=NA):
        caplog.set_level(logging.WARNING, logger="rxacp")
        sid = interop.new_session()
        before = interop.stats()
        outcome, _done, subscription = _run_slow(interop, sid)
        disposer = threading.Thread(target=subscription.dispose)
        disposer.start()
        disposer.join(WAIT_S)
        assert not disposer.is_alive(), "dispose() hung"
        deadline = time.monotonic() + WAIT_S
        stats = interop.stats()
        seen = len(before["slowOutcomes"])
        while len(stats["slowOutcomes"]) == seen and time.monotonic() < deadline:
            stats = interop.stats()  # each a round trip, no sleeping
        assert stats["slowOutcomes"][seen:] == ["cancelled"]
        assert stats["sessionCancels"] == before["sessionCancels"] + 1
        answer = interop.client.prompt(PromptRequest.text(sid, "echo still here"))
        assert answer.stop_reason == "end_turn" and interop.updates[sid][-1] == "still here"
        # the disposed prompt stayed pending only until its late answer arrived
        assert interop.client.session.pending_request_count == 0
        assert outcome == [], "a disposed prompt must not emit"
        assert [r.getMessage() for r in caplog.records if r.name.startswith("rxacp")] == []


def test_an_error_from_the_python_sdk_agent_crosses_with_its_code_and_data(
    interop: Interop,
) -> None:
    with MATRIX.cell(PEER_ROW, "error_code"):
        sid = interop.new_session()
        with pytest.raises(AcpProtocolException) as caught:
            interop.client.prompt(PromptRequest.text(sid, "fail"))
        assert caught.value.code == FAIL_CODE and caught.value.data == {"behaviour": "fail"}
        assert interop.client.prompt(PromptRequest.text(sid, "echo ok")).stop_reason == "end_turn"


def test_an_unknown_method_gets_method_not_found_from_the_python_sdk_agent(
    interop: Interop,
) -> None:
    with MATRIX.cell(PEER_ROW, "unknown_method"):
        with pytest.raises(AcpProtocolException) as caught:
            interop.client.ext_method("_nope", {"x": 1})
        assert caught.value.code == -32601
        with pytest.raises(AcpProtocolException) as plain:
            wait_for(interop.client.session.send_request("nope/unknown", {}, None), WAIT_S)
        assert plain.value.code == -32601


def test_the_interop_agent_runs_from_the_isolated_venv_not_ours() -> None:
    python = _interop_python()
    out = subprocess.run(
        [str(python), "-I", "-c", "import acp, sys; print(acp.__file__); print(sys.prefix)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0
    assert ".venv-interop-py" in out.stdout and os.fspath(ROOT) in out.stdout
