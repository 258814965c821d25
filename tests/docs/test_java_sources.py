"""The migration guide states its sources: every row of a table whose first column is ``Java``
ends with a Source cell (computed by ``scripts/java_sources.py`` from a Java SDK checkout and
the cancellation contract), and the page names the Java SDK commit it was checked against."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "migration-from-java.md"
COMMIT = "ef72d5cdf93449e973784b9ea8b46e0bb58d97a4"
SOURCE = re.compile(r"^(0\.16|contract|0\.16 \+ contract|—|Java, Reactor|not in either: `.+`)$")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "java_sources", ROOT / "scripts" / "java_sources.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


JS = _script()


def _java_rows() -> list[list[str]]:
    rows: list[list[str]] = []
    java = False
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            java = False
            continue
        cells = JS._cells(line)
        if cells and cells[0] == "Java":
            java = True
            assert cells[-1] == "Source", line
        elif java and not set("".join(cells)) <= set("-: "):
            rows.append(cells)
    return rows


def test_every_java_row_of_the_guide_names_its_source() -> None:
    rows = _java_rows()
    assert len(rows) > 200
    bad = [row[0] for row in rows if not SOURCE.match(row[-1])]
    assert bad == []
    assert sum(row[-1] == "0.16" for row in rows) > 150


def test_the_guide_names_the_java_sdk_commit_and_the_contract_it_was_checked_against() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert COMMIT in text and "0.16.0-SNAPSHOT" in text
    assert "0.19.0-SNAPSHOT" not in text.replace("cited a 0.19.0-SNAPSHOT", "")
    assert "cancellation contract" in text


def test_the_script_sorts_names_into_the_release_the_contract_or_neither() -> None:
    tree, contract = {"AcpClient", "sync", "requestTimeout"}, {"CancellationSignal", "cancel"}
    assert JS.java_names("`AcpClient.sync(transport)` / `requestTimeout(Duration)`") == [
        "AcpClient",
        "sync",
        "requestTimeout",
    ]
    assert JS.source_of("`AcpClient.sync(t)`", tree, contract) == "0.16"
    assert JS.source_of("`new CancellationSignal()`", tree, contract) == "contract"
    assert JS.source_of("`sync(t)`, `signal.cancel()`", tree, contract) == "0.16 + contract"
    assert (
        JS.source_of("`handlerExecutor(e)`", tree, contract) == "not in either: `handlerExecutor`"
    )
    assert JS.source_of("— (an extra)", tree, contract) == "—"
    assert JS.source_of("`Mono<T>`", tree, contract) == "Java, Reactor"


def test_the_script_adds_a_source_column_to_java_tables_only() -> None:
    text = (
        "| Java | rxacp |\n|---|---|\n| `sync(t)` | `sync(t)` |\n\n"
        "| Other | x |\n|---|---|\n| a | b |\n"
    )
    out = JS.annotate(text, {"sync"}, set())
    assert out.splitlines()[:3] == [
        "| Java | rxacp | Source |",
        "|---|---|---|",
        "| `sync(t)` | `sync(t)` | 0.16 |",
    ]
    assert out.splitlines()[4:] == ["| Other | x |", "|---|---|", "| a | b |"]
    assert JS.annotate(out, {"sync"}, set()) == out  # idempotent
