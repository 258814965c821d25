"""The getting-started and migration docs stay true: every ```python block in them is a piece of
a real file under examples/ (which ``test_getting_started_examples.py`` runs), their links point
at files that exist, and the migration guide names every public method of the rxacp API it maps.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from rxacp import AcpAsyncAgent, AcpAsyncClient, AcpSyncAgent, AcpSyncClient, CancellationSignal
from rxacp.agent import PromptContext, SyncPromptContext
from rxacp.agent.builder import AcpAgentBuilder
from rxacp.agent.support import AcpAgentSupportBuilder
from rxacp.client import AcpAsyncClientBuilder, AcpSyncClientBuilder

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OWN_DOCS = [
    "index.md",
    "getting-started-client.md",
    "getting-started-agent.md",
    "migration-from-java.md",
]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def python_blocks(doc: str) -> list[str]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    return [b.strip("\n") for b in re.findall(r"```python\n(.*?)```", text, re.S)]


def contained_in(block: str, path: Path) -> bool:
    """True if ``block`` equals a run of consecutive lines of ``path`` (up to indentation)."""
    wanted = textwrap.dedent(block).splitlines()
    lines = path.read_text(encoding="utf-8").splitlines()
    n = len(wanted)
    return any(
        textwrap.dedent("\n".join(lines[i : i + n])).splitlines() == wanted
        for i in range(len(lines) - n + 1)
    )


BLOCKS = [(doc, i, block) for doc in OWN_DOCS for i, block in enumerate(python_blocks(doc))]


def test_the_getting_started_and_migration_docs_have_python_blocks_to_check() -> None:
    counts = {doc: len(python_blocks(doc)) for doc in OWN_DOCS}
    assert counts["getting-started-client.md"] >= 4, counts
    assert counts["getting-started-agent.md"] >= 4, counts
    assert counts["migration-from-java.md"] >= 2, counts


@pytest.mark.parametrize(
    ("doc", "index", "block"), BLOCKS, ids=[f"{doc}#{i}" for doc, i, _ in BLOCKS]
)
def test_every_python_block_of_the_docs_is_part_of_an_example_file(
    doc: str, index: int, block: str
) -> None:
    homes = [p.name for p in EXAMPLES if contained_in(block, p)]
    first = block.splitlines()[0] if block else "<empty>"
    assert homes, (
        f"docs/{doc}, python block #{index} (starting {first!r}) is not a piece of any file "
        "under examples/: copy it from the example file it documents, or update that file"
    )


@pytest.mark.parametrize("doc", OWN_DOCS)
def test_relative_links_of_the_docs_point_at_existing_files(doc: str) -> None:
    text = (DOCS / doc).read_text(encoding="utf-8")
    targets = re.findall(r"\]\((\.\./[^)#]+)\)", text)
    missing = [t for t in targets if not (DOCS / t).resolve().exists()]
    assert targets and not missing, f"docs/{doc} links to missing files: {missing}"


def test_the_docs_index_maps_every_page_of_the_docs_folder() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    wanted = {
        "getting-started-client.md",
        "getting-started-agent.md",
        "cancellation.md",
        "testing.md",
        "websocket.md",
        "reliability.md",
        "check.md",
        "migration-from-java.md",
    }
    present = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    assert wanted | present <= linked, f"docs/index.md does not link {sorted(wanted - linked)}"


def public_names(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


MAPPED_API = [
    AcpAsyncClientBuilder,
    AcpSyncClientBuilder,
    AcpAsyncClient,
    AcpSyncClient,
    CancellationSignal,
    AcpAgentBuilder,
    AcpAsyncAgent,
    AcpSyncAgent,
    PromptContext,
    SyncPromptContext,
    AcpAgentSupportBuilder,
]


@pytest.mark.parametrize("cls", MAPPED_API, ids=lambda c: c.__name__)
def test_the_migration_guide_names_every_public_method_of_the_mapped_rxacp_api(cls: type) -> None:
    guide = (DOCS / "migration-from-java.md").read_text(encoding="utf-8")
    mentioned = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", guide))
    missing = sorted(public_names(cls) - mentioned)
    assert not missing, f"docs/migration-from-java.md does not mention {cls.__name__}.{missing}"
