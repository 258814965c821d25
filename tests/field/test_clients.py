"""PRODUCTION ACP clients driving rxacp's reference agent, in all three agent APIs, over stdio.

* ``acp-client`` 0.1.0 (PyPI; an asyncio client that offers no fs/terminal), in its own
  virtualenv, driven by ``tests/field/clients/acp_client_driver.py`` (one JSON fact per line);
* ``acpx`` 0.19.1 (npm; the headless ACP CLI, which serves fs and terminals), one ``acpx exec``
  per scenario with ``--format json`` (the raw wire as JSON lines).

Both are installed by ``scripts/setup_field_agents.sh`` (a missing one FAILS the suite). The
reference agent runs as ``python -m rxacp.testing.reference_agent --api sync|async|decorators``.
Cells that a client cannot do are ``N/A`` with the reason in the quirk list; deviations of the
client are asserted quirks.

This module is *not* responsible for rxacp clients driving production agents (``test_agents.py``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rxacp.testing._reference_script import STREAM_WORDS
from tests.field.agents import CACHE, ROOT
from tests.field.matrix import FIELD_MATRIX, QUIRK, QUIRKS
from tests.interop.peer_clients import scenario_lines

__all__: list[str] = []

pytestmark = pytest.mark.timeout(600)

APIS = ("sync", "async", "decorators")
DRIVER = ROOT / "tests" / "field" / "clients" / "acp_client_driver.py"
ACP_CLIENT_PYTHON = CACHE / "acp-client-venv" / "bin" / "python"
ACPX = CACHE / "acpx" / "node_modules" / ".bin" / "acpx"
RUN_BOUND_S = 240.0
NEXT_PROMPT_BOUND_S = 5.0
FILE_TEXT = "field file: Grüße ✓ 日本語\nsecond line\n"
NA = "N/A"
ACPX_DENIED_EXIT = 5
"""acpx's exit code after it denied a permission (the turn itself ends ``end_turn``)."""


def _agent_command(api: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "rxacp.testing.reference_agent", "--api", api, *flags]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _stream_text(n: int) -> str:
    return "".join(STREAM_WORDS[i % len(STREAM_WORDS)] + " " for i in range(n))


# --------------------------------------------------------------------------- acp-client
def acp_client_row(api: str) -> str:
    return f"acp-client 0.1.0 -> rxacp agent ({api})"


def _run_acp_client(api: str, file: Path, cwd: Path) -> dict[str, Any]:
    # acp-client asks again right after session/cancel, before the cancelled answer: the
    # reference agent holds such a prompt (SDK option) instead of its default -32600.
    command = [
        str(ACP_CLIENT_PYTHON),
        "-I",
        str(DRIVER),
        "--file",
        str(file),
        "--",
        *_agent_command(api, "--hold-prompt-while-cancelling"),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=RUN_BOUND_S, env=_env(), cwd=cwd
    )
    return {"_exit": done.returncode, "_stderr": done.stderr[-2000:], **scenario_lines(done.stdout)}


