"""The user-facing example tests run under the plugin, and docs/testing.md only shows them."""

from __future__ import annotations

import re
import subprocess

from ._run import ROOT
from .conftest import EXAMPLES


def test_example_tests_pass_under_the_plugin(
    plugin_run: subprocess.CompletedProcess[str],
) -> None:
    for name in ("test_echoes_the_prompt", "test_stops_streaming_when_cancelled"):
        assert f"test_my_agent.py::{name} PASSED" in plugin_run.stdout
    assert "test_my_client.py::test_reports_agent_errors PASSED" in plugin_run.stdout
    assert "10 passed" in plugin_run.stdout


def test_every_python_snippet_in_the_testing_guide_is_part_of_a_tested_example() -> None:
    guide = (ROOT / "docs" / "testing.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", guide, flags=re.S)
    assert len(snippets) >= 4
    sources = "\n".join((ROOT / path).read_text() for path in EXAMPLES)
    for snippet in snippets:
        assert snippet.strip() in sources, f"docs/testing.md snippet not in an example:\n{snippet}"
