"""``rxacp check`` against deliberately odd agents (``tests/cli/odd_agent.py``) and over
WebSocket: failures are attributed to the step that failed, production-agent behaviour that is
legal gives no FAIL, JSON-RPC violations are named as such; ``--auth`` and the JSON format."""

from __future__ import annotations

import concurrent.futures
import io
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rxacp.cli import main
from rxacp.cli.check import REPORT_FORMAT, RULES
from tests.websocket.conftest import reference_server

from .test_check import RUN_BOUND_S, _env

ROOT = Path(__file__).resolve().parents[2]
ODD = ROOT / "tests" / "cli" / "odd_agent.py"

pytestmark = pytest.mark.timeout(300)


def odd(mode: str) -> str:
    return shlex.join([sys.executable, str(ODD), mode])


RUNS: dict[str, list[str]] = {
    "exit": [odd("exit")],
    "silent": [odd("silent"), "--startup-timeout", "2"],
    "crash-on-prompt": [odd("crash-on-prompt")],
    "rude": [odd("rude")],
    "crosstalk": [odd("crosstalk")],
    "garbage": [odd("garbage")],
    "auth-missing": [odd("auth")],
    "auth": [odd("auth"), "--auth", "api-key"],
}


def _check(args: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "rxacp", "check", "--agent", *args, "--json"]
    command += ["--timeout", "2", "--prompt", "echo hi"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=RUN_BOUND_S, env=_env(), cwd=ROOT
    )
    report: dict[str, Any] = json.loads(done.stdout)
    report["_exit"] = done.returncode
    report["_by_id"] = {c["id"]: c for c in report["checks"]}
    return report


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    with concurrent.futures.ThreadPoolExecutor(len(RUNS)) as pool:
        futures = {name: pool.submit(_check, args) for name, args in RUNS.items()}
        return {name: f.result(timeout=RUN_BOUND_S + 10) for name, f in futures.items()}


def failed(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["detail"] for c in report["checks"] if c["status"] == "FAIL"}


def failed_mandatory(report: dict[str, Any]) -> dict[str, str]:
    """Mandatory failures only (advisory timings such as cancel.latency vary with load)."""
    return {
        c["id"]: c["detail"]
        for c in report["checks"]
        if c["status"] == "FAIL" and c["group"] == "mandatory"
    }


def status(report: dict[str, Any], check_id: str) -> str:
    return str(report["_by_id"][check_id]["status"])


# ---------------------------------------------------------------------------- attribution
def test_an_agent_that_exits_at_once_fails_initialize_only_with_its_exit_and_stderr(
    reports: dict[str, dict[str, Any]],
) -> None:
    report = reports["exit"]
    fails = failed(report)
    assert list(fails) == ["initialize"]
    assert fails["initialize"].startswith("agent exited with code 7 before answering initialize")
    assert "fatal: no config file" in fails["initialize"]
    assert status(report, "initialize.negotiation") == "SKIP"
    assert status(report, "stdio.exit_on_eof") == "SKIP"  # no PASS for a dead agent
    assert status(report, "stdio.stdout_clean") == "SKIP"
    assert report["_exit"] == 1


def test_an_agent_that_never_answers_initialize_fails_initialize_naming_the_bound(
    reports: dict[str, dict[str, Any]],
) -> None:
    fails = failed(reports["silent"])
    assert list(fails) == ["initialize"]
    assert "no answer to initialize" in fails["initialize"] and "within 2 s" in fails["initialize"]


def test_an_agent_that_dies_mid_run_fails_the_step_it_died_in_and_nothing_else(
    reports: dict[str, dict[str, Any]],
) -> None:
    report = reports["crash-on-prompt"]
    fails = failed(report)
    assert list(fails) == ["prompt.stop_reason"]
    assert "agent exited with code 3 before answering session/prompt" in fails["prompt.stop_reason"]
    assert "panic: boom" in fails["prompt.stop_reason"]
    for later in ("cancel.cancelled", "jsonrpc.parse_error", "stdio.exit_on_eof"):
        assert status(report, later) == "SKIP"
        assert "the agent exited during prompt.stop_reason" in report["_by_id"][later]["detail"]
    assert status(report, "initialize") == status(report, "session.new") == "PASS"


# ---------------------------------------------------------------------------- no false positives
def test_updates_for_another_session_the_agent_gave_out_are_not_a_failure(
    reports: dict[str, dict[str, Any]],
) -> None:
    report = reports["crosstalk"]
    assert status(report, "update.session_id") == "PASS"
    assert status(report, "jsonrpc.no_stray_answers") == "PASS"
    assert "update.session_id" not in failed(report)


