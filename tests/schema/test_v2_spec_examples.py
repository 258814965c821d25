"""Every JSON-RPC example of the ACP v2 Draft docs parses into its v2 model and round-trips,
except the ones that disagree with the shipped v2 schema (listed, each with the reason)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rxacp.schema.v2 import UnknownSessionUpdate
from rxacp.schema.v2.methods import METHODS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples_v2.json"
EXAMPLES: list[dict[str, Any]] = json.loads(FIXTURE.read_text("utf-8"))

DISAGREE = {
    ("authentication.mdx", 3): "initialize without `info`, which the v2 schema requires",
    ("migration.mdx", 0): "the v1 initialize shown for comparison",
    ("migration.mdx", 2): "the v1 initialize answer shown for comparison",
    ("prompt-lifecycle.mdx", 1): "session/prompt answered `{}`; the schema requires `messageId`",
}
"""(doc, block) -> why the example does not parse under the shipped v2 schema (docs/v2.md)."""

DROPPED = {
    ("slash-commands.mdx", 0): "commands without the schema's required tag `type: command` "
    "are invalid items, skipped (x-deserialize-skip-invalid-items)",
}


def _payload(example: dict[str, Any]) -> tuple[Any, Any]:
    message = example["message"]
    spec = METHODS[example["method"]]
    if "method" in message:
        return spec.params_type, message.get("params")
    return spec.result_type, message.get("result")


def _id(example: dict[str, Any]) -> str:
    return f"{example['doc']}#{example['block']}"


def test_the_fixture_has_the_v2_docs_examples() -> None:
    assert len(EXAMPLES) >= 60
    assert {e["method"] for e in EXAMPLES} >= {"initialize", "session/prompt", "session/update"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[_id(e) for e in EXAMPLES])
def test_a_v2_doc_example_parses_into_its_model_and_round_trips(example: dict[str, Any]) -> None:
    model, payload = _payload(example)
    key = (example["doc"], example["block"])
    if key in DISAGREE:
        with pytest.raises(ValueError):
            model.from_wire(payload)
        return
    parsed = model.from_wire(payload)
    assert not isinstance(getattr(parsed, "update", None), UnknownSessionUpdate), payload
    if key in DROPPED:
        assert parsed.to_wire() != payload
        return
    assert parsed.to_wire() == payload
