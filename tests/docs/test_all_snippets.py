"""Every ```python block of the README and of docs/ runs as written: it is a run of lines of
a tested file under examples/, or it is complete — it compiles and every name it uses is
defined or imported in the block (ruff's undefined-name rule, F821)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.py"))]


def _blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
            found.append((page.relative_to(ROOT).as_posix(), i, textwrap.dedent(block.strip("\n"))))
    return found


def _in_an_example(block: str) -> bool:
    wanted = block.splitlines()
    n = len(wanted)
    for text in EXAMPLES:
        lines = text.splitlines()
        for i in range(len(lines) - n + 1):
            if textwrap.dedent("\n".join(lines[i : i + n])).splitlines() == wanted:
                return True
    return False


BLOCKS = _blocks()


def test_the_pages_have_python_blocks_to_check() -> None:
    assert len(BLOCKS) >= 25


@pytest.mark.parametrize(("page", "index", "block"), BLOCKS, ids=[f"{p}#{i}" for p, i, _ in BLOCKS])
def test_every_python_block_is_an_example_excerpt_or_complete_with_its_imports(
    page: str, index: int, block: str
) -> None:
    if _in_an_example(block):
        return
    compile(block, f"{page}#{index}", "exec")
    lint = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--select",
            "F821",
            "--output-format",
            "concise",
            "--stdin-filename",
            "snippet.py",
            "-",
        ],
        input=block,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert lint.returncode == 0, f"{page} block {index} uses undefined names:\n{lint.stdout}"


def test_the_transport_check_page_runs_its_example_against_the_in_memory_pair() -> None:
    page = (ROOT / "docs" / "transport-check.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```python\n(.*?)```", page, re.S)
    namespace: dict[str, object] = {}
    exec(compile(block, "transport-check.md", "exec"), namespace)
    test = namespace["test_my_transport_conforms"]
    assert callable(test)
    test()  # raises AssertionError naming the behaviour if the pair does not conform
