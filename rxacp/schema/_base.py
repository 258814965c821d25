"""Base model and validation helpers shared by every generated ACP schema model.

This module is hand-written. It defines :class:`AcpModel` (wire naming, forward-compatible
extra fields, ``to_wire``/``from_wire``) and the small field-level helpers the generated code
uses: lenient fields (``x-deserialize-default-on-error``), required lists that read ``null`` as
``[]`` (``x-deserialize-default-on-null``), list fields that drop invalid items
(``x-deserialize-skip-invalid-items``) and the callable discriminator that routes unknown union
tags to a generic model.

It is NOT responsible for the models themselves (see ``_generated.py``), for JSON-RPC envelopes,
or for any I/O.
"""

# No ``from __future__ import annotations``: the typed ``__pydantic_extra__`` below must be an
# evaluated annotation, since pydantic < 2.13 resolves it in each subclass's module namespace.

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Final, Self, TypeAlias, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.version import VERSION as PYDANTIC_VERSION
from pydantic_core import CoreSchema, to_json

__all__ = [
    "MAX_VALIDATION_ERRORS",
    "UNKNOWN_TAG",
    "AcpModel",
    "EmptyListOnError",
    "EmptyListOnNull",
    "NoneOnError",
    "Patch",
    "PatchModel",
    "SkipInvalidItems",
    "UnknownVariant",
    "positional_error",
    "tag_discriminator",
    "unknown_on_error",
    "validation_errors",
]

_DEFER_BUILD: Final = tuple(int(p) for p in PYDANTIC_VERSION.split(".")[:2]) >= (2, 14)
"""Defer model building only where pydantic makes the first (lazy) build thread-safe.

Before 2.14, a model being rebuilt in one thread could be validated with its base class's
validator in another; sync handlers run on worker threads, so older versions build eagerly.
"""

UNKNOWN_TAG: Final = "__unknown__"
"""Pydantic ``Tag`` used for the generic variant that receives unknown discriminator values."""

_MISSING: Final = object()

_null_extras: Final = [False]
"""Set once any model got an unknown field whose value is an explicit ``null``.

``exclude_none`` would drop such a value on the way out; until one has been seen, to_wire skips
the walk that puts them back (a per-model serializer hook cost 3x the dump itself).
"""


def _note_null_extra(value: Any) -> Any:
    if value is None:
        _null_extras[0] = True
    return value


def _restore_null_extras(value: Any, data: Any) -> None:
    """Put back the explicit-null unknown fields that ``exclude_none`` removed from ``data``."""
    if isinstance(value, BaseModel):
        if not isinstance(data, dict):
            return
        extra = value.__pydantic_extra__
        if extra:
            for key, item in extra.items():
                if item is None:
                    data[key] = None
        if isinstance(value, PatchModel):
            fields_set = value.__pydantic_fields_set__
            for attr, wire in value._patch_fields:
                if attr in fields_set and getattr(value, attr) is None:
                    data[wire] = None
        for name, field in type(value).__pydantic_fields__.items():
            key = field.serialization_alias or field.alias or name
            if key in data:
                _restore_null_extras(getattr(value, name), data[key])
    elif isinstance(value, list | tuple) and isinstance(data, list):
        for item, out in zip(value, data, strict=False):
            _restore_null_extras(item, out)
    elif isinstance(value, dict) and isinstance(data, dict):
        for key, item in value.items():
            if key in data:
                _restore_null_extras(item, data[key])


_SUB_SCHEMAS: Final = ("schema", "items_schema", "keys_schema", "values_schema", "choices")


_WRAPPERS = frozenset(("function-wrap", "function-before", "function-after"))
"""Core schema kinds a model validator wraps the model's own schema in."""


def _fail_fast(schema: Any) -> None:
    """Set ``fail_fast`` on every ``list`` schema of one model's own core schema.

    Without it pydantic records one error per invalid item (about 340 bytes each, more for
    union items): one 8 MiB line of a million tiny invalid blocks took the reference agent to
    +2.8 GiB and answered a 99 MiB ``-32602``. With it a list stops at its first invalid item,
    so the error count of any value is bounded by the schema, not by the input. Nested models
    are not entered (each gets this hook itself); only keys holding sub-schemas are followed.
    """
    own = schema  # the model's own node: inside its validators' wrappers (v2 PatchModel)
    while (
        isinstance(own, dict)
        and own.get("type") in _WRAPPERS
        and isinstance(own.get("schema"), dict)
    ):
        own = own["schema"]
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, list | tuple):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if kind == "list":
            node["fail_fast"] = True
        elif kind == "model" and node is not schema and node is not own:
            continue
        for key in _SUB_SCHEMAS:
            child = node.get(key)
            if isinstance(child, dict) and "type" not in child:
                pending.extend(child.values())  # tagged-union choices: tag -> schema
            elif child is not None:
                pending.append(child)
        if kind == "model-fields":
            pending.extend(node["fields"].values())


