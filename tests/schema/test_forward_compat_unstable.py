"""Forward compatibility with the 2.4.0 unstable schema, per new unstable type.

For every definition the unstable schema has and the stable one does not, a value of that type
is generated from the unstable schema and embedded, along the path the unstable schema gives it,
in the nearest stable message type (a new ``SessionUpdate`` variant in a ``SessionNotification``,
a new capability object in ``AgentCapabilities`` ...). The stable models, which do not know the
type, must keep it (unknown field or ``Unknown*`` variant with its raw payload) and write the
message back unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import rxacp.schema._generated as stable
from rxacp.schema import AcpModel

from ._strategies import load_schema, wire_values

STABLE: dict[str, Any] = load_schema("schema.json")["$defs"]
UNSTABLE: dict[str, Any] = load_schema("schema.unstable.json")["$defs"]
NEW = sorted(set(UNSTABLE) - set(STABLE))

# A step from a definition to a child: ("prop", parent, name, shape) puts the child under
# ``name`` (shape "one", "list" or "map"); ("variant", parent, tag_prop, tag) makes the child
# a variant of the parent union (adding its tag).
Step = tuple[str, str, str | None, str | None]


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        if "$ref" in node:
            return [str(node["$ref"]).rsplit("/", 1)[-1]]
        parts = [p for key in ("anyOf", "oneOf", "allOf") for p in node.get(key, [])]
        return [r for part in parts for r in _refs(part)]
    return []


def _edges(parent: str) -> list[tuple[str, Step]]:
    node = UNSTABLE[parent]
    out: list[tuple[str, Step]] = []
    for name, prop in node.get("properties", {}).items():
        for ref in _refs(prop):
            out.append((ref, ("prop", parent, name, "one")))
        types = prop.get("type")
        if types == "array" or (isinstance(types, list) and "array" in types):
            for ref in _refs(prop.get("items", {})):
                out.append((ref, ("prop", parent, name, "list")))
        if isinstance(prop.get("additionalProperties"), dict):
            for ref in _refs(prop["additionalProperties"]):
                out.append((ref, ("prop", parent, name, "map")))
    for variant in node.get("oneOf", []) + node.get("anyOf", []):
        tag = next(
            ((k, v["const"]) for k, v in variant.get("properties", {}).items() if "const" in v),
            (None, None),
        )
        for ref in _refs(variant):
            out.append((ref, ("variant", parent, tag[0], tag[1])))
    return out


# JSON-RPC envelopes: their ``params``/``result`` is "any JSON" to the stable models, and an
# unknown method is answered -32601 rather than parsed, so they carry nothing.
ENVELOPES = {
    "ClientRequest",
    "AgentRequest",
    "ClientNotification",
    "AgentNotification",
    "ClientResponse",
    "AgentResponse",
    "ProxyRequest",
    "ProxyResponse",
    "ProxyNotification",
}


def _path_to_stable(target: str, through_envelopes: bool = False) -> list[Step] | None:
    """Steps from the nearest definition both schemas share down to ``target``."""
    parents: dict[str, list[tuple[str, Step]]] = {}
    for parent in UNSTABLE:
        if parent in ENVELOPES and not through_envelopes:
            continue
        for child, step in _edges(parent):
            parents.setdefault(child, []).append((parent, step))
    queue: list[tuple[str, list[Step]]] = [(target, [])]
    seen = {target}
    while queue:
        name, path = queue.pop(0)
        for parent, step in sorted(parents.get(name, []), key=lambda e: (e[1][0] != "prop", e[0])):
            if parent in seen:
                continue
            if parent in STABLE:
                return [step, *path]
            seen.add(parent)
            queue.append((parent, [step, *path]))
    return None


CARRIED = {name: path for name in NEW if (path := _path_to_stable(name)) is not None}


def _embed(data: st.DataObject, child: Any, path: list[Step]) -> Any:
    value = child
    for kind, parent, key, extra in reversed(path):
        if kind == "variant":
            if key is not None and isinstance(value, dict):
                value = {**value, key: extra}
            continue
        holder = data.draw(
            wire_values(UNSTABLE, UNSTABLE[parent]).filter(lambda v: isinstance(v, dict))
        )
        assert key is not None
        holder = dict(holder)
        holder[key] = [value] if extra == "list" else {"k": value} if extra == "map" else value
        value = holder
    return value


def test_every_new_type_is_tested_unless_only_an_unstable_method_carries_it() -> None:
    # The rest occur only in the params/results of unstable-only methods (or proxy traffic):
    # a peer that does not know the method answers -32601 instead of parsing them.
    for name in sorted(set(NEW) - set(CARRIED)):
        path = _path_to_stable(name, through_envelopes=True)
        assert path is None or path[0][1] in ENVELOPES, (name, path)
    assert {"SubagentUpdate", "StateUpdate", "PlanUpdate", "SessionArchiveCapabilities"} <= set(
        CARRIED
    )


@pytest.mark.parametrize("name", sorted(CARRIED))
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_new_unstable_type_round_trips_unchanged_through_the_stable_models(
    name: str, data: st.DataObject
) -> None:
    path = CARRIED[name]
    child = data.draw(wire_values(UNSTABLE, UNSTABLE[name]))
    wire = _embed(data, child, path)
    carrier = path[0][1]
    target = getattr(stable, carrier)
    if isinstance(target, type) and issubclass(target, AcpModel):
        assert target.from_wire(wire).to_wire() == wire
    else:
        adapter: TypeAdapter[Any] = TypeAdapter(target)
        value = adapter.validate_python(wire, by_alias=True, by_name=False)
        out = value.to_wire() if isinstance(value, AcpModel) else value
        assert out == wire
