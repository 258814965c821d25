"""Mark where each Java name of docs/migration-from-java.md comes from.

Every table of the guide whose first column is ``Java`` ends with a ``Source`` column. This
script computes it from two sources you can show:

* ``0.16``: the ACP Java SDK source tree (``agentclientprotocol/java-sdk``, a git checkout; the
  guide names the commit), every identifier of its ``*.java`` files;
* ``contract``: the cancellation contract (``seeds/cancellation.md`` of the shared sources),
  which describes a later Java SDK (it says "as of 0.80.0") than the released source.

A row's Java names are the class names, method names and constants in its first cell's code
spans. The row's source is ``0.16`` when all are in the tree, ``contract`` when the rest are in
the contract, and ``not in either: ...`` naming the others; ``—`` for rxacp extras (no Java
name) and ``Java, Reactor`` for rows naming only the language's or Reactor's names. Run::

    python scripts/java_sources.py JAVA_SDK_GIT_DIR CONTRACT.md           # report differences
    python scripts/java_sources.py JAVA_SDK_GIT_DIR CONTRACT.md --write   # update the guide

This script is *not* run by the test suite (the Java tree is not vendored);
``tests/docs/test_java_sources.py`` checks that every row carries a source.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "migration-from-java.md"

IGNORED = {
    "Boolean", "Class", "Consumer", "Duration", "ExecutorService", "Flux", "Function", "Integer",
    "List", "Map", "Mono", "Object", "Optional", "Runnable", "String", "Supplier", "Throwable",
    "TypeRef", "Void", "boolean", "int", "new", "try", "var", "null", "true", "false", "of",
    "ofSeconds", "ofMinutes", "IllegalStateException", "RuntimeException", "Exception", "builder",
    "build", "block", "toFuture", "subscribe", "Builder", "getX", "isX",
}  # fmt: skip
"""Java and Reactor names every Java program has; they say nothing about the SDK's API."""

_SPAN = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"(?<![A-Za-z0-9_])(@?[A-Za-z_][A-Za-z0-9_]*)(\s*\()?")


def identifiers_of_tree(git_dir: str, commit: str = "HEAD") -> set[str]:
    """Every identifier in the ``*.java`` files of ``commit``."""
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "grep", "-h", "-o", "-I", "-E",
         "[A-Za-z_][A-Za-z0-9_]*", commit, "--", "*.java"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return set(out.split())


def java_names(cell: str) -> list[str]:
    """The SDK names of a table cell: capitalised names, method names (before ``(``), names
    after a ``.``, annotations; the last part of a dotted name."""
    names: list[str] = []
    for span in _SPAN.findall(cell):
        for match in _NAME.finditer(span):
            name, call = match.group(1), match.group(2)
            start = match.start(1)
            dotted = start > 0 and span[start - 1] == "."
            bare = name.lstrip("@")
            if bare in IGNORED or len(bare) < 2:
                continue
            sdk_name = name.startswith("@") or call or dotted or bare[0].isupper()
            if sdk_name and bare not in names:
                names.append(bare)
    return names


def source_of(cell: str, tree: set[str], contract: set[str]) -> str:
    """The Source cell for a row whose Java cell is ``cell``."""
    if cell.startswith("—"):
        return "—"  # an rxacp extra: no Java name
    names = java_names(cell)
    if not names:
        return "Java, Reactor"  # only language or Reactor names
    missing = [n for n in names if n not in tree]
    if not missing:
        return "0.16"
    unknown = [n for n in missing if n not in contract]
    if not unknown:
        return "contract" if len(missing) == len(names) else "0.16 + contract"
    return "not in either: " + ", ".join(f"`{n}`" for n in unknown)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def annotate(text: str, tree: set[str], contract: set[str]) -> str:
    """``text`` with the Source column of every Java table (re)computed."""
    out: list[str] = []
    in_table = False
    has_source = False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_table = False
            out.append(line)
            continue
        cells = _cells(line)
        if not in_table:
            in_table = True
            is_java = bool(cells) and cells[0] == "Java"
            has_source = is_java and cells[-1] == "Source"
            if is_java and not has_source:
                cells.append("Source")
            out.append("| " + " | ".join(cells) + " |" if is_java else line)
            java_table = is_java
            continue
        if not java_table:
            out.append(line)
            continue
        if set("".join(cells)) <= set("-: "):
            if not has_source:
                cells.append("---")
            out.append("|" + "|".join(cells) + "|")
            continue
        if has_source:
            cells = cells[:-1]
        cells.append(source_of(cells[0], tree, contract))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("java_git_dir")
    parser.add_argument("contract")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    tree = identifiers_of_tree(args.java_git_dir, args.commit)
    contract = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", Path(args.contract).read_text()))
    text = GUIDE.read_text(encoding="utf-8")
    new = annotate(text, tree, contract)
    if args.write:
        GUIDE.write_text(new, encoding="utf-8")
        return 0
    changed = [(a, b) for a, b in zip(text.splitlines(), new.splitlines(), strict=False) if a != b]
    for old, line in changed:
        print(f"- {old}\n+ {line}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
