"""The README stays true: its two commands, its code (real files), and CI running its tests."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
VENV = "python3 -m venv .venv && . .venv/bin/activate && "
DEMO_COMMAND = VENV + "pip install -e . && rxacp demo"
TEST_COMMAND = VENV + 'pip install -e ".[dev]" && python -m pytest'


def bash_blocks() -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", README, re.S)]


def python_blocks() -> list[str]:
    return [b.strip() for b in re.findall(r"```python\n(.*?)```", README, re.S)]


def without_docstring(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return re.sub(r'^""".*?"""\n\n', "", text, count=1, flags=re.S).strip()


def test_readme_has_exactly_two_setup_commands_demo_then_tests() -> None:
    assert bash_blocks() == [DEMO_COMMAND, TEST_COMMAND]


def test_readme_gives_the_quick_offline_subset_by_marker() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert '`python -m pytest -m "not interop and not field and not slow"`' in readme


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert TEST_COMMAND in [line.strip() for line in ci]


def test_readme_client_and_agent_are_the_example_files() -> None:
    blocks = python_blocks()
    assert without_docstring(ROOT / "examples" / "readme_client.py") in blocks
    assert without_docstring(ROOT / "examples" / "readme_agent.py") in blocks
    client = without_docstring(ROOT / "examples" / "readme_client.py")
    agent = without_docstring(ROOT / "examples" / "readme_agent.py")
    assert len(client.splitlines()) <= 13 and len(agent.splitlines()) <= 21


def test_readme_client_runs_against_the_readme_agent() -> None:
    done = subprocess.run(
        [sys.executable, "examples/readme_client.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hello", "from", "rxacp", "[end_turn]"]
