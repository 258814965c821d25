"""``rxacp prompt`` against the reference agent: streaming, permissions, fs, errors, Ctrl-C."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path
from typing import Any

from .conftest import AGENT, WAIT, spawn_cli


def test_echo_prints_the_answer_on_stdout_and_the_stop_reason_on_stderr(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "echo", "hello", "world")
    assert run.code == 0
    assert run.out == "hello world\n"
    assert "end_turn" in run.err
    assert "rxacp-reference" in run.err


def test_yes_allows_and_no_rejects_permission_requests(rxacp_cli: Any) -> None:
    allowed = rxacp_cli("prompt", "--agent", AGENT, "--yes", "permission")
    rejected = rxacp_cli("prompt", "--agent", AGENT, "--no", "permission")
    assert (allowed.code, allowed.out.strip()) == (0, "allow")
    assert (rejected.code, rejected.out.strip()) == (0, "reject")
    assert "--yes" in allowed.err and "--no" in rejected.err


def test_interactive_permission_reads_the_choice_from_stdin(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "permission", "Deploy", stdin="1\n")
    assert run.out.strip() == "allow"
    assert "Deploy" in run.err and "1) Allow" in run.err


def test_interactive_permission_never_approves_on_end_of_input(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "permission", stdin="")
    assert run.out.strip() == "cancelled"
    assert "cancelled: no answer (end of input)" in run.err


def test_fs_read_inside_the_cwd_is_served(rxacp_cli: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("inside the cwd")
    run = rxacp_cli("prompt", "--agent", AGENT, "--cwd", str(tmp_path), "read", str(notes))
    assert run.code == 0
    assert run.out.strip() == "inside the cwd"


def test_fs_read_outside_the_cwd_is_refused_with_invalid_params(
    rxacp_cli: Any, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("do not leak")
    cwd = tmp_path / "project"
    cwd.mkdir()
    run = rxacp_cli("prompt", "--agent", AGENT, "--cwd", str(cwd), "read", str(outside))
    assert "do not leak" not in run.out
    assert "-32602" in run.out and "outside the workspace roots" in run.out


def test_fs_read_of_a_missing_file_is_resource_not_found(rxacp_cli: Any, tmp_path: Path) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "--cwd", str(tmp_path), "read", f"{tmp_path}/no")
    assert "-32002" in run.out


def test_fs_write_inside_the_cwd_creates_the_file(rxacp_cli: Any, tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.txt"
    run = rxacp_cli("prompt", "--agent", AGENT, "--cwd", str(tmp_path), "write", str(target), "hi")
    assert run.code == 0
    assert target.read_text() == "hi"


def test_an_agent_error_exits_1_with_a_clear_message(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "fail")
    assert run.code == 1
    assert "error" in run.err and "-32603" in run.err


def test_a_missing_agent_command_exits_1_naming_it(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--agent", "no-such-agent-binary --acp", "hi")
    assert run.code == 1
    assert "no-such-agent-binary" in run.err


def test_a_cwd_that_is_not_a_directory_is_a_usage_error(rxacp_cli: Any, tmp_path: Path) -> None:
    run = rxacp_cli("prompt", "--agent", AGENT, "--cwd", str(tmp_path / "nope"), "hi")
    assert run.code == 2
    assert "not a directory" in run.err


def test_log_wire_records_json_rpc_in_both_directions(rxacp_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    run = rxacp_cli("prompt", "--agent", AGENT, "--log-wire", str(log), "echo", "hi")
    assert run.code == 0
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [e["message"].get("method") for e in entries if e["direction"] == "out"]
    received = [e["message"] for e in entries if e["direction"] == "in"]
    assert sent[:3] == ["initialize", "session/new", "session/prompt"]
    assert any(m.get("method") == "session/update" for m in received)
    assert received[-1]["result"] == {"stopReason": "end_turn"}
    assert all(e["timestamp"].endswith("+00:00") for e in entries)


def _read_until(proc: subprocess.Popen[bytes], stream: Any, needle: bytes) -> bytes:
    """Read ``stream`` (bounded) until ``needle`` appears; returns what was read."""
    seen = b""
    fd = stream.fileno()
    while needle not in seen:
        ready, _, _ = select.select([fd], [], [], WAIT)
        assert ready, f"timed out waiting for {needle!r}; got {seen!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"stream ended before {needle!r}; got {seen!r}"
        seen += chunk
    return seen


def test_ctrl_c_once_sends_session_cancel_and_exits_0_with_cancelled() -> None:
    proc = spawn_cli("prompt", "--agent", AGENT, "slow", "5")
    try:
        _read_until(proc, proc.stdout, b"Every")  # the first update arrived
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert b"cancelled" in err
    assert b"session/cancel" in err
    assert len(out.split()) < 50  # it stopped long before the 5 s were up


def test_ctrl_c_twice_disposes_the_prompt_and_exits_130() -> None:
    agent = AGENT + " --cancel-grace 30"
    proc = spawn_cli("prompt", "--agent", agent, "stubborn", "10")
    try:
        _read_until(proc, proc.stdout, b"ignore")  # the stubborn handler is streaming
        proc.send_signal(signal.SIGINT)
        _read_until(proc, proc.stderr, b"Ctrl-C again")  # the first one was handled
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert b"$/cancel_request" in err