@pytest.fixture(scope="module")
def acp_client_facts(
    field_agents: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """acp-client's facts per reference-agent API (the three run concurrently)."""
    assert field_agents.get("acp-client") == "0.1.0", field_agents
    base = tmp_path_factory.mktemp("acp-client")
    file = base / "dätei.txt"
    file.write_text(FILE_TEXT, encoding="utf-8")
    with concurrent.futures.ThreadPoolExecutor(len(APIS)) as pool:
        futures = {api: pool.submit(_run_acp_client, api, file, base) for api in APIS}
        return {api: f.result(timeout=RUN_BOUND_S + 30) for api, f in futures.items()}


def _fact(facts: dict[str, Any], scenario: str) -> dict[str, Any]:
    item = facts.get(scenario)
    assert item is not None, f"acp-client printed no {scenario!r} fact: {facts['_stderr']}"
    assert "crashed" not in item, item
    return dict(item)


@pytest.mark.parametrize("api", APIS)
def test_acp_client_streams_a_reference_agent_answer_whole(
    acp_client_facts: dict[str, dict[str, Any]], api: str
) -> None:
    with FIELD_MATRIX.cell(acp_client_row(api), "stream"):
        fact = _fact(acp_client_facts[api], "stream")
        assert fact["text"] == _stream_text(40)
        assert fact["growth"] == 40  # on_text heard every chunk
        assert fact["session"].startswith("ref-")


@pytest.mark.parametrize("api", APIS)
def test_acp_client_cancels_a_slow_turn_and_its_next_question_is_answered_within_5_s(
    acp_client_facts: dict[str, dict[str, Any]], api: str
) -> None:
    with FIELD_MATRIX.cell(acp_client_row(api), "dispose_then_prompt"):
        fact = _fact(acp_client_facts[api], "cancel_then_ask")
        assert fact.get("answer") == "asked again", fact
        assert fact["elapsed"] <= NEXT_PROMPT_BOUND_S, fact
    with FIELD_MATRIX.cell(acp_client_row(api), "cancel"):
        assert fact.get("answer") == "asked again"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("choice", ["allow", "reject"])
def test_acp_client_permission_answers_reach_the_reference_agent(
    acp_client_facts: dict[str, dict[str, Any]], api: str, choice: str
) -> None:
    with FIELD_MATRIX.cell(acp_client_row(api), f"permission_{choice}"):
        fact = _fact(acp_client_facts[api], f"permission_{choice}")
        assert fact["asked"] == 1
        assert fact["text"] == choice  # the reference agent echoes the chosen option id


@pytest.mark.parametrize("api", APIS)
def test_acp_client_offers_no_fs_and_the_reference_agent_says_it_cannot_read(
    acp_client_facts: dict[str, dict[str, Any]], api: str
) -> None:
    row = acp_client_row(api)
    fact = _fact(acp_client_facts[api], "fs")
    # The reference agent does not ask for what the client did not offer: it says so in its
    # answer (never a hang, never the file's text).
    said = str(fact.get("text", ""))
    assert "did not advertise the capability 'fs.readTextFile'" in said, fact
    assert FILE_TEXT not in said
    for scenario in ("read_file", "write_file"):
        FIELD_MATRIX.set(row, scenario, NA)
    QUIRKS.add(
        row,
        "read_file",
        "N/A: acp-client advertises no fs capability (and no terminal)",
        f"`read PATH` is answered: {said[-90:]!r}",
    )


@pytest.mark.parametrize("api", APIS)
def test_acp_client_carrying_a_session_on_in_a_new_agent_process_gets_a_new_unique_id(
    acp_client_facts: dict[str, dict[str, Any]], api: str
) -> None:
    with FIELD_MATRIX.cell(acp_client_row(api), "new_session"):
        fact = _fact(acp_client_facts[api], "carry_on")
        # The new process cannot load the old (in-memory) session; acp-client starts a new one,
        # whose id must not be the old one (with per-process counters both were "ref-1").
        assert fact["first"] != fact["second"], fact
        assert fact["text"] == "second run"


# --------------------------------------------------------------------------------- acpx
def acpx_row(api: str) -> str:
    return f"acpx 0.19.1 -> rxacp agent ({api})"


def _acpx(
    api: str, cwd: Path, home: Path, prompt: str, *flags: str, exit_code: int = 0
) -> list[dict[str, Any]]:
    """One ``acpx exec`` against the reference agent; the JSON lines it printed."""
    agent = " ".join(_agent_command(api))
    env = _env()
    env["HOME"] = str(home)
    command = [str(ACPX), "--format", "json", *flags, "--agent", agent, "exec", prompt]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=RUN_BOUND_S / 4, env=env, cwd=cwd
    )
    lines = []
    for line in done.stdout.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            item = json.loads(line)
            if isinstance(item, dict):
                lines.append(item)
    assert done.returncode == exit_code, (done.returncode, done.stdout[-1500:], done.stderr[-1500:])
    return lines


def _chunks(lines: list[dict[str, Any]]) -> list[str]:
    out = []
    for msg in lines:
        update = (msg.get("params") or {}).get("update") or {}
        content = update.get("content") or {}
        if update.get("sessionUpdate") == "agent_message_chunk" and content.get("type") == "text":
            out.append(str(content.get("text")))
    return out


def _stop_reason(lines: list[dict[str, Any]]) -> Any:
    answers = [
        m for m in lines if isinstance(m.get("result"), dict) and "stopReason" in m["result"]
    ]
    assert len(answers) == 1, lines[-5:]
    return answers[0]["result"]["stopReason"]


