"""rxacp clients (sync and async API) driving PRODUCTION ACP agents, offline, over real stdio.

Each agent of :data:`~tests.field.agents.AGENTS` (pinned, installed from npm by
``scripts/setup_field_agents.sh``) runs against the fake model server of
:mod:`tests.field.fake_model` on 127.0.0.1; the test's prompt text carries the cue that selects
what the "model" answers (``field:plain``, ``field:slow``, ``field:read PATH`` ...). One agent
process per (agent, API) serves the scenarios of this module in order (its fixture is module
scoped and parametrized, so pytest groups them); each scenario records its matrix cell.

A scenario the agent cannot pass as the ACP spec reads is asserted as the agent's *quirk*
(:data:`~tests.field.matrix.QUIRKS`, with the evidence), never skipped: the test pins what the
agent does, so it fails the day that changes.

This module is *not* responsible for the agents' configuration (``agents.py``), the model
(``fake_model.py``) or the production clients driving rxacp agents (``test_clients.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from rxacp.client import CancellationSignal
from rxacp.schema import PromptRequest, PromptResponse
from rxacp.session.blocking import wait_for
from tests.field.agents import AGENTS, FieldAgent
from tests.field.fake_model import PLAIN_TEXT, SLOW_CHUNKS, FakeModelServer
from tests.field.matrix import FIELD_MATRIX, QUIRK, QUIRKS
from tests.field.rig import APIS, WORKSPACE_FILE, WORKSPACE_TEXT, FieldRig, ProcessTree
from tests.field.wire_check import validate_traffic

__all__: list[str] = []

pytestmark = pytest.mark.timeout(600)

EXPECTED_NAMES = {"codex-acp": "codex-acp", "gemini-cli": "gemini-cli", "opencode": "OpenCode"}
"""``agentInfo.name`` each agent reports."""
STARTED_BOUND_S = 60.0
"""Bound for a slow turn's first chunks to arrive (agents are slow to start on a loaded box)."""
CANCEL_BOUND_S = 5.0
"""Bound between ``session/cancel`` and the ``cancelled`` answer."""
NEXT_PROMPT_BOUND_S = 5.0
"""The issue's bound: the next prompt after a disposed one is answered within 5 s."""
CLOSE_BOUND_S = 10.0
"""Bound for the agent's whole process tree to be gone after ``close``."""


def row(agent: FieldAgent, api: str) -> str:
    """The matrix row of ``agent`` under the rxacp client with ``api``."""
    return f"rxacp {api} client -> {agent.label}"


class Started:
    """A started rig plus what its start answered."""

    def __init__(self, rig: FieldRig, init: Any, auth: Any) -> None:
        self.rig = rig
        self.init = init
        self.auth = auth
        self.row = row(rig.agent, rig.api)


PAIRS = [(agent, api) for agent in AGENTS for api in APIS]


@pytest.fixture(scope="module", params=PAIRS, ids=[f"{a.name}-{api}" for a, api in PAIRS])
def started(request: pytest.FixtureRequest, field_agents: dict[str, str]) -> Iterator[Started]:
    """One agent process per (agent, API): initialized, authenticated, one session open."""
    agent, api = request.param
    with FakeModelServer() as server:
        rig = FieldRig(agent, api, server)
        try:
            with FIELD_MATRIX.cell(row(agent, api), "initialize"):
                init = rig.call("initialize")
                auth = None
                if agent.auth_method is not None:
                    auth = rig.call("authenticate", {"methodId": agent.auth_method})
            yield Started(rig, init, auth)
        finally:
            rig.close()
    assert server.escapes == [], f"{agent.name} tried to reach beyond 127.0.0.1: {server.escapes}"


def _turn(s: Started, text: str) -> tuple[PromptResponse, str]:
    """A prompt on a fresh session; returns the answer and the session's agent text."""
    s.rig.session_id = s.rig.new_session()
    answer = s.rig.prompt(text)
    return answer, s.rig.texts()


# ------------------------------------------------------------------------------ scenarios
def test_the_agent_initializes_with_protocol_1_and_accepts_its_offline_authentication(
    started: Started,
) -> None:
    with FIELD_MATRIX.cell(started.row, "initialize"):
        init = started.init
        assert init.protocol_version == 1
        assert init.agent_info is not None
        assert init.agent_info.name == EXPECTED_NAMES[started.rig.agent.name]
        if started.rig.agent.auth_method is not None:
            offered = [m.id for m in init.auth_methods or []]
            assert started.rig.agent.auth_method in offered
            assert started.auth is not None


def test_the_agent_opens_distinct_sessions_in_the_workspace(started: Started) -> None:
    with FIELD_MATRIX.cell(started.row, "new_session"):
        first = started.rig.new_session()
        second = started.rig.new_session()
        assert first and second and first != second


