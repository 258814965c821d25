"""Strict validation of what an agent sends, for ``rxacp check``.

rxacp's models are deliberately forgiving (an unknown ``sessionUpdate`` becomes
``UnknownSessionUpdate``; fields marked ``x-deserialize-default-on-error`` /
``skip-invalid-items`` in the schema fall back to defaults). A checker must not forgive, so
:func:`check_update` parses with :class:`~rxacp.schema.SessionNotification` and then requires:
a *known* ``sessionUpdate`` tag must parse into its own model (not the unknown fallback), and the
model must serialize back to the same JSON (a lenient fallback that changed the payload is a
failure). Unknown tags are accepted: the protocol allows new variants.

This module is *not* responsible for running an agent or reporting (see :mod:`.check`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from pydantic import ValidationError

from ..schema import SessionNotification, UnknownSessionUpdate
from ..schema._base import validation_errors

__all__ = ["KNOWN_STOP_REASONS", "KNOWN_UPDATE_TAGS", "check_update"]


def _schema_defs() -> dict[str, Any]:
    text = resources.files("rxacp.schema").joinpath("spec/schema.json").read_text("utf-8")
    defs: dict[str, Any] = json.loads(text)["$defs"]
    return defs


def _consts(definition: dict[str, Any], prop: str | None = None) -> frozenset[str]:
    values = set()
    for variant in definition.get("oneOf", []):
        node = variant.get("properties", {}).get(prop, {}) if prop else variant
        if "const" in node:
            values.add(node["const"])
    return frozenset(values)


_DEFS = _schema_defs()
KNOWN_STOP_REASONS: frozenset[str] = _consts(_DEFS["StopReason"])
"""The ``StopReason`` values of the stable schema."""
KNOWN_UPDATE_TAGS: frozenset[str] = _consts(_DEFS["SessionUpdate"], "sessionUpdate")
"""The ``sessionUpdate`` tags of the stable schema."""


def _normalized(value: Any) -> Any:
    """JSON with ``null`` members dropped (``"x": null`` and a missing ``x`` are the same)."""
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, ...) != b.get(key, ...):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path or '.'}: sent {json.dumps(a)[:80]}, schema-valid form {json.dumps(b)[:80]}"


def check_update(params: Any) -> str | None:
    """None if ``params`` is a valid ``session/update``; else what is wrong (one line)."""
    if not isinstance(params, dict):
        return f"params is {type(params).__name__}, not an object"
    try:
        note = SessionNotification.from_wire(params)
    except ValidationError as exc:
        first = validation_errors(exc)[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"invalid SessionNotification at {where}: {first['msg']}"
    update = params.get("update")
    tag = update.get("sessionUpdate") if isinstance(update, dict) else None
    if isinstance(note.update, UnknownSessionUpdate):
        if tag in KNOWN_UPDATE_TAGS:
            return f"sessionUpdate {tag!r} has a payload that does not match its schema"
        return None  # a variant this schema does not know: allowed (forward compatible)
    sent, parsed = _normalized(params), _normalized(note.to_wire())
    if sent != parsed:
        return f"{tag}: {_first_difference(sent, parsed)}"
    return None
