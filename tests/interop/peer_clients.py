"""A foreign SDK's client drives the rxacp reference agent: running it and judging its facts.

Both peer clients (``peers/python_sdk_client.py`` on the official Python SDK and
``ts/ts_client.mjs`` on the TypeScript SDK) take the same arguments, run every scenario against
``python -m rxacp.testing.reference_agent --api API`` and print one JSON line of facts per
scenario. :func:`run_peer_client` runs one and collects the facts; :data:`CHECKS` holds the
assertions per matrix scenario that hold for both (each test module adds what differs).

This module is *not* responsible for installing the peers or for the matrix (``matrix.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rxacp.testing._reference_script import STREAM_WORDS
from tests.setup_scripts import ROOT

__all__ = [
    "CANCEL_BOUND_MS",
    "CHECKS",
    "PEER_SCENARIO",
    "STREAM_N",
    "Check",
    "run_peer_client",
    "scenario_facts",
    "scenario_lines",
]

STREAM_N = 10_000
CANCEL_BOUND_MS = 2_000
"""session/cancel must be answered within this (it normally takes milliseconds)."""

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
"""Matrix scenario -> the scenario name the peer clients know."""

Check = Callable[[dict[str, Any], Path], None]
"""``check(facts, file)``: asserts one scenario's facts (``file``: the non-ASCII file read)."""


def run_peer_client(
    launcher: Sequence[str],
    api: str,
    file: Path,
    *,
    timeout_s: float,
    step_timeout_s: float,
    agent_args: Sequence[str] = (),
) -> dict[str, Any]:
    """Run the peer client ``launcher`` against the reference agent with ``api``.

    Returns ``{peer scenario: facts}`` plus ``_exit`` and ``_stderr`` (its tail), or only
    ``_fatal`` if it ran past ``timeout_s``; ``step_timeout_s`` bounds each of its waits."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    command = [
        *launcher,
        "--scenarios",
        ",".join(PEER_SCENARIO.values()),
        "--file",
        str(file),
        "--timeout",
        f"{step_timeout_s:g}",
        "--",
        sys.executable,
        "-m",
        "rxacp.testing.reference_agent",
        "--api",
        api,
        *agent_args,
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired as exc:
        name = Path(launcher[-1]).name
        return {"_fatal": f"{name} did not finish within {timeout_s:g} s: {exc}"}
    return {"_exit": done.returncode, "_stderr": done.stderr[-3000:], **scenario_lines(done.stdout)}


def scenario_lines(stdout: str) -> dict[str, Any]:
    """``{scenario: facts}`` of every JSON line with a ``scenario`` key (other lines skipped)."""
    facts: dict[str, Any] = {}
    for line in stdout.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            item = json.loads(line)
            if isinstance(item, dict) and "scenario" in item:
                facts[item["scenario"]] = item
    return facts


def scenario_facts(run: dict[str, Any], scenario: str, peer: str) -> dict[str, Any]:
    """The facts ``peer`` reported for the matrix ``scenario`` (asserts it reported them)."""
    assert "_fatal" not in run, run.get("_fatal")
    facts: dict[str, Any] | None = run.get(PEER_SCENARIO[scenario])
    assert facts is not None, f"{peer} reported nothing; stderr:\n{run['_stderr']}"
    assert "fatal" not in facts, f"{facts}\n{facts.get('agentStderr') or run['_stderr']}"
    return facts


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
    content = file.read_text(encoding="utf-8")
    assert f["stopReason"] == "end_turn" and f["servedReads"] == 1
    assert f["texts"] == [content] and f["expected"] == content


def _check_permission(choice: str) -> Check:
    def check(f: dict[str, Any], _file: Path) -> None:
        assert f["stopReason"] == "end_turn"
        assert f["chosen"] == choice and f["texts"] == [choice]

    return check


def _check_cancel(f: dict[str, Any], _file: Path) -> None:
    assert f["error"] is None and f["stopReason"] == "cancelled"
    assert f["afterAnswer"] == 0, "session/update after the answer"
    assert f["cancelToAnswerMs"] < CANCEL_BOUND_MS


def _check_unknown_method(f: dict[str, Any], _file: Path) -> None:
    assert f["error"]["code"] == -32601


CHECKS: dict[str, Check] = {
    "initialize": _check_initialize,
    "new_session": _check_new_session,
    "echo": _check_echo,
    "stream_10000": _check_stream,
    "read_non_ascii": _check_read,
    "permission_allow": _check_permission("allow"),
    "permission_reject": _check_permission("reject"),
    "session_cancel": _check_cancel,
    "unknown_method": _check_unknown_method,
}
"""The checks both peer clients share; ``cancel_request`` and ``error_code`` differ by SDK."""