def test_a_plain_model_answer_streams_to_the_client_as_message_chunks(started: Started) -> None:
    with FIELD_MATRIX.cell(started.row, "stream"):
        answer, text = _turn(started, "field:plain")
        assert answer.stop_reason == "end_turn", started.rig.describe()
        assert text.endswith(PLAIN_TEXT), (text, started.rig.describe())


def test_an_80_chunk_model_stream_arrives_complete_and_in_order(started: Started) -> None:
    with FIELD_MATRIX.cell(started.row, "stream_80"):
        answer, text = _turn(started, "field:slow 0.01")
        assert answer.stop_reason == "end_turn", started.rig.describe()
        expected = "".join(f"w{i} " for i in range(SLOW_CHUNKS))
        assert text.endswith(expected), (text, started.rig.describe())


def _verdict(s: Started, scenario: str, quirks: list[tuple[str, str]]) -> None:
    """PASS, or QUIRK with each ``(what, evidence)`` recorded."""
    if not quirks:
        FIELD_MATRIX.set(s.row, scenario, "PASS")
        return
    FIELD_MATRIX.set(s.row, scenario, QUIRK)
    QUIRKS.add(s.row, scenario, "; ".join(w for w, _ in quirks), "; ".join(e for _, e in quirks))


def test_a_read_file_tool_call_reads_the_workspace_file(started: Started) -> None:
    rig = started.rig
    path = rig.workspace / WORKSPACE_FILE
    with FIELD_MATRIX.cell(started.row, "read_file", passed="-"):
        before = len(rig.reads)
        answer, text = _turn(started, f"field:read {path}")
        assert answer.stop_reason == "end_turn", rig.describe()
        assert "tool done" in text and WORKSPACE_TEXT.strip() in text, (text, rig.describe())
    quirks = []
    if str(path) not in rig.reads[before:]:
        quirks.append(
            (
                "reads workspace files itself, not through the client's fs/read_text_file",
                f"the model got the file's text; the client served {len(rig.reads) - before} "
                "fs/read_text_file",
            )
        )
    _verdict(started, "read_file", quirks)


def test_a_write_file_tool_call_writes_the_workspace_file(started: Started) -> None:
    rig = started.rig
    existing = rig.workspace / f"existing-{rig.api}.txt"
    existing.write_text("old content\n", encoding="utf-8")
    new = rig.workspace / f"new-{rig.api}.txt"
    rig.permission_choice = "allow"
    with FIELD_MATRIX.cell(started.row, "write_file", passed="-"):
        before = len(rig.writes)
        answer, _text = _turn(started, f"field:write {existing} written by the field model")
        assert answer.stop_reason == "end_turn", rig.describe()
        assert existing.read_text(encoding="utf-8") == "written by the field model", rig.describe()
        served = rig.writes[before:]
        answer, text = _turn(started, f"field:write {new} a new file")
        assert answer.stop_reason == "end_turn", rig.describe()
        created = new.exists() and new.read_text(encoding="utf-8") == "a new file"
        if not created:
            # Pinned: the agent reports the client's "Resource not found" as a failure.
            assert "Resource not found" in text, (text, rig.describe())
    quirks = []
    if str(existing) not in served:
        quirks.append(
            (
                "writes workspace files itself, not through the client's fs/write_text_file",
                f"the file has the new text; the client served {len(served)} fs/write_text_file",
            )
        )
    if not created:
        quirks.append(
            (
                "cannot create a new file through the client: the client's -32002 'Resource not "
                "found' for the pre-write read is taken as a failure (it recognises a missing "
                "file only on JS Error objects; the ACP SDK rejects with the plain error object)",
                f"tool result: {text[text.find('tool done') :][:160]!r}",
            )
        )
    _verdict(started, "write_file", quirks)


def test_a_shell_tool_call_runs_the_command_and_returns_its_output(started: Started) -> None:
    rig = started.rig
    with FIELD_MATRIX.cell(started.row, "run_shell", passed="-"):
        rig.permission_choice = "allow"
        before = len(rig.traffic.frames)
        answer, text = _turn(started, "field:shell printf field-shell-%s 42")
        assert answer.stop_reason == "end_turn", rig.describe()
        assert "field-shell-42" in text, (text, rig.describe())
    terminal = [
        f.method
        for f in rig.traffic.frames[before:]
        if f.direction == "in" and str(f.method).startswith("terminal/")
    ]
    quirks = []
    if not terminal:
        quirks.append(
            (
                "runs commands itself: never uses the client's terminal/* (LocalTerminals "
                "offered, clientCapabilities.terminal true)",
                "the command's output reached the model; 0 terminal/* requests",
            )
        )
    _verdict(started, "run_shell", quirks)


