"""``rxacp check`` against real agents over stdio: the reference agent (all three APIs), the
official Python-SDK and TypeScript-SDK agents (findings, not failures) and a deliberately broken
agent; plus the strict update validation and the argument errors.

Every agent is checked once per module, concurrently (``reports`` fixture), as a subprocess
``python -m rxacp check --json``. Not responsible for the interop matrix (``tests/interop``).
"""

from __future__ import annotations

import concurrent.futures
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rxacp.cli import main
from rxacp.cli.check import RULES
from rxacp.cli.check_rules import check_update
from tests.check import RXACP_CHECK
from tests.interop.test_client_vs_python_sdk import _interop_python

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken_agent.py"
LOCKING = Path(__file__).resolve().parent / "locking_agent.py"
PY_SDK_AGENT = ROOT / "tests" / "interop" / "peers" / "python_sdk_agent.py"
TS_AGENT = ROOT / "tests" / "interop" / "ts" / "ts_agent.mjs"
TS_SETUP = ROOT / "scripts" / "setup_interop_ts.sh"
APIS = ("sync", "async", "decorators")
TIMEOUT = "3"
RUN_BOUND_S = 90
BROKEN_FAILS = {
    "cancel.cancelled",
    "cancel.bare_no_answer",
    "stdio.stdout_clean",
    "stdio.exit_on_eof",
}

pytestmark = pytest.mark.timeout(400)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _check(agent: str) -> dict[str, Any]:
    """``rxacp check --agent AGENT --json`` as a subprocess; the report plus the exit code."""
    command = [*RXACP_CHECK, "--agent", agent, "--json", "--timeout", TIMEOUT]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=RUN_BOUND_S, env=_env(), cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return {"_fatal": f"rxacp check did not finish within {RUN_BOUND_S} s for {agent}"}
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        return {"_fatal": f"not JSON (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"}
    report["_exit"] = done.returncode
    return report


def _ts_ready() -> None:
    done = subprocess.run(["bash", str(TS_SETUP)], capture_output=True, text=True, timeout=420)
    if done.returncode != 0:
        pytest.fail(
            f"cannot set up the TypeScript SDK agent (node/npm/registry needed; never "
            f"skipped):\n{done.stdout}\n{done.stderr}",
            pytrace=False,
        )


def _reference(api: str) -> str:
    return shlex.join([sys.executable, "-m", "rxacp.testing.reference_agent", "--api", api])


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    """One JSON report per agent, all checked concurrently."""
    python = _interop_python()
    _ts_ready()
    agents = {f"reference-{api}": _reference(api) for api in APIS}
    agents["python-sdk"] = shlex.join([str(python), "-I", str(PY_SDK_AGENT)])
    agents["ts-sdk"] = shlex.join(["node", str(TS_AGENT)])
    agents["broken"] = shlex.join([sys.executable, str(BROKEN)])
    with concurrent.futures.ThreadPoolExecutor(len(agents)) as pool:
        futures = {name: pool.submit(_check, agent) for name, agent in agents.items()}
        return {name: f.result(timeout=RUN_BOUND_S + 10) for name, f in futures.items()}


