"""``rxacp demo`` end to end (subprocess), and the terminal styling rules it relies on."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from rxacp.cli import build_parser
from rxacp.cli.render import Style, colors_enabled

from .conftest import child_env

DEMO_TIMEOUT = 30.0


def test_demo_shows_streaming_a_timed_cancel_a_grace_rescue_and_a_summary(tmp_path: Path) -> None:
    log = tmp_path / "demo-wire.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "rxacp", "demo", "--log-wire", str(log)],
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT,
        env=child_env(),
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    for heading in (
        "1 A streamed answer",
        "2 Cancel mid-stream",
        "3 A stubborn handler",
        "4 Summary",
    ):
        assert heading in out
    assert "stopReason end_turn" in out
    assert out.count("stopReason cancelled") == 2
    assert "ms after session/cancel" in out
    assert "Every ACP request is a cold Observable" in out
    assert "\x1b[" not in out  # stdout is not a terminal: no colors
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [e["message"].get("method") for e in entries if e["direction"] == "out"]
    assert sent.count("session/cancel") == 2
    assert sent.count("session/prompt") == 3


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colors_only_on_a_terminal_and_never_with_no_color() -> None:
    assert colors_enabled(_Tty(), {})
    assert not colors_enabled(io.StringIO(), {})
    assert not colors_enabled(_Tty(), {"NO_COLOR": "1"})
    assert colors_enabled(_Tty(), {"NO_COLOR": ""})  # empty means unset (no-color.org)


def test_style_is_plain_text_when_disabled() -> None:
    assert Style(False)("cancelled", "bold", "red") == "cancelled"
    assert Style(True)("cancelled", "bold", "red") == "\x1b[1;31mcancelled\x1b[0m"


def test_the_parser_knows_both_subcommands_and_requires_an_agent_for_prompt() -> None:
    parser = build_parser()
    assert parser.parse_args(["demo"]).command == "demo"
    args = parser.parse_args(["prompt", "--agent", "a b", "--yes", "hello", "there"])
    assert (args.agent, args.yes, args.text) == ("a b", True, ["hello", "there"])
