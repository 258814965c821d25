"""``rxacp check --protocol-version 2``: the v2 requirements, against agents that meet them
(the dual reference agent, both APIs) and one that does not (a v1-only agent)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rxacp.cli.check_v2 import RULES_V2
from tests.check import RXACP_CHECK

ROOT = Path(__file__).resolve().parents[2]


def _check(*agent: str) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    command = [
        *RXACP_CHECK,
        "--protocol-version",
        "2",
        "--agent",
        shlex.join([sys.executable, "-m", "rxacp.testing.reference_agent", *agent]),
        "--json",
        "--timeout",
        "20",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=180, env=env, cwd=ROOT, check=False
    )
    report: dict[str, Any] = json.loads(done.stdout)
    report["_exit"] = done.returncode
    return report


@pytest.mark.parametrize("api", ["sync", "async"])
def test_the_dual_reference_agent_passes_every_v2_check(api: str) -> None:
    report = _check("--api", api, "--protocol-versions", "1,2")
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    assert statuses == dict.fromkeys(RULES_V2, "PASS"), report
    assert report["_exit"] == 0 and report["format"] == "rxacp-check/1"


def test_a_v1_only_agent_fails_the_v2_initialize_check_and_the_exit_code_says_so() -> None:
    report = _check("--api", "sync")
    first = report["checks"][0]
    assert (first["id"], first["status"]) == ("v2.initialize", "FAIL")
    assert '"protocolVersion": 1' in first["detail"] or "'protocolVersion': 1" in first["detail"]
    assert report["_exit"] == 1
    assert report["summary"]["mandatoryFailed"] == ["v2.initialize"]
