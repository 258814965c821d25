"""``rxacp prompt`` against deliberately odd agents (tests/cli/odd_agent.py, real subprocesses):
broken ones, hostile text, auth, every update kind, interactive sessions, timeouts, terminals."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rxacp.cli import main

from .conftest import AGENT, WAIT, child_env
from .test_prompt import _read_until

ODD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "odd_agent.py")


def odd(mode: str) -> str:
    return f"{sys.executable} {ODD} {mode}"


CONTROL = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + ["\x7f", "\x9b"]


def no_control_characters(text: str) -> bool:
    return not any(c in text for c in CONTROL)


# ---------------------------------------------------------------------------- hostile text
def test_escape_sequences_from_the_agent_are_shown_escaped_never_sent_to_the_terminal(
    rxacp_cli: Any,
) -> None:
    run = rxacp_cli("prompt", "--agent", odd("escapes"), "hi")
    assert run.code == 0
    assert no_control_characters(run.out) and no_control_characters(run.err)
    assert "title\\x1b]0;pwned\\x07 clear\\x1b[2J bell\\x07 ok" in run.out
    assert "odd\\x1b]0;pwned\\x07" in run.err  # agent name
    assert "Run \\x1b[31mred\\x1b[0m" in run.err  # tool call title
    assert "step\\x1b[2J" in run.err  # plan entry
    assert "Deploy\\x1b]0;x\\x07" in run.err and "Allow\\x1b[2J" in run.err  # permission


def test_json_output_escapes_control_characters_too(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("escapes"), "--json", "hi")
    assert no_control_characters(run.out)
    texts = [
        json.loads(line)["update"].get("content", {}).get("text")
        for line in run.out.splitlines()
        if json.loads(line)["type"] == "update"
    ]
    assert "title\x1b]0;pwned\x07 clear\x1b[2J bell\x07 ok\n" in texts  # decoded: exact text


# ---------------------------------------------------------------------------- rendering
def test_every_update_kind_is_shown_and_status_lines_never_cut_the_text(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("updates"), "hi")
    assert run.code == 0
    assert run.out == "Hello world\nBye.\n"  # stdout: exactly the agent's text
    for line in (
        "session: Greeting",
        "usage: 1,200 / 200,000 tokens",
        "⚙ tool Read notes.txt (read) [pending]",
        "↳ Read notes.txt [completed]",
        "✔ say hello",
        "thinking: pondering",
        "■ end_turn",
    ):
        assert line in run.err, line


def test_on_one_terminal_stream_status_lines_wait_for_the_end_of_the_text_line() -> None:
    both = io.StringIO()
    code = main(
        ["prompt", "--agent", odd("updates"), "hi"], out=both, err=both, stdin=io.StringIO()
    )
    assert code == 0
    text = both.getvalue()
    assert "Hello world\nsession: Greeting\nusage: 1,200 / 200,000 tokens\n" in text


def test_hide_thoughts_hides_them(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("updates"), "--hide-thoughts", "hi")
    assert "pondering" not in run.err and "Hello world" in run.out


def test_json_prints_each_update_and_the_answer_as_json_lines(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("updates"), "--json", "hi")
    assert run.code == 0
    lines = [json.loads(line) for line in run.out.splitlines()]
    kinds = [line["update"]["sessionUpdate"] for line in lines if line["type"] == "update"]
    assert kinds == [
        "agent_message_chunk", "session_info_update", "agent_message_chunk", "usage_update",
        "agent_message_chunk", "tool_call", "tool_call_update", "plan", "agent_thought_chunk",
        "agent_message_chunk",
    ]  # fmt: skip
    assert lines[-1] == {
        "type": "response",
        "sessionId": "odd-1",
        "response": {"stopReason": "end_turn"},
    }
    assert all(line.get("sessionId") == "odd-1" for line in lines)


def test_json_reports_an_agent_error_as_a_json_line(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("internal-error"), "--json", "hi")
    assert run.code == 1
    last = json.loads(run.out.splitlines()[-1])
    assert last == {
        "type": "error",
        "error": {
            "code": -32603,
            "message": "Internal error",
            "data": {"details": "stream disconnected before completion"},
        },
    }


# ---------------------------------------------------------------------------- errors
def test_an_internal_error_shows_the_agents_details(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("internal-error"), "hi")
    assert run.code == 1
    assert "stream disconnected before completion" in run.err and "-32603" in run.err


def test_an_agent_that_exits_at_once_reports_its_exit_code_and_stderr(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("exit"), "hi")
    assert run.code == 1
    assert "exit code 7" in run.err and "fatal: no config file" in run.err


def test_an_agent_that_crashes_on_prompt_reports_it(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("crash-on-prompt"), "hi")
    assert run.code == 1
    assert "connected to odd-agent" in run.err
    assert "exit code 3" in run.err and "panic: boom" in run.err


def test_garbage_on_the_agents_stdout_does_not_stop_the_turn(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("garbage"), "hi")
    assert (run.code, run.out) == (0, "hi\n")


def test_a_silent_agent_times_out_with_progress_on_stderr(rxacp_cli: Any) -> None:
    started = time.monotonic()
    run = rxacp_cli(
        "prompt", "--agent", odd("silent"), "--timeout", "1.5", "--progress-every", "0.4", "hi"
    )
    assert run.code == 1
    assert time.monotonic() - started < WAIT
    assert "… still waiting for the agent to answer initialize" in run.err
    assert "initialize timed out after 1.5 s" in run.err


def test_a_url_scheme_other_than_ws_or_http_is_a_clear_usage_error(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", "ftp://127.0.0.1:9/acp", "hi")
    assert run.code == 2
    assert "only a command line (stdio), a ws:// / wss:// or an http:// / https:// URL" in run.err


def test_version_names_the_package_and_the_acp_schema() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rxacp", "--version"],
        capture_output=True,
        text=True,
        timeout=WAIT * 4,
        env=child_env(),
    )
    assert done.returncode == 0
    assert done.stdout.startswith("rxacp ") and "ACP protocol version 1" in done.stdout
    assert "schema @agentclientprotocol/sdk" in done.stdout


# ---------------------------------------------------------------------------- auth
def test_auth_required_lists_the_agents_methods_and_how_to_pass_one(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("auth"), "hi")
    assert run.code == 1
    assert "requires authentication" in run.err and "-32000" in run.err
    assert "api-key  API key (env_var) — set ODD_API_KEY" in run.err
    assert "login    Log in with a browser (agent) — opens a page" in run.err
    assert "--auth api-key" in run.err


def test_auth_method_authenticates_before_session_new(rxacp_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    run = rxacp_cli(
        "prompt", "--agent", odd("auth"), "--auth", "api-key", "--log-wire", str(log), "hi"
    )
    assert (run.code, run.out) == (0, "hi\n")
    sent = [json.loads(line)["message"] for line in log.read_text().splitlines()]
    methods = [m.get("method") for m in sent if "method" in m]
    assert methods[:3] == ["initialize", "authenticate", "session/new"]
    assert sent[2]["params"] == {"methodId": "api-key"}


def test_an_unknown_auth_method_is_refused_before_anything_is_sent(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("auth"), "--auth", "nope", "hi")
    assert run.code == 1
    assert "'nope' is not one of the agent's auth methods" in run.err
    assert "--auth api-key" in run.err


# ---------------------------------------------------------------------------- interactive
def test_without_prompt_text_each_stdin_line_is_one_turn(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("good"), stdin="one\n\ntwo words\n")
    assert run.code == 0
    assert run.out == "one\ntwo words\n"
    assert run.err.count("■ end_turn") == 2


def test_interactive_permission_on_a_non_tty_stdin_is_cancelled_and_says_so(
    rxacp_cli: Any,
) -> None:
    run = rxacp_cli("prompt", "--agent", odd("escapes"), stdin="first\nsecond\n")
    assert run.code == 0
    assert run.err.count("cancelled: stdin is not a terminal") == 2  # lines are not answers
    assert run.out.count('permission: {"outcome": "cancelled"}') == 2


def test_interactive_agent_errors_end_only_that_turn(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("internal-error"), stdin="a\nb\n")
    assert run.code == 1
    assert run.err.count("stream disconnected before completion") == 2


def test_interactive_ctrl_c_cancels_the_turn_and_the_session_goes_on() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rxacp", "prompt", "--agent", odd("good")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"slow\n")
        proc.stdin.flush()
        _read_until(proc, proc.stdout, b"working")
        proc.send_signal(signal.SIGINT)
        _read_until(proc, proc.stderr, b"cancelled")
        out, _ = proc.communicate(b"after\n", timeout=WAIT)  # then end of input
    finally:
        proc.kill()
        proc.communicate(timeout=WAIT)
    assert proc.returncode == 0
    assert b"after" in out


# ---------------------------------------------------------------------------- terminals
def test_terminals_runs_the_agents_command_locally_and_says_so(
    rxacp_cli: Any, tmp_path: Path
) -> None:
    run = rxacp_cli(
        "prompt", "--agent", AGENT, "--terminals", "--cwd", str(tmp_path), "terminal", "pwd"
    )
    assert run.code == 0
    assert os.path.realpath(tmp_path) in run.out
    assert "· terminal: pwd (in " in run.err


def test_without_terminals_the_client_does_not_offer_them(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "terminal", "pwd")
    assert run.code == 0
    assert "could not run pwd" in run.out
