"""One-off: copy every ```json example of the ACP docs into test fixtures plus a manifest.

Usage::

    python scripts/extract_spec_examples.py [DOCS_DIR]
    python scripts/extract_spec_examples.py --v2 [V2_DOCS_DIR]  # spec_examples_v2.json

DOCS_DIR defaults to ``../shared/acp-spec/v1/docs`` (relative to the repository root). Writes
``tests/fixtures/spec_examples/<doc>_<nn>.json`` and ``manifest.json``, which says for each example
which doc and block it came from, whether it is a JSON-RPC request / notification / response or
a fragment, the method (responses are matched to the preceding request with the same id), and
the model that its ``params`` / ``result`` (or the fragment itself) must parse into.

Not responsible for checking anything: ``tests/schema/test_spec_examples.py`` does that.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "spec_examples"

__all__ = ["main"]

# Responses whose request is not shown in the same doc: (doc, block) -> method.
RESPONSE_METHOD_OVERRIDES: dict[tuple[str, int], str] = {
    ("session-modes.mdx", 0): "session/new",
    ("session-config-options.mdx", 0): "session/new",
}

# Fragments: (doc, block) -> (model or union name, expected concrete class, JSON path or "").
FRAGMENTS: dict[tuple[str, int], tuple[str, str, str]] = {
    ("authentication.mdx", 1): ("AuthMethod", "AuthMethodAgent", ""),
    ("authentication.mdx", 2): ("AuthMethod", "AuthMethodTerminal", ""),
    ("content.mdx", 0): ("ContentBlock", "TextContent", ""),
    ("content.mdx", 1): ("ContentBlock", "ImageContent", ""),
    ("content.mdx", 2): ("ContentBlock", "AudioContent", ""),
    ("content.mdx", 3): ("ContentBlock", "EmbeddedResource", ""),
    ("content.mdx", 4): ("ContentBlock", "ResourceLink", ""),
    ("elicitation.mdx", 0): ("ClientCapabilities", "ClientCapabilities", "clientCapabilities"),
    ("session-config-options.mdx", 1): (
        "ClientCapabilities",
        "ClientCapabilities",
        "clientCapabilities",
    ),
    ("session-config-options.mdx", 2): ("SessionConfigOption", "SessionConfigOption", ""),
    ("session-setup.mdx", 14): ("McpServer", "McpServerStdio", ""),
    ("session-setup.mdx", 15): ("McpServer", "McpServerHttp", ""),
    ("session-setup.mdx", 16): ("McpServer", "McpServerSse", ""),
    ("tool-calls.mdx", 5): ("ToolCallContent", "Content", ""),
    ("tool-calls.mdx", 6): ("ToolCallContent", "Diff", ""),
    ("tool-calls.mdx", 7): ("ToolCallContent", "Terminal", ""),
    ("tool-calls.mdx", 8): ("ToolCallLocation", "ToolCallLocation", ""),
}

# Examples that disagree with the schema: (doc, block) -> note (kept verbatim, see the test).
DOC_MISMATCHES: dict[tuple[str, int], str] = {
    ("session-modes.mdx", 2): (
        "uses `modeId`; the schema's CurrentModeUpdate requires `currentModeId`, so the update "
        "is kept as UnknownSessionUpdate"
    ),
}

_BLOCK = re.compile(r"```json[^\n]*\n(.*?)```", re.S)


def _parse(body: str) -> tuple[Any, str | None]:
    try:
        return json.loads(body), None
    except json.JSONDecodeError:
        # The docs elide long lists as `[...]`; keep the example with an empty list.
        fixed = body.replace("[...]", "[]")
        return json.loads(fixed), "elided `[...]` replaced by `[]`"


def _entry(doc: str, index: int, value: Any, requests: dict[Any, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"doc": doc, "block": index}
    if isinstance(value, dict) and "method" in value:
        entry["kind"] = "request" if "id" in value else "notification"
        entry["method"] = value["method"]
        if "id" in value:
            requests[value["id"]] = value["method"]
    elif isinstance(value, dict) and ("result" in value or "error" in value):
        entry["kind"] = "error" if "error" in value else "response"
        method = RESPONSE_METHOD_OVERRIDES.get((doc, index)) or requests.get(value.get("id"))
        if method is None and "protocolVersion" in (value.get("result") or {}):
            method = "initialize"
        if method is None:
            raise SystemExit(f"cannot tell the method of {doc} block {index}")
        entry["method"] = method
    else:
        model, expect, path = FRAGMENTS[(doc, index)]
        entry.update(kind="fragment", model=model, expect=expect)
        if path:
            entry["path"] = path
    return entry


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    docs = Path(args[0]) if args else ROOT.parent / "shared" / "acp-spec" / "v1" / "docs"
    OUT.mkdir(parents=True, exist_ok=True)
    manifest: list[dict[str, Any]] = []
    for path in sorted(docs.glob("*.mdx")):
        requests: dict[Any, str] = {}
        for index, match in enumerate(_BLOCK.finditer(path.read_text(encoding="utf-8"))):
            value, note = _parse(match.group(1))
            entry = _entry(path.name, index, value, requests)
            name = f"{path.stem}_{index:02d}.json"
            entry = {"file": name, **entry}
            if note:
                entry["normalized"] = note
            if (path.name, index) in DOC_MISMATCHES:
                entry["doc_mismatch"] = DOC_MISMATCHES[(path.name, index)]
            (OUT / name).write_text(
                json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
            manifest.append(entry)
    (OUT / "manifest.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {len(manifest)} examples to {OUT}")
    return 0


OUT_V2 = ROOT / "tests" / "fixtures" / "spec_examples_v2.json"


def main_v2(docs: Path) -> int:
    """``--v2 [DOCS_DIR]``: the JSON-RPC messages (not fragments) of the ACP v2 Draft docs, in
    one file: ``[{"doc", "block", "method", "message"}]`` (a response names the method of the
    request before it with its id; extension methods are left out)."""
    found: list[dict[str, Any]] = []
    for path in sorted(docs.glob("*.mdx")):
        requests: dict[Any, str] = {}
        for index, match in enumerate(_BLOCK.finditer(path.read_text(encoding="utf-8"))):
            value, _note = _parse(match.group(1))
            if not isinstance(value, dict) or "jsonrpc" not in value:
                continue
            method = value.get("method")
            if method is not None and "id" in value:
                requests[value["id"]] = method
            if method is None:
                method = requests.get(value.get("id"))
            if method is None or str(method).startswith("_"):
                continue
            found.append({"doc": path.name, "block": index, "method": method, "message": value})
    OUT_V2.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(found)} v2 messages to {OUT_V2}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--v2"]:
        default = ROOT.parent / "shared" / "acp-spec" / "v2" / "docs"
        raise SystemExit(main_v2(Path(sys.argv[2]) if len(sys.argv) > 2 else default))
    raise SystemExit(main())
