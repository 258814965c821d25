"""The examples behind docs/getting-started-*.md and docs/migration-from-java.md run and print
what the docs say. Each example is a real subprocess (clients spawn the reference agent; agents
are driven by ``rxacp prompt``); one module fixture runs them a few at a time, each bounded by
a timeout (a stuck example fails its test instead of hanging the suite). Each run imports rxacp in
two processes, so these tests take seconds, not milliseconds: the module timeout says so.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOUND_SECONDS = 60
PARALLEL_RUNS = 4

pytestmark = pytest.mark.timeout(240)


@dataclass
class Run:
    """One finished example run."""

    returncode: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def agent_prompt(example: str, *words: str, flags: tuple[str, ...] = ()) -> list[str]:
    """``rxacp prompt`` driving the agent example with one prompt."""
    agent = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / example))}"
    return [sys.executable, "-m", "rxacp", "prompt", "--agent", agent, *flags, *words]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    workspace = tmp_path_factory.mktemp("workspace")
    (workspace / "notes.txt").write_text("notes served by the client", encoding="utf-8")
    cwd_flags = ("--cwd", str(workspace))
    commands = {
        "client_sync": [sys.executable, "examples/getting_started_client_sync.py"],
        "client_async": [sys.executable, "examples/getting_started_client_async.py"],
        "client_rx": [sys.executable, "examples/getting_started_client_rx.py"],
        "migration": [sys.executable, "examples/getting_started_migration.py"],
        "local_tools": [sys.executable, "examples/local_files_and_terminals.py"],
        "agent_sync_echo": agent_prompt("getting_started_agent_sync.py", "hello", "world"),
        "agent_sync_read": agent_prompt(
            "getting_started_agent_sync.py", "read", str(workspace / "notes.txt"), flags=cwd_flags
        ),
        "agent_sync_delete_allowed": agent_prompt(
            "getting_started_agent_sync.py", "delete", "build", flags=("--yes",)
        ),
        "agent_sync_delete_refused": agent_prompt(
            "getting_started_agent_sync.py", "delete", "build", flags=("--no",)
        ),
        "agent_async": agent_prompt("getting_started_agent_async.py", "one", "two", "three"),
        "agent_decorators": agent_prompt("getting_started_agent_decorators.py", "Ada"),
        "agent_decorators_refusal": agent_prompt("getting_started_agent_decorators.py", " "),
    }

    def run(cmd: list[str]) -> Run:
        done = subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, timeout=BOUND_SECONDS, check=False
        )
        return Run(done.returncode, done.stdout, done.stderr)

    with ThreadPoolExecutor(max_workers=PARALLEL_RUNS) as pool:
        futures = {name: pool.submit(run, cmd) for name, cmd in commands.items()}
        results = {name: future.result() for name, future in futures.items()}
    yield results


def test_sync_client_streams_serves_a_file_and_a_permission_and_stops_a_turn(
    runs: dict[str, Run],
) -> None:
    run = runs["client_sync"]
    assert run.returncode == 0, run.explain()
    lines = run.stdout.splitlines()
    assert lines[:5] == [
        "agent: rxacp-reference",
        "hello [end_turn]",
        "a file the client served [end_turn]",
        "[agent asks: deploy] -> allow",
        "allow [end_turn]",
    ], run.explain()
    assert lines[5].endswith(" [cancelled]") and len(lines) == 6, run.explain()


def test_async_client_composes_a_turn_stops_one_and_gives_up_on_one(
    runs: dict[str, Run],
) -> None:
    run = runs["client_async"]
    assert run.returncode == 0, run.explain()
    lines = run.stdout.splitlines()
    assert lines[0] == "Every ACP request  [end_turn]", run.explain()
    assert lines[1].endswith(" [cancelled]"), run.explain()
    # updates already in flight may still be printed after giving up (the agent stops when
    # the $/cancel_request reaches it), so the marker need not end the line
    # and even after its line was printed, until the process exits
    assert " [gave up: $/cancel_request sent]" in lines[2], run.explain()
    assert all("[" not in line for line in lines[3:]), run.explain()


def test_rx_client_streams_a_turn_watches_updates_and_gives_up_on_a_turn(
    runs: dict[str, Run],
) -> None:
    run = runs["client_rx"]
    assert run.returncode == 0, run.explain()
    assert run.stdout.splitlines() == [
        "Every ACP request [end_turn]",
        "updates seen: ['agent_message_chunk']",
        "gave up",
        "still here [end_turn]",
        "stopped [cancelled]",
    ], run.explain()


def test_ready_made_handlers_serve_a_file_and_two_commands_then_kill_nothing_left(
    runs: dict[str, Run],
) -> None:
    run = runs["local_tools"]
    assert run.returncode == 0, run.explain()
    lines = run.stdout.splitlines()
    assert lines[0] == "milk, eggs", run.explain()
    assert lines[1].startswith("/") and lines[1].endswith(lines[1].rsplit("/", 1)[-1])
    assert lines[2:] == ["notes.txt", "terminals left running: 0"], run.explain()


def test_migration_example_runs_agent_and_client_in_one_process(runs: dict[str, Run]) -> None:
    run = runs["migration"]
    assert run.returncode == 0, run.explain()
    lines = run.stdout.splitlines()
    assert lines[0] == "words from python [end_turn]", run.explain()
    assert lines[1].endswith("[cancelled]") and lines[1].count("word") < 100, run.explain()
    assert lines[2:] == ["not sent: loadSession", "error -32601 (method not found: True)"]


def test_sync_agent_echoes_word_by_word_after_a_thought(runs: dict[str, Run]) -> None:
    run = runs["agent_sync_echo"]
    assert run.returncode == 0, run.explain()
    assert run.stdout.split() == ["hello", "world"], run.explain()
    assert "echoing word by word" in run.stderr and "end_turn" in run.stderr, run.explain()
    assert "getting-started-sync 1.0.0" in run.stderr, run.explain()


def test_sync_agent_reads_a_file_through_the_client(runs: dict[str, Run]) -> None:
    run = runs["agent_sync_read"]
    assert run.returncode == 0, run.explain()
    assert run.stdout.strip() == "notes served by the client", run.explain()


def test_sync_agent_deletes_only_with_the_users_permission(runs: dict[str, Run]) -> None:
    allowed, refused = runs["agent_sync_delete_allowed"], runs["agent_sync_delete_refused"]
    assert allowed.returncode == 0, allowed.explain()
    assert refused.returncode == 0, refused.explain()
    assert allowed.stdout.strip() == "deleted build", allowed.explain()
    assert refused.stdout.strip() == "kept everything", refused.explain()
    assert "delete build" in allowed.stderr, allowed.explain()


def test_rx_agent_streams_every_word_then_ends_the_turn(runs: dict[str, Run]) -> None:
    run = runs["agent_async"]
    assert run.returncode == 0, run.explain()
    assert run.stdout.split() == ["one", "two", "three"], run.explain()
    assert "end_turn" in run.stderr, run.explain()


def test_decorator_agent_greets_and_refuses_through_its_exception_handler(
    runs: dict[str, Run],
) -> None:
    greeted, refused = runs["agent_decorators"], runs["agent_decorators_refusal"]
    assert greeted.returncode == 0, greeted.explain()
    assert greeted.stdout.strip() == "Hello, Ada!", greeted.explain()
    assert "end_turn" in greeted.stderr, greeted.explain()
    assert refused.returncode == 0 and refused.stdout.strip() == "", refused.explain()
    assert "refusal" in refused.stderr, refused.explain()