class AcpModel(BaseModel):
    """Base class of every ACP schema model.

    - Python attributes are snake_case, wire names camelCase; ``_meta`` is the attribute ``meta``.
    - Construct with Python names (``PromptRequest(session_id=..., prompt=[...])``); wire names
      are accepted too.
    - Unknown fields are kept (``model_extra``) and written back unchanged by :meth:`to_wire`.
    - Use :meth:`to_wire` / :meth:`from_wire` at the protocol boundary. ``model_dump`` and
      ``model_dump_json`` already default to wire names; with ``exclude_none=True`` they match
      :meth:`to_wire` except that they also drop unknown fields received as explicit ``null``.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="allow",
        arbitrary_types_allowed=False,
        # Core schemas are built on a model's first use, not at import: a process that speaks
        # a few methods builds a few dozen of the ~270 models (cold start). pydantic >= 2.14
        # serializes the deferred build with a lock; see _DEFER_BUILD.
        defer_build=_DEFER_BUILD,
    )

    # Extra (unknown) values pass this validator, which notices explicit nulls (see to_wire).
    __pydantic_extra__: dict[str, Annotated[Any, AfterValidator(_note_null_extra)]] = Field(
        init=False
    )

    def __init__(self, /, *args: Any, **data: Any) -> None:
        """Validate keyword arguments (Python or wire names) into the model.

        Records are keyword-only: a positional call (a literal port of Java's
        ``new InitializeResponse(1, caps, methods)``) raises a ``TypeError`` that names the
        fields in order. The keyword path is pydantic's own ``__init__`` body, at its cost.
        """
        __tracebackhide__ = True
        if args:
            raise positional_error(type(self), len(args))
        self.__pydantic_validator__.validate_python(data, self_instance=self)

    # pydantic routes every validation of a model with a custom ``__init__`` through that
    # ``__init__`` (nested models and ``from_wire`` included: +60 % on a 20-block prompt);
    # this one only adds the positional check, so it is marked as the base one. Pinned by
    # tests/schema/test_keyword_only.py.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """Every list of the model stops at its first invalid item (see :func:`_fail_fast`)."""
        schema = handler(source)
        _fail_fast(schema)
        return schema

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-compatible wire form: camelCase names, ``None`` fields omitted.

        Unknown (extra) fields are preserved exactly as received, explicit ``null`` values
        included (``exclude_none`` only drops *declared* optional fields that are unset).
        """
        result: dict[str, Any] = self.__pydantic_serializer__.to_python(
            self, mode="json", by_alias=True, exclude_none=True
        )
        if _null_extras[0]:
            _restore_null_extras(self, result)
        return result

    def to_wire_json(self) -> str:
        """Return :meth:`to_wire` as a compact JSON string (non-ASCII kept as is)."""
        if _null_extras[0]:
            return to_json(self.to_wire()).decode()
        return self.model_dump_json(by_alias=True, exclude_none=True)

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        """Validate a wire value (a ``dict`` or an instance) into this model.

        Only wire (camelCase) names are matched, so a snake_case key sent by a peer stays an
        unknown field instead of silently filling a declared one. ``None`` (a JSON ``null``
        result of an empty response, e.g. ``fs/write_text_file``) is read as ``{}``.

        Raises:
            pydantic.ValidationError: the value does not match the schema.
        """
        return cls.model_validate({} if data is None else data, by_alias=True, by_name=False)

    @classmethod
    def from_wire_json(cls, data: str | bytes) -> Self:
        """Parse a JSON document into this model (see :meth:`from_wire`)."""
        return cls.model_validate_json(data, by_alias=True, by_name=False)


