"""Strict validation of what an agent sends, for ``rxacp check``.

rxacp's models are deliberately forgiving (an unknown ``sessionUpdate`` becomes
``UnknownSessionUpdate``; fields marked ``x-deserialize-default-on-error`` /
``skip-invalid-items`` in the schema fall back to defaults). A checker must not forgive, so
:func:`check_update` applies :func:`rxacp.schema.strict.validate_strict` (the public strict
validator): a *known* ``sessionUpdate`` tag must parse into its own model (not the unknown
fallback), and the model must serialize back to the same JSON (a lenient fallback that changed
the payload is a failure). Unknown tags are accepted: the protocol allows new variants.

This module is *not* responsible for running an agent or reporting (see :mod:`.check`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..schema.methods import SESSION_UPDATE
from ..schema.strict import validate_strict

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


def check_update(params: Any) -> str | None:
    """None if ``params`` is a valid ``session/update``; else what is wrong (one line).

    The rules are :func:`rxacp.schema.strict.validate_strict`'s (the first problem is shown).
    """
    problems = validate_strict(SESSION_UPDATE, params)
    return problems[0] if problems else None
