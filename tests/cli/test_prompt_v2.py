"""``rxacp prompt --protocol-version 2``: negotiates v2, falls back to 1, prints the version."""

from __future__ import annotations

import json
from typing import Any

from .conftest import AGENT

DUAL = AGENT + " --protocol-versions 1,2"


def test_v2_with_a_dual_agent_streams_the_turn_and_prints_protocol_2(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--protocol-version", "2", "--agent", DUAL, "--yes", "permission")
    assert run.code == 0, run.err
    assert run.out.strip() == "allow"
    assert "protocol 2" in run.err and "asked for" not in run.err
    assert "state: requires_action" in run.err and "end_turn" in run.err


def test_v2_falls_back_to_1_with_a_v1_agent_and_says_so(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--protocol-version", "2", "--agent", AGENT, "echo", "hi")
    assert (run.code, run.out) == (0, "hi\n")
    assert "protocol 1 (asked for 2)" in run.err


def test_v2_json_names_the_version_and_ends_with_the_idle_state_update(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--protocol-version", "2", "--json", "--agent", DUAL, "stream", "2")
    assert run.code == 0, run.err
    lines = [json.loads(line) for line in run.out.splitlines()]
    assert lines[0] == {"type": "initialized", "protocolVersion": 2}
    kinds = [x["update"]["sessionUpdate"] for x in lines if x["type"] == "update"]
    assert kinds == [
        "user_message", "state_update", "agent_message_chunk", "agent_message_chunk",
        "state_update",
    ]  # fmt: skip
    assert lines[-1]["response"] == {
        "sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"
    }  # fmt: skip


def test_v1_json_output_has_no_initialized_line(rxacp_cli: Any) -> None:
    run = rxacp_cli("prompt", "--json", "--agent", DUAL, "echo", "hi")
    assert [json.loads(x)["type"] for x in run.out.splitlines()] == ["update", "response"]
