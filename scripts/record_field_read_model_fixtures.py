"""Record PRODUCTION agents' ``session/update`` streams as read-model fixtures (issue 31 item 3).

For each agent of the field suite (``tests/field/agents.py``: codex-acp, gemini-cli, opencode,
installed by ``scripts/setup_field_agents.sh`` into ``.field-cache/``), offline against the
field suite's fake model server, through the field rig (an rxacp sync client over real stdio):
opens a session, then runs the ``field:plain`` (a canned answer), ``field:slow 0.01`` (80
chunks) and ``field:read <workspace file>`` (the agent's read tool) turns. Every incoming
``session/update`` params object is written as it came off the wire, one JSON object per line,
to ``tests/fixtures/read_model/<agent>-<phase>.jsonl`` (phases ``session``: what arrived
between the ``session/new`` request and the first prompt, not written when empty; then
``plain``, ``stream``, ``read``). Session ids become ``"recorded"`` and the temporary workspace
path ``/workspace``. Prints how many updates came before the ``session/new`` answer.

Run from the repository root after the setup script:
``python scripts/record_field_read_model_fixtures.py [agent ...]``.
``tests/client/test_read_model_fixtures.py`` folds the files and checks the snapshots.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.field.agents import AGENTS  # noqa: E402
from tests.field.fake_model import FakeModelServer  # noqa: E402
from tests.field.rig import WORKSPACE_FILE, FieldRig  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "read_model"


def _updates(rig: FieldRig, start: int) -> tuple[list[str], int]:
    frames = rig.traffic.frames
    lines = []
    for frame in frames[start:]:
        message = frame.message
        if frame.direction == "in" and frame.method == "session/update":
            assert isinstance(message, dict)
            text = json.dumps(dict(message["params"], sessionId="recorded"), ensure_ascii=False)
            text = text.replace(str(rig.workspace), "/workspace")
            lines.append(text.replace(str(rig.workspace).lstrip("/"), "workspace"))
    return lines, len(frames)


def _early(frames: list[Any]) -> int:
    """How many ``session/update`` notifications came in before the ``session/new`` answer."""
    count = 0
    for frame in frames:
        if frame.direction != "in":
            continue
        if frame.method == "session/update":
            count += 1
        elif frame.method is None:  # the answer
            return count
    return count


def record(name: str) -> None:
    [agent] = [a for a in AGENTS if a.name == name]
    with FakeModelServer() as server:
        rig = FieldRig(agent, "sync", server)
        try:
            rig.call("initialize")
            if agent.auth_method is not None:
                rig.call("authenticate", {"methodId": agent.auth_method})
            mark = len(rig.traffic.frames)
            rig.session_id = rig.new_session()
            early = _early(rig.traffic.frames[mark:])
            print(f"{name}: {early} session/update(s) before the session/new answer")
            phases = {"session": None, "plain": "field:plain", "stream": "field:slow 0.01"}
            phases["read"] = f"field:read {rig.workspace / WORKSPACE_FILE}"
            for phase, text in phases.items():
                if text is not None:
                    rig.prompt(text)
                lines, mark = _updates(rig, mark)
                path = OUT / f"{name}-{phase}.jsonl"
                path.unlink(missing_ok=True)
                if lines:  # agents send the session's first updates (commands) late or not
                    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
                print(f"{path.relative_to(ROOT)}: {len(lines)} updates")
        finally:
            rig.close()


def main(names: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or [a.name for a in AGENTS]:
        record(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