@pytest.mark.parametrize("choice", ["allow", "reject"])
def test_a_command_needing_permission_obeys_the_clients_answer(
    started: Started, choice: str
) -> None:
    rig = started.rig
    flag = rig.workspace / f"permission-{choice}.flag"
    scenario = f"permission_{choice}"
    with FIELD_MATRIX.cell(started.row, scenario, passed="-"):
        rig.permission_choice = choice
        before = len(rig.permission_requests)
        answer, _text = _turn(started, f"field:shell touch {flag}")
        asked = rig.permission_requests[before:]
        assert asked, f"no session/request_permission for a command\n{rig.describe()}"
        assert all(r.session_id == rig.session_id for r in asked)
        assert flag.exists() is (choice == "allow"), rig.describe()
        stop = answer.stop_reason
        assert stop == "end_turn" or (choice, stop) == ("reject", "cancelled"), rig.describe()
    if stop == "end_turn":
        FIELD_MATRIX.set(started.row, scenario, "PASS")
    else:
        FIELD_MATRIX.set(started.row, scenario, QUIRK)
        QUIRKS.add(
            started.row,
            scenario,
            "a rejected permission aborts the whole turn: answered `cancelled`, not `end_turn`",
            f"{len(asked)} permission request(s), reject chosen, the command did not run, "
            f"stopReason {stop!r}",
        )


def test_cancelling_a_slow_turn_with_a_cancellation_signal_answers_cancelled(
    started: Started,
) -> None:
    rig = started.rig
    with FIELD_MATRIX.cell(started.row, "cancel"):
        rig.session_id = rig.new_session()
        stop = CancellationSignal()
        box: dict[str, Any] = {}

        def turn() -> None:
            try:
                box["answer"] = rig.prompt("field:slow", stop)
            except Exception as exc:
                box["error"] = exc

        runner = threading.Thread(target=turn, name="field-cancel")
        runner.start()
        assert rig.wait_for_text("w2 ", STARTED_BOUND_S), rig.describe()
        stop.cancel()
        runner.join(CANCEL_BOUND_S)
        assert not runner.is_alive(), f"no answer {CANCEL_BOUND_S} s after session/cancel"
        assert "error" not in box, box
        assert box["answer"].stop_reason == "cancelled", rig.describe()
        assert "w79" not in rig.texts(), "the turn ran to its end"


def test_a_disposed_slow_prompt_leaves_the_session_answering_the_next_prompt_within_5_s(
    started: Started,
) -> None:
    rig = started.rig
    with FIELD_MATRIX.cell(started.row, "dispose_then_prompt"):
        rig.session_id = rig.new_session()
        outcome: list[Any] = []
        # Both APIs give a turn up the same way underneath: the blocking client's Ctrl-C and
        # prompt_timeout dispose this very subscription.
        subscription = rig.client.prompt(
            PromptRequest.text(rig.session_id, "field:slow")
        ).subscribe(outcome.append, outcome.append, lambda: outcome.append("completed"))
        assert rig.wait_for_text("w2 ", STARTED_BOUND_S), rig.describe()
        subscription.dispose()
        given_up = time.monotonic()
        next_turn = rig.client.prompt(PromptRequest.text(rig.session_id, "field:plain"))
        answer = wait_for(next_turn, NEXT_PROMPT_BOUND_S * 4, what="the next prompt")
        elapsed = time.monotonic() - given_up
        assert answer.stop_reason == "end_turn", rig.describe()
        assert elapsed <= NEXT_PROMPT_BOUND_S, f"next prompt answered {elapsed:.1f} s after dispose"
        # With the blocking builder the consumer runs on its own thread: the updates of a turn
        # taken through .async_client may land just after its answer.
        assert rig.wait_for_text(PLAIN_TEXT, NEXT_PROMPT_BOUND_S), rig.describe()
        assert outcome == [], "a disposed prompt must not emit"


def test_strict_validation_of_every_message_the_agent_sent_rejects_none(
    started: Started,
) -> None:
    with FIELD_MATRIX.cell(started.row, "strict_validation"):
        report = validate_traffic(started.rig.traffic)
        assert report.checked > 20, report.summary()
        assert report.rejects == [], report.summary()
        assert report.methods["session/update"] > 0
    if report.unknown_variants or report.unknown_methods:
        QUIRKS.add(
            started.row,
            "strict_validation",
            "sends variants or methods the schema does not know (kept, not rejected)",
            report.summary(),
        )


def test_closing_the_client_leaves_no_process_of_the_agents_tree(started: Started) -> None:
    """Last scenario of each agent process: close it and look for survivors."""
    rig = started.rig
    with FIELD_MATRIX.cell(started.row, "close_no_leftovers"):
        # A shell turn first that leaves a background grandchild behind (re-parented once its
        # shell exits), so the agent's tree is more than the agent.
        rig.permission_choice = "allow"
        _turn(started, "field:shell sleep 60 & echo field-child-started")
        tree = ProcessTree(rig.pid())
        pids = tree.pids
        try:
            assert pids, "the agent is not running"
            rig.close()
            survivors = tree.wait_gone(CLOSE_BOUND_S)
        finally:
            tree.close()
        assert survivors == [], f"still running after close: {survivors} of {pids}"
