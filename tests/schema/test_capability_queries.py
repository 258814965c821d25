"""NegotiatedCapabilities has a generated supports_*/require_* for every schema capability."""

from __future__ import annotations

from typing import Any

import pytest

from rxacp import NegotiatedCapabilities
from rxacp.errors import AcpCapabilityException
from rxacp.schema._capabilities import CAPABILITY_PATHS

from ._strategies import load_schema


def _wire_paths(defs: dict[str, Any], name: str, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for prop, node in defs[name].get("properties", {}).items():
        if prop == "_meta":
            continue
        out.add(prefix + prop)
        refs = [
            p["$ref"] for p in [node, *node.get("anyOf", []), *node.get("allOf", [])] if "$ref" in p
        ]
        ref = refs[0].rsplit("/", 1)[-1] if refs else None
        if ref and ref.endswith("Capabilities"):
            out |= _wire_paths(defs, ref, f"{prefix}{prop}.")
    return out


def test_every_capability_leaf_of_both_schemas_has_a_query() -> None:
    groups = {
        "sessionCapabilities",
        "promptCapabilities",
        "mcpCapabilities",
        "fs",
        "auth",
        "session",
    }
    for spec in ("schema.json", "schema.unstable.json"):
        defs = load_schema(spec)["$defs"]
        paths = _wire_paths(defs, "AgentCapabilities") | _wire_paths(defs, "ClientCapabilities")
        assert paths - groups <= set(CAPABILITY_PATHS.values()), spec


@pytest.mark.parametrize(
    "name",
    [
        "fork_session",
        "providers",
        "session_additional_directories",
        "elicitation_form",
        "elicitation_url",
        "session_notices",
        "session_compaction",
        "list_sessions",
        "terminal",
    ],
)
def test_the_queries_the_issue_asked_for_exist(name: str) -> None:
    assert callable(getattr(NegotiatedCapabilities, f"supports_{name}"))
    assert callable(getattr(NegotiatedCapabilities, f"require_{name}"))


@pytest.mark.parametrize(("name", "path"), sorted(CAPABILITY_PATHS.items()))
def test_each_query_answers_for_its_own_wire_path(name: str, path: str) -> None:
    wire: dict[str, Any] = {}
    node = wire
    *parents, leaf = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = {}  # a present (empty) capability object counts as advertised
    advertised = NegotiatedCapabilities(wire, peer="client")
    empty = NegotiatedCapabilities({}, peer="agent")
    assert getattr(advertised, f"supports_{name}")() is True
    getattr(advertised, f"require_{name}")()
    assert getattr(empty, f"supports_{name}")() is False
    with pytest.raises(AcpCapabilityException, match=path.replace(".", r"\.")):
        getattr(empty, f"require_{name}")()
