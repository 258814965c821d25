"""Interop: a client written with the OFFICIAL Python ACP SDK drives the rxacp reference agent.

``tests/interop/peers/python_sdk_client.py`` runs in ``.venv-interop-py/`` (``python -I``, so the
official SDK's pydantic/schema never mix with ours), spawns
``python -m rxacp.testing.reference_agent --api sync|async|decorators`` over stdio, runs every
scenario once per API and prints one JSON line of facts per scenario; this module asserts on the
facts and records each verdict in the combined interop matrix (``tests/interop/matrix.py``).

``$/cancel_request``: SDK 0.12.1 has none (abandoning a prompt cancels the asyncio task and
sends nothing; an incoming one is "method not found", logged and ignored). That cell is N/A, and
the test asserts rxacp's side still behaves: the orphaned turn is answered ``cancelled`` after
``session/cancel``, promptly, with no update after the answer, and the session serves the next
turn.

Not responsible for the peer's code, for rxacp client → Python-SDK agent
(``test_client_vs_python_sdk.py``) or for the TypeScript SDK (``test_ts_sdk.py``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rxacp.testing._reference_script import STREAM_WORDS
from tests.interop.matrix import MATRIX, NA, SCENARIOS
from tests.interop.test_client_vs_python_sdk import _interop_python

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
PEER = Path(__file__).resolve().parent / "peers" / "python_sdk_client.py"
APIS = ("sync", "async", "decorators")
STREAM_N = 10_000
CANCEL_BOUND_MS = 2_000
RUN_TIMEOUT_S = 120
NON_ASCII = "Grüße, naïve café — 日本語 ✓ 🚀\nzweite Zeile: ß\n"

PEER_SCENARIO = {
    "initialize": "initialize",
    "new_session": "new_session",
    "echo": "echo",
    "stream_10000": "stream",
    "read_non_ascii": "read",
    "permission_allow": "permission_allow",
    "permission_reject": "permission_reject",
    "session_cancel": "cancel",
    "cancel_request": "cancel_request",
    "error_code": "fail",
    "unknown_method": "unknown_method",
}
"""Matrix scenario -> the scenario name python_sdk_client.py knows."""

UNSUPPORTED = {"cancel_request"}
"""Cells the official Python SDK cannot do (recorded N/A; rxacp's side is still asserted)."""


def py_to_rxacp(api: str) -> str:
    """The matrix row of the Python-SDK client driving the reference agent with ``api``."""
    return f"Python-SDK client -> rxacp agent ({api})"


@pytest.fixture(scope="module")
def unicode_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("py-interop") / "dätei-日本.txt"
    path.write_text(NON_ASCII, encoding="utf-8")
    return path


def _run_peer(python: Path, api: str, file: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    command = [
        str(python),
        "-I",
        str(PEER),
        "--scenarios",
        ",".join(PEER_SCENARIO.values()),
        "--file",
        str(file),
        "--timeout",
        "20",
        "--",
        sys.executable,
        "-m",
        "rxacp.testing.reference_agent",
        "--api",
        api,
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired as exc:
        return {"_fatal": f"python_sdk_client.py did not finish within {RUN_TIMEOUT_S} s: {exc}"}
    results: dict[str, Any] = {"_exit": done.returncode, "_stderr": done.stderr[-3000:]}
    for line in done.stdout.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            fact = json.loads(line)
            if isinstance(fact, dict) and "scenario" in fact:
                results[fact["scenario"]] = fact
    return results


@pytest.fixture(scope="module")
def peer_results(unicode_file: Path) -> dict[str, dict[str, Any]]:
    """The peer's facts per API (the three APIs run concurrently, once per module)."""
    python = _interop_python()
    with concurrent.futures.ThreadPoolExecutor(len(APIS)) as pool:
        futures = {api: pool.submit(_run_peer, python, api, unicode_file) for api in APIS}
        return {api: f.result(timeout=RUN_TIMEOUT_S + 10) for api, f in futures.items()}


def _expected_stream_digest() -> str:
    texts = [STREAM_WORDS[i % len(STREAM_WORDS)] + " " for i in range(STREAM_N)]
    return hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()


def _check_initialize(f: dict[str, Any], _file: Path) -> None:
    assert f["protocolVersion"] == 1
    assert f["agentInfo"]["name"] == "rxacp-reference"


def _check_new_session(f: dict[str, Any], _file: Path) -> None:
    first, second = f["sessionIds"]
    assert first and second and first != second


def _check_echo(f: dict[str, Any], _file: Path) -> None:
    assert f["stopReason"] == "end_turn" and f["texts"] == [f["expected"]]


def _check_stream(f: dict[str, Any], _file: Path) -> None:
    assert f["stopReason"] == "end_turn"
    assert f["count"] == STREAM_N and f["allUpdates"] == STREAM_N
    assert f["digest"] == _expected_stream_digest(), "updates out of order or altered"
    assert f["afterAnswer"] == 0


def _check_read(f: dict[str, Any], file: Path) -> None:
    assert f["stopReason"] == "end_turn" and f["servedReads"] == 1
    assert f["texts"] == [NON_ASCII] and f["expected"] == file.read_text(encoding="utf-8")


def _check_permission(choice: str) -> Callable[[dict[str, Any], Path], None]:
    def check(f: dict[str, Any], _file: Path) -> None:
        assert f["stopReason"] == "end_turn"
        assert f["chosen"] == choice and f["texts"] == [choice]

    return check


def _check_cancel(f: dict[str, Any], _file: Path) -> None:
    assert f["error"] is None and f["stopReason"] == "cancelled"
    assert f["afterAnswer"] == 0, "session/update after the answer"
    assert f["cancelToAnswerMs"] < CANCEL_BOUND_MS


def _check_cancel_request(f: dict[str, Any], _file: Path) -> None:
    # What the SDK does: nothing on the wire (no $/cancel_request in 0.12.1).
    assert f["localOutcome"] == "cancelled" and f["sentCancelRequest"] is False
    # rxacp's side still behaves: the turn kept running (nothing told it to stop), then
    # session/cancel ends it promptly with `cancelled`, nothing after the answer, no hang.
    assert f["answeredBeforeSessionCancel"] is False
    assert f["lateAnswer"] == {"result": {"stopReason": "cancelled"}, "error": None}
    assert f["cancelToAnswerMs"] < CANCEL_BOUND_MS
    assert f["afterAnswer"] == 0, "session/update after the answer"
    assert f["followUpStopReason"] == "end_turn" and f["followUpText"] == "still alive"


def _check_fail(f: dict[str, Any], _file: Path) -> None:
    assert f["error"]["code"] == -32603  # the reference agent's `fail` raises RuntimeError
    # an unexpected exception reaches the peer as its type only (issue 17 item 8)
    assert f["error"]["message"] == "Internal error: RuntimeError (details logged, not sent)"


def _check_unknown_method(f: dict[str, Any], _file: Path) -> None:
    assert f["error"]["code"] == -32601


CHECKS: dict[str, Callable[[dict[str, Any], Path], None]] = {
    "initialize": _check_initialize,
    "new_session": _check_new_session,
    "echo": _check_echo,
    "stream_10000": _check_stream,
    "read_non_ascii": _check_read,
    "permission_allow": _check_permission("allow"),
    "permission_reject": _check_permission("reject"),
    "session_cancel": _check_cancel,
    "cancel_request": _check_cancel_request,
    "error_code": _check_fail,
    "unknown_method": _check_unknown_method,
}


@pytest.mark.timeout(RUN_TIMEOUT_S + 60)
@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("api", APIS)
def test_python_sdk_client_drives_the_rxacp_reference_agent(
    peer_results: dict[str, dict[str, Any]], unicode_file: Path, api: str, scenario: str
) -> None:
    verdict = NA if scenario in UNSUPPORTED else "PASS"
    with MATRIX.cell(py_to_rxacp(api), scenario, passed=verdict):
        run = peer_results[api]
        assert "_fatal" not in run, run.get("_fatal")
        facts = run.get(PEER_SCENARIO[scenario])
        assert facts is not None, f"the peer reported nothing; stderr:\n{run['_stderr']}"
        assert "fatal" not in facts and "crash" not in facts, f"{facts}\n{run['_stderr']}"
        CHECKS[scenario](facts, unicode_file)


def test_the_python_sdk_client_peer_exits_cleanly_for_every_api(
    peer_results: dict[str, dict[str, Any]],
) -> None:
    for api in APIS:
        run = peer_results[api]
        assert run.get("_exit") == 0, f"{api}: {run.get('_fatal') or run.get('_stderr')}"
        assert "Traceback" not in run["_stderr"], f"{api}: {run['_stderr']}"
