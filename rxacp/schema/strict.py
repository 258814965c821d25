"""Strict validation: does a message follow the schema exactly, with nothing forgiven?

rxacp's models are deliberately lenient, so that one odd field from a peer never loses a
message: an unknown ``sessionUpdate`` or content ``type`` becomes an ``Unknown*`` model, fields
marked ``x-deserialize-default-on-error`` fall back to ``None``, lists marked
``skip-invalid-items`` drop their invalid items. A test or a checker must not forgive, so:

- :func:`validate_strict` parses the params (or result) of one ACP method with its model and
  reports every validation error, every *known* tag that only parsed as an ``Unknown*`` model
  (its payload does not match its own schema), and every difference between what was sent and
  the model's serialization — i.e. what the lenient model *repaired*;
- :func:`validate_message` checks a whole JSON-RPC 2.0 message first (``jsonrpc``, ``id``,
  exactly one of ``result``/``error``, an error object's ``code`` and ``message``, no
  ``id``-less error answers) and then its params or result with :func:`validate_strict`.

Both return a list of one-line problems, empty when the message is valid. Unknown tags and
unknown fields are *not* problems (the protocol allows new variants and fields), nor are
``_``-prefixed extension methods (they have no schema).

::

    validate_strict("session/update", {"sessionId": "s", "update": {"sessionUpdate": "plan",
                                                                     "entries": [{}]}})
    # ['update.entries: 1 invalid item(s) (the lenient model skipped them)']

This module is *not* responsible for deciding what to do about a problem (the caller logs,
fails a test, or reports it), nor for message order or ids across messages.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ValidationError

from ._base import UnknownVariant, validation_errors
from .methods import METHODS

__all__ = ["validate_message", "validate_strict"]

_MAX_SHOWN = 80


@cache
def _union_tags() -> dict[str, tuple[str, frozenset[str]]]:
    """``{union name: (tag property, known tags)}`` for every tagged union of the schemas."""
    found: dict[str, tuple[str, frozenset[str]]] = {}
    for name in ("schema.json", "schema.unstable.json"):
        text = resources.files("rxacp.schema").joinpath(f"spec/{name}").read_text("utf-8")
        for union, definition in json.loads(text)["$defs"].items():
            prop, tags = None, set()
            for variant in definition.get("oneOf", []):
                for key, node in variant.get("properties", {}).items():
                    if isinstance(node, dict) and "const" in node:
                        prop = key
                        tags.add(node["const"])
            if prop is not None:
                old = found.get(union, (prop, frozenset()))[1]
                found[union] = (prop, old | frozenset(tags))
    return found


def _normalized(value: Any) -> Any:
    """JSON with ``null`` members dropped (``"x": null`` and a missing ``x`` are the same)."""
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _first_difference(sent: Any, parsed: Any, path: str) -> str:
    if isinstance(sent, dict) and isinstance(parsed, dict):
        for key in sorted(set(sent) | set(parsed)):
            if sent.get(key, ...) != parsed.get(key, ...):
                if key not in parsed:
                    return (
                        f"{_join(path, key)}: {_short(sent[key])} is not valid here "
                        "(the lenient model dropped it)"
                    )
                return _first_difference(sent.get(key), parsed.get(key), _join(path, key))
    if isinstance(sent, list) and isinstance(parsed, list):
        if len(sent) != len(parsed):
            return (
                f"{path or '.'}: {len(sent) - len(parsed)} invalid item(s) "
                "(the lenient model skipped them)"
            )
        for index, (a, b) in enumerate(zip(sent, parsed, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return f"{path or '.'}: sent {_short(sent)}, the schema-valid form is {_short(parsed)}"


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _unknown_known_tags(value: Any, path: str, problems: list[str]) -> None:
    """Report each ``Unknown*`` model in ``value`` whose tag the schema knows."""
    if isinstance(value, UnknownVariant):
        union = type(value).__name__.removeprefix("Unknown")
        entry = _union_tags().get(union)
        if entry is not None:
            prop, known = entry
            tag = value.to_wire().get(prop)
            if isinstance(tag, str) and tag in known:
                problems.append(
                    f"{path or '.'}: {prop} {tag!r} is known but its payload does not match its "
                    "schema (the lenient model kept it as an unknown variant)"
                )
        return
    if isinstance(value, BaseModel):
        for name, field in type(value).model_fields.items():
            _unknown_known_tags(getattr(value, name), _join(path, field.alias or name), problems)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _unknown_known_tags(item, f"{path}[{index}]", problems)
    elif isinstance(value, dict):
        for key, item in value.items():
            _unknown_known_tags(item, _join(path, key), problems)


def validate_strict(method: str, payload: Any, *, result: bool = False) -> list[str]:
    """Problems of ``payload`` as the params (``result=True``: the result) of ``method``.

    An empty list means the payload is valid and the lenient models repaired nothing. A method
    the schema does not know is a problem unless it is an ``_`` extension method.
    """
    spec = METHODS.get(method)
    if spec is None:
        return [] if method.startswith("_") else [f"unknown method {method!r}"]
    model = spec.result_type if result else spec.params_type
    if model is None:
        return []
    what = "result" if result else "params"
    if payload is None and not result:
        payload = {}
    if not isinstance(payload, dict):
        return [f"{what} is {type(payload).__name__}, not an object"]
    try:
        parsed = model.from_wire(payload)
    except ValidationError as exc:
        return [
            f"{what}.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            if err["loc"]
            else f"{what}: {err['msg']}"
            for err in validation_errors(exc)
        ]
    problems: list[str] = []
    _unknown_known_tags(parsed, "", problems)
    if problems:
        return problems
    sent, again = _normalized(payload), _normalized(parsed.to_wire())
    if sent != again:
        problems.append(_first_difference(sent, again, ""))
    return problems


_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_RESPONSE_KEYS = frozenset({"jsonrpc", "id", "result", "error"})


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def validate_message(message: Any, *, method: str | None = None) -> list[str]:
    """Problems of one JSON-RPC 2.0 message (a decoded JSON value), envelope then payload.

    ``method`` names the request a *response* answers, so its result can be checked too
    (without it only the envelope of a response is checked).
    """
    if not isinstance(message, dict):
        return [f"a JSON-RPC message must be an object, not {type(message).__name__}"]
    problems: list[str] = []
    if message.get("jsonrpc") != "2.0":
        problems.append(f'"jsonrpc" must be "2.0", got {_short(message.get("jsonrpc"))}')
    if "method" in message:
        name = message["method"]
        if not isinstance(name, str):
            return [*problems, f'"method" must be a string, got {_short(name)}']
        extra = set(message) - _REQUEST_KEYS
        if extra:
            problems.append(f"unexpected member(s) in a request: {', '.join(sorted(extra))}")
        if "id" in message and not _valid_id(message["id"]):
            problems.append(
                f'a request "id" must be a string or an integer, got {_short(message["id"])}'
            )
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            problems.append(f'"params" must be an object or an array, got {_short(params)}')
            return problems
        return problems + validate_strict(name, params)
    extra = set(message) - _RESPONSE_KEYS
    if extra:
        problems.append(f"unexpected member(s) in a response: {', '.join(sorted(extra))}")
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        problems.append(
            "a response must carry exactly one of result and error"
            if has_result
            else "neither a request (no method) nor a response (no result or error)"
        )
        return problems
    if "id" not in message:
        problems.append(
            'a response must carry an "id" (null only when the request\'s id could not be read)'
        )
    elif message["id"] is not None and not _valid_id(message["id"]):
        problems.append(
            f'a response "id" must be a string, an integer or null, got {_short(message["id"])}'
        )
    if has_error:
        error = message["error"]
        if not isinstance(error, dict):
            return [*problems, f'"error" must be an object, got {_short(error)}']
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            problems.append(f'"error.code" must be an integer, got {_short(code)}')
        if not isinstance(error.get("message"), str):
            problems.append(f'"error.message" must be a string, got {_short(error.get("message"))}')
        return problems
    if method is not None:
        problems.extend(validate_strict(method, message["result"], result=True))
    return problems