def positional_error(cls: type[BaseModel], given: int) -> TypeError:
    """The ``TypeError`` of a positional call: the model's fields in declaration order, the
    required ones marked ``*`` (Java's record component order may differ; see
    ``docs/migration-from-java.md``, "Records")."""
    fields = ", ".join(
        f"{name}*" if field.is_required() else name
        for name, field in cls.__pydantic_fields__.items()
    )
    return TypeError(
        f"{cls.__name__} takes keyword arguments only, got {given} positional; "
        f"its fields in order (* required): {fields}"
    )


_T = TypeVar("_T")

Patch: TypeAlias = Annotated[_T | None, "patch"]
"""A three-state patch field (ACP v2 upserts): omitted = unchanged, ``None`` = clear, value =
replace.

The field's value is ``None`` both when it was omitted and when it was cleared; the two differ
in ``model.model_fields_set`` (a cleared field is in it). :meth:`AcpModel.to_wire` writes an
explicitly set ``None`` as ``null`` and leaves an omitted field out, so wire -> model -> wire
keeps the difference. ``rxacp.schema.v2.patch_state`` reads it.
"""


class PatchModel(AcpModel):
    """Base of the models that have :data:`Patch` fields (the v2 schema's nullable fields).

    ``_patch_fields`` (generated) lists them as ``(attribute, wire name)``. An explicit ``null``
    (or ``None`` given to the constructor) is kept as "clear"; a malformed value of a lenient
    patch field (``x-deserialize-default-on-error``) reads as omitted, not as clear.
    """

    _patch_fields: ClassVar[tuple[tuple[str, str], ...]] = ()

    @model_validator(mode="wrap")
    @classmethod
    def _explicit_nulls(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, PatchModel):
            fields_set = model.__pydantic_fields_set__
            for attr, wire in cls._patch_fields:
                if attr in fields_set and getattr(model, attr) is None:
                    raw = data.get(wire, data.get(attr))
                    if raw is None:
                        _null_extras[0] = True  # to_wire puts this null back
                    else:
                        fields_set.discard(attr)  # a malformed value: not reported
        return model


class UnknownVariant(AcpModel):
    """Base of the generic ``Unknown*`` union variants (unknown or malformed tagged values).

    The whole raw payload lives in the model's extra fields and is written back unchanged.
    A union tries its known variants first (pydantic's tagged union) and this model last; a
    subclass with ``_refused_tags`` refuses a payload carrying one of those known tags, so a
    malformed known variant stays a validation error instead of passing as unknown.
    """

    _tag_wire: ClassVar[str] = ""
    _refused_tags: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _refuse_known_tags(cls, value: Any) -> Any:
        if cls._refused_tags and isinstance(value, dict):
            tag = value.get(cls._tag_wire)
            if isinstance(tag, str) and tag in cls._refused_tags:
                raise ValueError(f"{cls._tag_wire} {tag!r} is known: its own fields must be valid")
        return value