def _requests(lines: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [m for m in lines if m.get("method") == method and "id" in m]


@pytest.fixture(scope="module")
def acpx_facts(
    field_agents: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """Every acpx scenario against every reference-agent API (the APIs run concurrently)."""
    assert field_agents.get("acpx") == "0.19.1", field_agents

    def run(api: str) -> dict[str, Any]:
        base = tmp_path_factory.mktemp(f"acpx-{api}")
        home, work = base / "home", base / "work"
        home.mkdir()
        work.mkdir()
        file = work / "dätei.txt"
        file.write_text(FILE_TEXT, encoding="utf-8")
        target = work / "written.txt"
        facts: dict[str, Any] = {"file": file, "target": target}
        facts["stream"] = _acpx(api, work, home, "stream 200", "--approve-all")
        facts["permission_allow"] = _acpx(api, work, home, "permission", "--approve-all")
        facts["permission_reject"] = _acpx(
            api, work, home, "permission", "--deny-all", exit_code=ACPX_DENIED_EXIT
        )
        facts["read_file"] = _acpx(api, work, home, f"read {file}", "--approve-all")
        facts["write_file"] = _acpx(
            api, work, home, f"write {target} written by acpx ✓", "--approve-all"
        )
        facts["run_shell"] = _acpx(
            api, work, home, "terminal printf acpx-term-%s 42", "--approve-all"
        )
        return facts

    with concurrent.futures.ThreadPoolExecutor(len(APIS)) as pool:
        futures = {api: pool.submit(run, api) for api in APIS}
        return {api: f.result(timeout=RUN_BOUND_S * 2) for api, f in futures.items()}


@pytest.mark.parametrize("api", APIS)
def test_acpx_initializes_the_reference_agent_and_streams_200_chunks_in_order(
    acpx_facts: dict[str, dict[str, Any]], api: str
) -> None:
    lines = acpx_facts[api]["stream"]
    with FIELD_MATRIX.cell(acpx_row(api), "initialize"):
        init = next(m for m in lines if m.get("id") == 0 and "result" in m)
        assert init["result"]["agentInfo"]["name"] == "rxacp-reference"
    with FIELD_MATRIX.cell(acpx_row(api), "new_session"):
        assert any(
            str((m.get("result") or {}).get("sessionId", "")).startswith("ref-") for m in lines
        )
    with FIELD_MATRIX.cell(acpx_row(api), "stream"):
        assert _stop_reason(lines) == "end_turn"
        assert "".join(_chunks(lines)) == _stream_text(200)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("choice", ["allow", "reject"])
def test_acpx_permission_policies_reach_the_reference_agent(
    acpx_facts: dict[str, dict[str, Any]], api: str, choice: str
) -> None:
    with FIELD_MATRIX.cell(acpx_row(api), f"permission_{choice}"):
        lines = acpx_facts[api][f"permission_{choice}"]
        assert len(_requests(lines, "session/request_permission")) == 1
        assert _stop_reason(lines) == "end_turn"
        assert _chunks(lines) == [choice]
    if choice == "reject":
        FIELD_MATRIX.set(acpx_row(api), "permission_reject", QUIRK)
        QUIRKS.add(
            acpx_row(api),
            "permission_reject",
            f"`acpx exec --deny-all` exits {ACPX_DENIED_EXIT} once it denied a permission",
            "the agent got outcome selected/reject and the turn ended end_turn",
        )


@pytest.mark.parametrize("api", APIS)
def test_acpx_serves_the_reference_agents_file_read_and_write(
    acpx_facts: dict[str, dict[str, Any]], api: str
) -> None:
    facts = acpx_facts[api]
    with FIELD_MATRIX.cell(acpx_row(api), "read_file"):
        lines = facts["read_file"]
        assert len(_requests(lines, "fs/read_text_file")) == 1
        assert _stop_reason(lines) == "end_turn"
        assert "".join(_chunks(lines)) == FILE_TEXT
    with FIELD_MATRIX.cell(acpx_row(api), "write_file"):
        lines = facts["write_file"]
        assert len(_requests(lines, "fs/write_text_file")) == 1
        assert _stop_reason(lines) == "end_turn"
        assert facts["target"].read_text(encoding="utf-8") == "written by acpx ✓"


@pytest.mark.parametrize("api", APIS)
def test_acpx_runs_the_reference_agents_command_in_its_terminal(
    acpx_facts: dict[str, dict[str, Any]], api: str
) -> None:
    with FIELD_MATRIX.cell(acpx_row(api), "run_shell"):
        lines = acpx_facts[api]["run_shell"]
        assert len(_requests(lines, "terminal/create")) == 1
        assert _stop_reason(lines) == "end_turn"
        assert "acpx-term-42" in "".join(_chunks(lines))
    for scenario in ("cancel", "dispose_then_prompt"):
        FIELD_MATRIX.set(acpx_row(api), scenario, NA)
    QUIRKS.add(
        acpx_row(api),
        "cancel",
        "N/A: `acpx exec` is one-shot (its --timeout ends the process with -32070; cancelling a "
        "queued session needs acpx's background queue owner, not driven here)",
        "covered for clients by acp-client's cancel-then-ask cells",
    )
