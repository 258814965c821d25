"""Property tests: for wire values generated from the JSON Schema, wire -> model -> wire and
model -> wire -> model are identities, for every stable $def (and the unstable ones)."""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import rxacp.schema._generated as stable
import rxacp.schema.unstable._generated as unstable_gen
from rxacp.schema import AcpModel

from ._strategies import load_schema, wire_values

STABLE_DEFS: dict[str, Any] = load_schema("schema.json")["$defs"]
UNSTABLE_DEFS: dict[str, Any] = load_schema("schema.unstable.json")["$defs"]
_ADAPTERS: dict[tuple[str, str], TypeAdapter[Any]] = {}


def _to_wire(value: Any) -> Any:
    if isinstance(value, AcpModel):
        return value.to_wire()
    if isinstance(value, list):
        return [_to_wire(v) for v in value]
    return value


def _tag_defaults(model: type[AcpModel]) -> dict[str, Any]:
    """Discriminator tags a variant model always writes (``type: "text"`` ...)."""
    tags: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) is Literal and get_args(info.annotation) == (info.default,):
            tags[info.alias or name] = info.default
    return tags


def _check(module: Any, name: str, wire: Any) -> None:
    target = getattr(module, name)
    if isinstance(target, type) and issubclass(target, AcpModel):
        model: Any = target.from_wire(wire)
        wire = {**_tag_defaults(target), **wire}
        assert model.to_wire() == wire
        assert target.from_wire(model.to_wire()) == model
        assert target.from_wire_json(model.to_wire_json()) == model
        return
    key = (module.__name__, name)
    adapter = _ADAPTERS.get(key) or _ADAPTERS.setdefault(key, TypeAdapter(target))
    value = adapter.validate_python(wire, by_alias=True, by_name=False)
    assert _to_wire(value) == wire
    assert adapter.validate_python(_to_wire(value), by_alias=True, by_name=False) == value


def _cases(defs: dict[str, Any]) -> st.SearchStrategy[tuple[str, Any]]:
    return st.one_of([st.tuples(st.just(n), wire_values(defs, defs[n])) for n in sorted(defs)])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases(STABLE_DEFS))
def test_stable_models_round_trip_generated_wire_values(case: tuple[str, Any]) -> None:
    name, wire = case
    _check(stable, name, wire)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases(UNSTABLE_DEFS))
def test_unstable_models_round_trip_generated_wire_values(case: tuple[str, Any]) -> None:
    name, wire = case
    _check(unstable_gen, name, wire)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    update=wire_values(STABLE_DEFS, STABLE_DEFS["SessionUpdate"]),
    extra=st.dictionaries(
        st.text(min_size=1, max_size=5).map(lambda s: "x_" + s),
        st.integers() | st.none(),
        max_size=2,
    ),
)
def test_session_updates_with_extra_fields_round_trip(
    update: dict[str, Any], extra: dict[str, Any]
) -> None:
    wire = {"sessionId": "s", "update": {**update, **extra}, **extra}
    notification = stable.SessionNotification.from_wire(wire)
    assert notification.to_wire() == wire
