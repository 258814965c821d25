"""Issue 30 items 5-7: ``rxacp prompt`` facing agents that misbehave, as a newcomer meets them
(tests/cli/odd_agent.py modes, real subprocesses): forged lines, junk on stdout, stderr worth
seeing, an answer rxacp refuses, a slow start, and side lines on a terminal."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

from rxacp.cli import main
from rxacp.cli.check_report import CheckResult, report_text
from rxacp.cli.render import Style, UpdateRenderer, clean
from rxacp.schema import SessionNotification

from .conftest import WAIT, child_env

ODD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "odd_agent.py")
FORGED = "PASS  fake.check  all good"


def odd(mode: str) -> str:
    return f"{sys.executable} {ODD} {mode}"


class FakeTerminal(io.StringIO):
    """One stream that says it is a terminal (stdout and stderr on the same TTY)."""

    def isatty(self) -> bool:
        return True


# ------------------------------------------------------------------ item 5: forged lines
def test_newlines_in_agent_fields_cannot_forge_lines_in_prompt_output(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("newlines"), "hi")
    assert run.code == 1
    lines = (run.out + run.err).splitlines()
    assert not [line for line in lines if line.startswith(FORGED)], lines
    assert "connected to odd\\nPASS  fake.check  all good\\n 1\\nPASS" in run.err  # name, version
    assert "session: Title\\nPASS" in run.err and "⚙ tool Run\\nPASS" in run.err
    assert "error: the agent answered with an error: Internal error\\nPASS" in run.err
    assert '"why\\nPASS' in run.err  # the error's data


def test_clean_escapes_newlines_except_in_streamed_text() -> None:
    assert clean("a\nb\r\nc\u2028d") == "a\\nb\\r\\nc\\u2028d"
    assert clean("a\nb\r\nc", keep_newlines=True) == "a\nb\nc"
    assert clean("tab\tok") == "tab\tok"


def test_a_check_detail_is_one_line_whatever_it_holds() -> None:
    detail = f"agent said: ok\n  {FORGED}"
    lines = report_text("agent", [CheckResult("initialize", "mandatory", "FAIL", "rule", detail)])
    assert not [line for line in lines if line.lstrip().startswith(FORGED)], lines
    assert f"agent said: ok\\n  {FORGED}" in "\n".join(lines)


def test_newlines_in_agent_fields_cannot_forge_lines_in_check_output(rxacp_cli: Any) -> None:
    run = rxacp_cli("check", "--agent", odd("newlines"), "--timeout", "3")
    assert not [line for line in run.out.splitlines() if line.lstrip().startswith(FORGED)]
    assert "PASS  initialize " in run.out  # its own verdict lines are still there


# ------------------------------------------------------------------ item 6: misbehaving agents
def test_a_line_of_junk_before_the_first_answer_is_shown_as_it_arrives(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("junk-first"), "--timeout", "1.5", "hi")
    assert run.code == 1
    shown = "the agent wrote a line that is not JSON-RPC to stdout: 'Loading odd-agent... "
    assert shown in run.err
    assert "a JSON-RPC message follows 'Loading odd-agent... ' on this line" in run.err
    assert "nothing from the agent" not in run.err  # the line counted as activity
    last = run.err.splitlines()[-1]
    assert "initialize timed out" in last and "1 line(s) that are not JSON-RPC" in last


def test_an_invalid_answer_is_reported_as_the_agents_naming_the_field(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", odd("bad-version"), "hi")
    assert run.code == 1
    error = run.err.splitlines()[-1]
    assert error.startswith("error: the agent sent an invalid initialize result: protocolVersion")
    assert "(sent 'one')" in error
    assert "answered with an error" not in error and "-32603" not in error


def test_startup_timeout_bounds_start_up_and_timeout_only_the_turn(
    rxacp_cli: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("ODD_DELAY", "4")
    slow = odd("slow-init")
    ok = rxacp_cli("prompt", "--agent", slow, "--timeout", "3", "--startup-timeout", "30", "hi")
    assert (ok.code, ok.out) == (0, "hi\n"), ok.err
    capped = rxacp_cli(
        "prompt", "--agent", slow, "--timeout", "30", "--startup-timeout", "0.5", "hi"
    )
    assert capped.code == 1
    assert "initialize timed out after 0.5 s (raise it with --startup-timeout)" in capped.err


def _read_until(stream: Any, needle: bytes) -> bytes:
    seen = b""
    while needle not in seen:
        ready, _, _ = select.select([stream], [], [], WAIT)
        assert ready, f"timed out waiting for {needle!r}; got {seen!r}"
        chunk = os.read(stream.fileno(), 4096)
        assert chunk, f"stream ended before {needle!r}; got {seen!r}"
        seen += chunk
    return seen


def test_show_stderr_shows_the_agents_stderr_while_the_turn_runs(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rxacp", "prompt", "--agent", odd("stderr"), "--show-stderr", "hi"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(NO_COLOR="1", ODD_GATE=str(gate)),
    )
    try:
        seen = _read_until(proc.stderr, b"agent stderr: debug: step 2\n")  # the turn still runs
        assert b"agent stderr: debug: step 1\n" in seen and proc.poll() is None
        gate.write_text("go")
        out, _ = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == b"done\n"


# ------------------------------------------------------------------ item 7: TTY side lines
def test_on_a_terminal_side_lines_wait_until_the_text_reaches_a_line_start(
    monkeypatch: Any,
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTerminal()
    code = main(["prompt", "--agent", odd("midtool"), "hi"], out=tty, err=tty, stdin=io.StringIO())
    assert code == 0
    text = tty.getvalue()
    assert "Hello, world!\n⚙ tool Look [pending]\nsession: Greeting\n■ end_turn" in text, text


def _chunk(text: str) -> SessionNotification:
    return SessionNotification.from_wire(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        }
    )


def _update(update: dict[str, Any]) -> SessionNotification:
    return SessionNotification.from_wire({"sessionId": "s", "update": update})


def test_tool_lines_plans_and_stderr_lines_wait_for_the_line_start_notes_do_not() -> None:
    tty = FakeTerminal()
    render = UpdateRenderer(tty, tty, Style(False))
    render(_chunk("Hello, wor"))
    render(_update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}))
    render(_update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}))
    render(
        _update(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "step", "priority": "low", "status": "pending"}],
            }
        )
    )
    render.side_line("agent stderr: working")
    assert tty.getvalue() == "Hello, wor"  # nothing cut the word yet
    render(_chunk("ld!\nMore"))
    assert tty.getvalue() == (
        "Hello, world!\n"
        + "⚙ tool Read [pending]\n  ↳ Read [completed]\nplan\n  ○ step\nagent stderr: working\n"
        + "More"
    )
    render.note("? permission: Deploy")  # a question cannot wait
    render.end()
    assert tty.getvalue().endswith("More\n? permission: Deploy\n")