def test_an_update_for_a_session_never_given_out_fails_naming_it(
    reports: dict[str, dict[str, Any]],
) -> None:
    detail = failed(reports["rude"])["update.session_id"]
    assert "'never-given'" in detail and "never gave this client" in detail
    assert "names session 'odd-" not in detail


def test_answers_to_notifications_and_id_less_errors_are_named_as_json_rpc_violations(
    reports: dict[str, dict[str, Any]],
) -> None:
    detail = failed(reports["rude"])["jsonrpc.no_stray_answers"]
    assert "an error answer to the session/cancel notification" in detail
    assert "an error answer without an id" in detail
    assert "no answer within" not in detail


def test_garbage_on_stdout_fails_only_stdout_clean_and_parse_error(
    reports: dict[str, dict[str, Any]],
) -> None:
    fails = failed_mandatory(reports["garbage"])
    assert set(fails) == {"stdio.stdout_clean", "jsonrpc.parse_error"}  # it ignores bad lines
    assert "garbage: this is not JSON" in fails["stdio.stdout_clean"]


# ---------------------------------------------------------------------------- --auth
def test_an_agent_requiring_auth_says_to_pass_auth_with_its_method_ids(
    reports: dict[str, dict[str, Any]],
) -> None:
    detail = failed(reports["auth-missing"])["session.new"]
    assert "pass --auth METHOD_ID (its authMethods: api-key, login)" in detail
    assert status(reports["auth-missing"], "authenticate") == "SKIP"


def test_auth_authenticates_before_session_new(reports: dict[str, dict[str, Any]]) -> None:
    report = reports["auth"]
    assert status(report, "authenticate") == "PASS"
    assert status(report, "session.new") == "PASS"
    assert set(failed_mandatory(report)) == {"jsonrpc.parse_error"}  # the odd agent's finding


# ---------------------------------------------------------------------------- shape, ws
def test_the_json_report_has_a_stable_documented_shape(reports: dict[str, dict[str, Any]]) -> None:
    report = reports["auth"]
    assert report["format"] == REPORT_FORMAT == "rxacp-check/1"
    assert set(report) - {"_exit", "_by_id"} == {"format", "agent", "checks", "summary", "exitCode"}
    assert [c["id"] for c in report["checks"]] == list(RULES)
    for check in report["checks"]:
        assert set(check) == {"id", "group", "status", "rule", "detail", "what"}
    assert set(report["summary"]) == {"PASS", "FAIL", "SKIP", "mandatoryFailed"}


def test_a_websocket_agent_is_checked_over_ws() -> None:
    server = reference_server("sync")
    try:
        report = _check([server.url])
    finally:
        server.close()
    fails = failed(report)
    assert fails == {}, fails
    assert status(report, "initialize") == "PASS" and status(report, "cancel.cancelled") == "PASS"
    assert "WebSocket" in report["_by_id"]["stdio.exit_on_eof"]["detail"]


def test_a_remote_agent_is_checked_over_streamable_http() -> None:
    from rxacp.transport.http._serve import UvicornThread
    from tests.remote.conftest import reference_app

    with UvicornThread(reference_app("sync")) as server:
        report = _check([server.url])
    fails = failed(report)
    assert fails == {}, fails
    assert status(report, "initialize") == "PASS" and status(report, "cancel.cancelled") == "PASS"
    assert "Streamable HTTP" in report["_by_id"]["stdio.exit_on_eof"]["detail"]
    assert report["_by_id"]["jsonrpc.parse_error"]["status"] == "SKIP"


def test_an_unsupported_url_scheme_is_a_usage_error() -> None:
    err = io.StringIO()
    code = main(["check", "--agent", "ftp://127.0.0.1:9/acp"], out=io.StringIO(), err=err)
    assert code == 2
    assert "only a command line (stdio), a ws:// / wss:// or an http:// / https:// URL" in (
        err.getvalue()
    )


def test_the_text_report_escapes_control_characters_the_agent_wrote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import sys\nsys.stderr.write('boom \\x1b]0;pwned\\x07\\n')\nsys.exit(5)\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    out = io.StringIO()
    code = main(["check", "--agent", shlex.join([sys.executable, str(agent)])], out=out)
    text = out.getvalue()
    assert code == 1
    assert "\x1b" not in text and "\x07" not in text
    assert "boom \\x1b]0;pwned\\x07" in text