def _none_on_error(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return None


def _empty_list_on_error(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return []


def _skip_invalid_items(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if not isinstance(value, list):
        return handler(value)
    try:
        return handler(value)
    except ValidationError as exc:
        first = _first_invalid_index(exc)
        if first is None:
            raise
    # Lists stop at their first invalid item (see _fail_fast): keep the valid prefix, then
    # validate the rest one item at a time (linear, and each error is dropped at once).
    kept: list[Any] = handler(value[:first]) if first else []
    for item in value[first + 1 :]:
        try:
            kept.extend(handler([item]))
        except ValidationError:
            continue
    return kept


def _first_invalid_index(exc: ValidationError) -> int | None:
    for err in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = err["loc"]
        if loc and isinstance(loc[0], int):
            return loc[0]
    return None


NoneOnError: Final = WrapValidator(_none_on_error)
"""``x-deserialize-default-on-error`` for optional fields: an invalid value becomes ``None``."""

EmptyListOnError: Final = WrapValidator(_empty_list_on_error)
"""``x-deserialize-default-on-error`` for required list fields: an invalid value becomes ``[]``."""

EmptyListOnNull: Final = BeforeValidator(lambda value: [] if value is None else value)
"""``x-deserialize-default-on-null`` for required list fields: ``null`` reads as ``[]``."""

SkipInvalidItems: Final = WrapValidator(_skip_invalid_items)
"""``x-deserialize-skip-invalid-items``: list items that fail validation are dropped."""


def tag_discriminator(
    wire_name: str, attr_name: str, known: frozenset[str], default: str | None = None
) -> Callable[[Any], str]:
    """Build a pydantic callable discriminator for a tagged union.

    Returns the tag for known values, ``default`` (the tag of the variant used when the tag is
    absent) when the tag is missing, and :data:`UNKNOWN_TAG` otherwise, so unknown variants are
    parsed into the union's generic ``Unknown*`` model instead of failing.
    """
    fallback = default if default is not None else UNKNOWN_TAG

    def discriminate(value: Any) -> str:
        if isinstance(value, dict):
            tag = value.get(wire_name, _MISSING)
        elif isinstance(value, UnknownVariant):
            return UNKNOWN_TAG
        else:
            tag = getattr(value, attr_name, _MISSING)
            if tag is _MISSING and isinstance(value, BaseModel) and value.model_extra:
                tag = value.model_extra.get(wire_name, _MISSING)
        if tag is _MISSING:
            return fallback
        if isinstance(tag, str) and tag in known:
            return tag
        return UNKNOWN_TAG

    return discriminate


def unknown_on_error(unknown: type[AcpModel]) -> Callable[[Any, ValidatorFunctionWrapHandler], Any]:
    """Wrap-validator body: a union value that fails validation becomes ``unknown`` (raw kept).

    Used for unions whose values arrive in notifications (``SessionUpdate``): a known tag with a
    malformed payload is kept as the generic model instead of failing the whole message. Values
    that do not even fit ``unknown`` (no string tag) still raise the original error.
    """

    def validate(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            if isinstance(value, dict):
                try:
                    return unknown.model_validate(value, by_alias=True, by_name=False)
                except ValidationError:
                    pass
            raise

    return validate


MAX_VALIDATION_ERRORS: Final = 20
"""Most error entries :func:`validation_errors` returns (a last entry counts the rest)."""


def validation_errors(
    exc: ValidationError, limit: int = MAX_VALIDATION_ERRORS
) -> list[dict[str, Any]]:
    """``exc.errors()`` without URLs, context or input, and with union plumbing removed.

    A union tries its known variants (pydantic's tagged union) and then its ``Unknown*`` model;
    when both fail, the error of the known variant is the one that explains the problem. This
    drops the ``Unknown*`` branch's errors and the ``tagged-union[...]`` location segments, so
    a location reads ``prompt.0.text.text`` (field path with the variant's tag).

    At most ``limit`` entries are returned; when there were more, one more entry of type
    ``too_many_errors`` says how many were left out (the list goes on the wire as ``data``).
    Lists stop at their first invalid item, so the count is per list item, not per item.
    """
    kept = _kept_errors(exc, include_input=False)
    if len(kept) > limit:
        left_out = len(kept) - limit
        kept = kept[:limit]
        kept.append(
            {"type": "too_many_errors", "loc": (), "msg": f"{left_out} more error(s) not listed"}
        )
    return kept


def _kept_errors(exc: ValidationError, *, include_input: bool) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = [
        dict(err)
        for err in exc.errors(include_url=False, include_context=False, include_input=include_input)
    ]
    unknown = _unknown_names()
    kept = [e for e in errors if not any(p in unknown for p in e["loc"])] or errors
    for err in kept:
        err["loc"] = tuple(
            p for p in err["loc"] if not (isinstance(p, str) and p.startswith("tagged-union["))
        )
    return kept


def first_invalid(exc: ValidationError) -> str:
    """The first problem of ``exc`` for a local message: the field path, what is wrong and
    what was sent (a bounded prefix), e.g. ``protocolVersion: Input should be a valid integer
    (sent 'one')``, plus how many more problems there are."""
    from ..errors import peer_echo

    kept = _kept_errors(exc, include_input=True)
    if not kept:
        return "invalid"
    first = kept[0]
    where = ".".join(str(p) for p in first["loc"]) or "the value"
    text = f"{peer_echo(where, quote=False)}: {first['msg']}"
    if "input" in first and first["type"] != "missing":
        text += f" (sent {peer_echo(first['input'])})"
    if len(kept) > 1:
        text += f"; {len(kept) - 1} more problem(s)"
    return text


def _unknown_names() -> frozenset[str]:
    names: set[str] = set()
    pending: list[type[Any]] = [UnknownVariant]
    while pending:
        for sub in pending.pop().__subclasses__():
            names.add(sub.__name__)
            pending.append(sub)
    return frozenset(names)