def _well_formed(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    assert "_fatal" not in report, report.get("_fatal")
    checks = {c["id"]: c for c in report["checks"]}
    assert list(checks) == list(RULES), "every check reported once, in order"
    for check in report["checks"]:
        assert check["status"] in ("PASS", "FAIL", "SKIP"), check
        assert check["group"] == RULES[check["id"]][0] and check["rule"] == RULES[check["id"]][1]
    failed = [
        c["id"] for c in report["checks"] if c["group"] == "mandatory" and c["status"] == "FAIL"
    ]
    assert report["summary"]["mandatoryFailed"] == failed
    assert report["_exit"] == report["exitCode"] == (1 if failed else 0)
    return checks


def _print_findings(name: str, report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        sys.stdout.write(f"\nrxacp check findings for {name}:\n")
        for c in report["checks"]:
            if c["status"] != "PASS":
                sys.stdout.write(
                    f"  {c['status']} [{c['group']}] {c['id']} ({c['rule']}): {c['detail']}\n"
                )


@pytest.mark.slow  # a whole `rxacp check` run per API: 20-35 s each on a loaded machine
@pytest.mark.parametrize("api", APIS)
def test_the_reference_agent_passes_every_check(
    reports: dict[str, dict[str, Any]], api: str
) -> None:
    checks = _well_formed(reports[f"reference-{api}"])
    assert {c: v["detail"] for c, v in checks.items() if v["status"] != "PASS"} == {
        "authenticate": "no --auth METHOD_ID given"  # the reference agent needs no auth
    }
    assert reports[f"reference-{api}"]["_exit"] == 0


@pytest.mark.parametrize("peer", ["python-sdk", "ts-sdk"])
def test_an_official_sdk_agent_is_checked_and_its_findings_are_reported(
    reports: dict[str, dict[str, Any]], peer: str, capsys: pytest.CaptureFixture[str]
) -> None:
    checks = _well_formed(reports[peer])
    assert checks["initialize"]["status"] == "PASS", "the checker reached the agent"
    _print_findings(peer, reports[peer], capsys)


def test_a_broken_agent_fails_exactly_the_rules_it_breaks_with_exit_code_1(
    reports: dict[str, dict[str, Any]],
) -> None:
    report = reports["broken"]
    checks = _well_formed(report)
    assert {c for c, v in checks.items() if v["status"] == "FAIL"} == BROKEN_FAILS
    assert report["_exit"] == 1
    assert "broken-agent v0.0.1 starting" in checks["stdio.stdout_clean"]["detail"]
    assert "-32603" in checks["cancel.cancelled"]["detail"]


def test_the_text_report_groups_checks_names_rules_and_exits_1_on_a_mandatory_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    out, err = io.StringIO(), io.StringIO()
    agent = shlex.join([sys.executable, str(BROKEN)])
    code = main(["check", "--agent", agent, "--timeout", "1"], out=out, err=err)
    text = out.getvalue()
    assert code == 1, text + err.getvalue()
    lines = text.splitlines()
    assert lines[0] == f"rxacp check: {agent}"
    assert [x for x in lines if x in ("MANDATORY", "CAPABILITY", "ADVISORY")] == [
        "MANDATORY",
        "CAPABILITY",
        "ADVISORY",
    ]
    assert any(
        x.split() == ["FAIL", "stdio.stdout_clean", "transports.mdx", "§stdio"] for x in lines
    )
    assert lines[-1].endswith(
        "mandatory FAILED: cancel.cancelled, cancel.bare_no_answer, stdio.stdout_clean"
    )


def test_an_agent_that_cannot_start_fails_initialize_quickly() -> None:
    out = io.StringIO()
    code = main(
        ["check", "--agent", "/nonexistent/agent --acp", "--json", "--timeout", "1"],
        out=out,
        err=io.StringIO(),
    )
    report = json.loads(out.getvalue())
    assert code == 1
    first = report["checks"][0]
    assert first["id"] == "initialize" and first["status"] == "FAIL"
    assert "cannot start the agent" in first["detail"]


def test_the_two_start_ups_of_the_agent_never_overlap(tmp_path: Path) -> None:
    # The negotiation process starts once the first one's initialize settled: an agent whose
    # start-up locks its home (gemini-cli's project registry) is not raced by the checker.
    agent = shlex.join([sys.executable, str(LOCKING), str(tmp_path / "registry.lock")])
    out = io.StringIO()
    main(["check", "--agent", agent, "--json", "--timeout", "2"], out=out, err=io.StringIO())
    status = {c["id"]: (c["status"], c["detail"]) for c in json.loads(out.getvalue())["checks"]}
    assert status["initialize"][0] == "PASS", status["initialize"]
    assert status["initialize.negotiation"][0] == "PASS", status["initialize.negotiation"]


@pytest.mark.parametrize(
    "argv", [["--agent", ""], ["--agent", "x", "--timeout", "0"], ["--agent", "'unclosed"]]
)
def test_bad_arguments_exit_2_with_a_message(argv: list[str]) -> None:
    err = io.StringIO()
    assert main(["check", *argv], out=io.StringIO(), err=err) == 2
    assert err.getvalue().startswith("rxacp check: ")


def _note(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "s-1", "update": update}


def test_update_validation_accepts_valid_and_unknown_variants() -> None:
    text = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    assert check_update(_note(text)) is None
    assert check_update(_note({"sessionUpdate": "from_the_future", "x": 1})) is None


def test_update_validation_rejects_a_known_tag_with_a_bad_payload() -> None:
    problem = check_update(_note({"sessionUpdate": "agent_message_chunk"}))
    assert problem is not None and "'agent_message_chunk'" in problem


def test_update_validation_rejects_what_lenient_parsing_would_silently_repair() -> None:
    problem = check_update(_note({"sessionUpdate": "plan", "entries": [{"x": 1}]}))
    assert problem is not None and "update.entries" in problem


def test_update_validation_rejects_a_missing_session_id() -> None:
    problem = check_update({"update": {"sessionUpdate": "plan", "entries": []}})
    assert problem is not None and "sessionId" in problem
