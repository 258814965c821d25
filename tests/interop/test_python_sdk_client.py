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
from pathlib import Path
from typing import Any

import pytest

from tests.interop.matrix import MATRIX, NA, SCENARIOS
from tests.interop.peer_clients import (
    CANCEL_BOUND_MS,
    CHECKS,
    Check,
    run_peer_client,
    scenario_facts,
)
from tests.interop.test_client_vs_python_sdk import _interop_python

__all__: list[str] = []

PEER = Path(__file__).resolve().parent / "peers" / "python_sdk_client.py"
APIS = ("sync", "async", "decorators")
RUN_TIMEOUT_S = 120
NON_ASCII = "Grüße, naïve café — 日本語 ✓ 🚀\nzweite Zeile: ß\n"

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


@pytest.fixture(scope="module")
def peer_results(unicode_file: Path) -> dict[str, dict[str, Any]]:
    """The peer's facts per API (the three APIs run concurrently, once per module)."""
    python = _interop_python()
    with concurrent.futures.ThreadPoolExecutor(len(APIS)) as pool:
        futures = {
            api: pool.submit(
                run_peer_client,
                [str(python), "-I", str(PEER)],
                api,
                unicode_file,
                timeout_s=RUN_TIMEOUT_S,
                step_timeout_s=20,
            )
            for api in APIS
        }
        return {api: f.result(timeout=RUN_TIMEOUT_S + 10) for api, f in futures.items()}


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


PY_CHECKS: dict[str, Check] = {
    **CHECKS,
    "cancel_request": _check_cancel_request,
    "error_code": _check_fail,
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
        facts = scenario_facts(run, scenario, "python_sdk_client.py")
        assert "crash" not in facts, f"{facts}\n{run['_stderr']}"
        PY_CHECKS[scenario](facts, unicode_file)


def test_the_python_sdk_client_peer_exits_cleanly_for_every_api(
    peer_results: dict[str, dict[str, Any]],
) -> None:
    for api in APIS:
        run = peer_results[api]
        assert run.get("_exit") == 0, f"{api}: {run.get('_fatal') or run.get('_stderr')}"
        assert "Traceback" not in run["_stderr"], f"{api}: {run['_stderr']}"
