"""Hypothesis strategies that generate valid ACP wire values straight from the JSON Schema.

Test support only. Generated values never contain explicit nulls for optional fields (omitted and
null are equivalent in ACP, and the SDK writes omission), nor values for open "other" variants
(those are covered by the forward-compatibility tests).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

__all__ = ["SPEC_DIR", "load_schema", "wire_values"]

SPEC_DIR = Path(__file__).resolve().parents[2] / "rxacp" / "schema" / "spec"

_JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_TEXT = st.text(max_size=12)  # includes non-ASCII and surrogate-free unicode


_CACHE: dict[tuple[int, str, int], st.SearchStrategy[Any]] = {}


def load_schema(name: str) -> dict[str, Any]:
    """The parsed JSON Schema document ``name`` from the package's spec directory."""
    result: dict[str, Any] = json.loads((SPEC_DIR / name).read_text(encoding="utf-8"))
    return result


def _ref(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).rsplit("/", 1)[-1]
    return None


def _is_open_other(variant: dict[str, Any]) -> bool:
    return "not" in variant or variant.get("title") == "other"


def wire_values(
    defs: dict[str, Any], node: dict[str, Any], depth: int = 0
) -> st.SearchStrategy[Any]:
    """A strategy for valid wire values of schema ``node`` (``defs`` resolves ``$ref``)."""
    ref = _ref(node)
    if ref is not None and "properties" not in node:
        key = (id(defs), ref, min(depth + 1, 7))
        cached = _CACHE.get(key)
        if cached is None:
            target = defs[ref]
            cached = st.deferred(lambda: wire_values(defs, target, key[2]))
            _CACHE[key] = cached
        return cached
    if "const" in node:
        return st.just(node["const"])
    variants = node.get("oneOf") or node.get("anyOf")
    if variants is not None:
        usable = [v for v in variants if v.get("type") != "null" and not _is_open_other(v)]
        if "properties" in node or all("properties" in v or "allOf" in v for v in usable):
            return st.one_of([_object(defs, node, v, depth) for v in usable])
        return st.one_of([wire_values(defs, v, depth + 1) for v in usable])
    if "properties" in node or "allOf" in node:
        return _object(defs, node, None, depth)
    typ = node.get("type")
    if isinstance(typ, list):
        typ = next(t for t in typ if t != "null")
    if typ == "string":
        return _TEXT
    if typ == "integer":
        fmt = str(node.get("format", ""))
        bits = int(fmt[4:]) if fmt.startswith("uint") and fmt[4:].isdigit() else None
        lo = node.get("minimum", -(2**63) if bits is None else 0)
        hi = node.get("maximum", 2**63 - 1 if bits is None else 2**bits - 1)
        return st.integers(min_value=int(lo), max_value=int(hi))
    if typ == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=64)
    if typ == "boolean":
        return st.booleans()
    if typ == "array":
        items = node.get("items")
        if depth > 6 or not isinstance(items, dict):
            return st.just([])
        return st.lists(wire_values(defs, items, depth + 1), max_size=2)
    if typ == "object":
        ap = node.get("additionalProperties")
        if isinstance(ap, dict):
            if depth > 6:
                return st.just({})
            return st.dictionaries(_TEXT, wire_values(defs, ap, depth + 1), max_size=2)
        return st.dictionaries(st.text(max_size=6), _JSON, max_size=2)
    # Untyped ("any JSON") fields: a top-level null means "absent" and is written as omission.
    return _JSON.filter(lambda v: v is not None)


def _collect(defs: dict[str, Any], node: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    props: dict[str, Any] = dict(node.get("properties", {}))
    required = set(node.get("required", []))
    for part in node.get("allOf", []):
        ref = _ref(part)
        sub_props, sub_req = _collect(defs, defs[ref] if ref else part)
        for key, value in sub_props.items():
            props.setdefault(key, value)
        required |= sub_req
    return props, required


def _object(
    defs: dict[str, Any], node: dict[str, Any], variant: dict[str, Any] | None, depth: int
) -> st.SearchStrategy[Any]:
    props, required = _collect(defs, {k: v for k, v in node.items() if k not in ("oneOf", "anyOf")})
    if variant is not None:
        vprops, vreq = _collect(defs, variant)
        nested = variant.get("oneOf") or variant.get("anyOf")
        if nested:  # e.g. the session/request scope of elicitation modes: pick the first
            first = next(v for v in nested if not _is_open_other(v))
            nprops, nreq = _collect(defs, first)
            vprops = {**vprops, **nprops}
            vreq |= nreq
        ref = _ref(variant)
        if ref is not None:
            inner = defs[ref]
            inner_nested = inner.get("oneOf") or inner.get("anyOf")
            if inner_nested and "properties" in inner:
                first = next(v for v in inner_nested if not _is_open_other(v))
                nprops, nreq = _collect(defs, first)
                vprops = {**vprops, **nprops}
                vreq |= nreq
        props = {**props, **vprops}
        required |= vreq
    if depth > 6:
        props = {k: v for k, v in props.items() if k in required}
    req = {k: wire_values(defs, v, depth + 1) for k, v in props.items() if k in required}
    opt = {k: wire_values(defs, v, depth + 1) for k, v in props.items() if k not in required}
    return st.fixed_dictionaries(req, optional=opt)
