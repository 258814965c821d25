"""Record real ``session/update`` streams as read-model fixtures (issue 31 item 3).

Spawns the reference agent over stdio (a real process, real pipes), runs its ``tool``, ``plan``
and ``stream 12`` turns in one session, and writes every incoming ``session/update`` params
object exactly as it came off the wire (through the wire tap, before rxacp parsed it), one JSON
object per line, to ``tests/fixtures/read_model/reference-<turn>.jsonl``. The session id is
replaced by ``"recorded"`` so the fixtures do not change from one recording to the next.

Run from the repository root: ``python scripts/record_read_model_fixtures.py``.
``tests/client/test_read_model_fixtures.py`` folds the files and checks the snapshots.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.transport import AgentParameters, StdioAcpClientTransport, WireTapTransport

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "read_model"
TURNS = {"tool": "tool", "plan": "plan", "stream": "stream 12"}


def main() -> int:
    params = AgentParameters(sys.executable, ["-m", "rxacp.testing.reference_agent"])
    tap = WireTapTransport(StdioAcpClientTransport(params), record=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with AcpClient.sync(tap).build() as client:
        client.initialize()
        sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
        for name, text in TURNS.items():
            start = len(tap.frames)
            client.prompt(PromptRequest.text(sid, text))
            lines = []
            for frame in tap.frames[start:]:
                message = frame.message
                if frame.direction == "in" and frame.method == "session/update":
                    assert isinstance(message, dict)
                    update = dict(message["params"], sessionId="recorded")
                    lines.append(json.dumps(update, ensure_ascii=False))
            path = OUT / f"reference-{name}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            print(f"{path}: {len(lines)} updates")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
