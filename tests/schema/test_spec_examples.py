"""Every JSON example of the protocol docs parses into the right model and re-serializes as is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

import rxacp.schema as schema
from rxacp.schema import METHODS, AcpModel, Error

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples"
MANIFEST: list[dict[str, Any]] = json.loads((FIXTURES / "manifest.json").read_text("utf-8"))
DOCS = Path(__file__).resolve().parents[3] / "shared" / "acp-spec" / "v1" / "docs"


def _load(entry: dict[str, Any]) -> Any:
    return json.loads((FIXTURES / entry["file"]).read_text("utf-8"))


def _without_nulls(value: Any) -> Any:
    """Drop ``null`` members: for optional ACP fields, omitted and ``null`` are equivalent."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _assert_same_wire(produced: Any, original: Any) -> None:
    assert _without_nulls(produced) == _without_nulls(original)
    if _without_nulls(original) == original:
        assert produced == original


def _parse(target: Any, value: Any) -> Any:
    if isinstance(target, type) and issubclass(target, AcpModel):
        return target.from_wire(value)
    return TypeAdapter(target).validate_python(value, by_alias=True, by_name=False)


def test_manifest_lists_one_fixture_per_json_block_of_the_docs() -> None:
    files = sorted(p.name for p in FIXTURES.glob("*.json") if p.name != "manifest.json")
    assert sorted(e["file"] for e in MANIFEST) == files
    assert len(MANIFEST) >= 90
    if DOCS.is_dir():  # the docs sit beside the repository in the workspace
        blocks = sum(p.read_text("utf-8").count("```json") for p in DOCS.glob("*.mdx"))
        assert blocks == len(MANIFEST)


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_spec_example_parses_into_its_model_and_round_trips(entry: dict[str, Any]) -> None:
    value = _load(entry)
    kind = entry["kind"]
    if kind == "fragment":
        payload = value[entry["path"]] if "path" in entry else value
        model = _parse(getattr(schema, entry["model"]), payload)
        assert type(model).__name__ == entry["expect"]
        _assert_same_wire(model.to_wire(), payload)
        return
    assert value["jsonrpc"] == "2.0"
    spec = METHODS.get(entry["method"])
    if spec is None:  # extension methods (`_vendor/...`) have no schema model
        assert entry["method"].startswith("_")
        return
    if kind in ("request", "notification"):
        assert spec.kind == kind
        params = spec.params_type.from_wire(value["params"])
        assert type(params) is spec.params_type
        _assert_same_wire(params.to_wire(), value["params"])
        if "doc_mismatch" in entry:
            assert type(getattr(params, "update", None)).__name__ == "UnknownSessionUpdate"
    elif kind == "response":
        assert spec.result_type is not None
        result = spec.result_type.from_wire(value["result"])
        # An empty result may be written as `null`; the SDK writes it back as `{}`.
        _assert_same_wire(result.to_wire(), value["result"] if value["result"] is not None else {})
    else:
        error = Error.from_wire(value["error"])
        _assert_same_wire(error.to_wire(), value["error"])


def test_spec_examples_cover_the_main_session_update_kinds() -> None:
    kinds = set()
    for entry in MANIFEST:
        if entry.get("method") == "session/update" and "doc_mismatch" not in entry:
            notification = schema.SessionNotification.from_wire(_load(entry)["params"])
            kinds.add(type(notification.update).__name__)
    assert {"AgentMessageChunk", "ToolCall", "ToolCallUpdateNotification", "Plan"} <= kinds
    assert "UnknownSessionUpdate" not in kinds
