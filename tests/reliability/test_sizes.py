"""Item 8: message sizes over real stdio pipes.

Lines of 64 KiB - 1, 64 KiB, 64 KiB + 1, 1 MiB and 20 MiB reach an rxacp agent and its echo
comes back intact; a line of the cap + 1 is discarded, counted and answered ``-32700``, and the
very next message is served. Framing-level edges: tests/transport/test_framing.py; the 20 MiB
round trip through the engine: tests/session/test_over_transports.py.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .conftest import FLOOD, Figure, scaled, spawn_agent

KIB, MIB = 1024, 1024 * 1024
SIZES = [64 * KIB - 1, 64 * KIB, 64 * KIB + 1, MIB, 20 * MIB] + ([60 * MIB] if scaled(0, 1) else [])


def prompt_line(rid: int, size: int) -> tuple[bytes, str]:
    """A session/prompt request line of exactly ``size`` bytes (without its newline)."""

    def build(text: str) -> bytes:
        params = {"sessionId": "s1", "prompt": [{"type": "text", "text": text}]}
        return json.dumps(
            {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": params},
            separators=(",", ":"),
        ).encode()

    overhead = len(build(""))
    text = "e" + "x" * (size - overhead - 1)
    line = build(text)
    assert len(line) == size
    return line, text


def test_lines_from_64_kib_minus_1_to_20_mib_reach_an_agent_and_come_back_intact(
    figure: Figure,
) -> None:
    proc = spawn_agent([sys.executable, FLOOD])
    assert proc.stdin is not None and proc.stdout is not None
    new = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": "/", "mcpServers": []},
    }
    proc.stdin.write(json.dumps(new).encode() + b"\n")
    proc.stdin.flush()
    assert b'"id":1' in proc.stdout.readline()
    for rid, size in enumerate(SIZES, start=2):
        line, text = prompt_line(rid, size)
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        update = json.loads(proc.stdout.readline())
        answer = json.loads(proc.stdout.readline())
        assert update["params"]["update"]["content"]["text"] == text, size
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}
    proc.stdin.close()
    assert proc.wait(10.0) == 0
    proc.stdout.close()
    figure("accepted_line_sizes_bytes", SIZES)


CAP = 256 * KIB
SCRIPT = (
    f"CAP = {CAP}\n"
    + """
import sys
def note(size):
    head = '{"jsonrpc":"2.0","method":"big","params":{"p":"'
    tail = '"}}'
    return head + "x" * (size - len(head) - len(tail)) + tail
for line in sys.stdin:
    if '"initialize"' in line:
        sys.stdout.write(note(CAP + 1) + "\\n" + note(CAP) + "\\n")
        sys.stdout.write('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}\\n')
        sys.stdout.flush()
"""
)


def test_a_line_of_the_cap_plus_one_is_rejected_and_the_next_message_is_served(
    figure: Figure,
) -> None:
    params = AgentParameters(sys.executable, ["-c", SCRIPT], max_frame_bytes=CAP)
    session = AcpSession(StdioAcpClientTransport(params), role="client")
    got: list[Any] = []
    session.set_notification_handler("big", lambda n: got.append(len(n.params["p"])))
    try:
        answer = wait_for(session.send_request("initialize", {"protocolVersion": 1}), 10.0)
        assert answer == {"protocolVersion": 1}
        assert session.stats.oversized_frames == 1
        assert got == [CAP - len('{"jsonrpc":"2.0","method":"big","params":{"p":""}}')]
        assert session.is_open
    finally:
        session.close()
    figure("cap_bytes", CAP)
    figure("cap_plus_1_rejected", session.stats.oversized_frames)
