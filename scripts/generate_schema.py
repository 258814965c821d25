"""Generate the rxacp ACP schema models from the protocol's JSON Schema.

Reads ``rxacp/schema/spec/schema.json`` and ``schema.unstable.json`` and writes
``_generated.py`` (stable) and ``unstable/_generated.py`` (unstable, an overlay: it imports every
stable definition whose structure is unchanged and defines only the changed and new ones); the
same for ACP v2 from ``spec/v2/`` into ``v2/_generated.py`` and ``v2/unstable/_generated.py``
(profile ``PROFILES[2]``: its nullable optional fields are three-state ``Patch`` fields).
Output is deterministic and formatted with ``ruff format`` so that the regeneration test can
compare it byte for byte with the checked-in files.

Usage::

    python scripts/generate_schema.py            # writes into rxacp/schema/
    python scripts/generate_schema.py --out DIR  # writes DIR/_generated.py, DIR/unstable/...

Not responsible for: the method table (hand-written, ``_method_table.py``), factories
(``_factories.py``) or Java-style aliases (``helpers.py``). It does write ``_exports.py``: which
module of the stable package defines each name of ``rxacp.schema.__all__`` (read from the
``__all__`` lists of ``_generated.py``, ``helpers.py`` and ``methods.py``), so that
``import rxacp.schema`` imports no model until one is used (cold start).

Mapping rules (JSON Schema -> Python):

- object with ``properties`` -> ``class X(AcpModel)``; optional fields default to ``None``
  (schema defaults are documented, not materialised, so wire -> model -> wire is identity).
- object with ``properties`` plus ``oneOf``/``anyOf`` (serde-flattened enums), or an untagged
  union of inline objects -> one merged model whose variant-specific fields are optional.
- tagged union (variants carry a ``const`` tag) -> ``TypeAlias`` of an annotated union with a
  callable discriminator; each variant is a model whose tag field has a default; unknown tags
  go to ``Unknown<Union>`` which keeps the raw payload.
- string enums (``const`` strings, possibly with an open ``other``) -> a ``StrEnum``; fields of
  that type are ``Name | str`` (members or any string). Tagged unions also get ``<Union>Kind``.
- unsigned integers (``format: uintN``) and ``minimum``/``maximum`` -> ``Annotated[int, Field(ge=,
  le=)]``.
- everything else -> a ``TypeAlias``.
"""

from __future__ import annotations

import argparse
import ast
import json
import keyword
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PKG = ROOT / "rxacp" / "schema"
SPEC_DIR = SCHEMA_PKG / "spec"

__all__ = ["PROFILES", "Profile", "generate", "main"]

# Marks a field annotation in a block's source until the module order is known (render()).
ANN_OPEN, ANN_CLOSE = "\x01", "\x02"

# Names for union variants that are not $defs of their own (or whose $def is shared).
VARIANT_NAMES: dict[tuple[str, str], str] = {
    ("SessionUpdate", "tool_call_update"): "ToolCallUpdateNotification",
    ("RequestPermissionOutcome", "cancelled"): "CancelledPermissionOutcome",
}

# Unions where a KNOWN tag with an invalid payload degrades to the Unknown* model (raw payload
# kept) instead of failing: notifications cannot be answered with an error, so a malformed
# update must not take the whole stream down.
LENIENT_UNIONS = {"SessionUpdate"}

# Hand-written factory mixins (rxacp/schema/_factories.py) mixed into generated classes.
FACTORY_MIXINS: dict[str, str] = {
    "InitializeRequest": "InitializeRequestFactories",
    "InitializeResponse": "InitializeResponseFactories",
    "PromptRequest": "PromptRequestFactories",
    "PromptResponse": "PromptResponseFactories",
    "RequestPermissionResponse": "RequestPermissionResponseFactories",
    "SessionNotification": "SessionNotificationFactories",
    "NewSessionRequest": "NewSessionRequestFactories",
    "SetSessionConfigOptionRequest": "SetSessionConfigOptionRequestFactories",
    "CreateElicitationRequest": "CreateElicitationRequestFactories",
    "CreateElicitationResponse": "CreateElicitationResponseFactories",
    "ClientCapabilities": "ClientCapabilitiesFactories",
}

# Names for the v2 union variants that are not $defs of their own (v2 names its own variants;
# `tool_call_update` keeps the v1 Java name).
VARIANT_NAMES_V2: dict[tuple[str, str], str] = {
    ("SessionUpdate", "tool_call_update"): "ToolCallUpdateNotification",
    ("SessionUpdate", "state_update"): "SessionStateUpdate",
    ("StateUpdate", "idle"): "IdleState",
}

# Hand-written factory mixins of the v2 models (rxacp/schema/v2/_factories.py).
FACTORY_MIXINS_V2: dict[str, str] = {
    "InitializeRequest": "InitializeRequestFactories",
    "InitializeResponse": "InitializeResponseFactories",
    "PromptRequest": "PromptRequestFactories",
    "RequestPermissionResponse": "RequestPermissionResponseFactories",
}


@dataclass(frozen=True)
class Profile:
    """One protocol version's generation: where its schemas are and where its modules go."""

    version: int
    spec: Path  # directory holding schema.json and schema.unstable.json
    out: Path  # package directory (relative to the output root) of the stable module
    variant_names: dict[tuple[str, str], str]
    factory_mixins: dict[str, str]
    # v2: a non-required field whose schema allows `null` is a three-state patch field
    # (omitted = unchanged, `null` = clear, value = replace): an explicit `null` is kept.
    patch_fields: bool = False
    capabilities: bool = False  # also write _capabilities.py (v1 only)

    def module(self, rel: str) -> str:
        parts = ["rxacp", "schema", *self.out.parts, rel]
        return ".".join(p for p in parts if p)


PROFILES: dict[int, Profile] = {
    1: Profile(1, SPEC_DIR, Path(), VARIANT_NAMES, FACTORY_MIXINS, capabilities=True),
    2: Profile(
        2, SPEC_DIR / "v2", Path("v2"), VARIANT_NAMES_V2, FACTORY_MIXINS_V2, patch_fields=True
    ),
}

BASE_MODEL_ATTRS = {
    "copy",
    "dict",
    "json",
    "schema",
    "schema_json",
    "construct",
    "validate",
    "fields",
    "parse_obj",
    "parse_raw",
    "parse_file",
    "from_orm",
    "update_forward_refs",
    "to_wire",
    "from_wire",
    "to_wire_json",
    "from_wire_json",
}


def to_snake(name: str) -> str:
    out: list[str] = []
    for i, ch in enumerate(name):
        if ch.isupper():
            boundary = name[i - 1].islower() or name[i - 1].isdigit()
            acronym_end = i + 1 < len(name) and name[i + 1].islower() and name[i - 1].isupper()
            if i and (boundary or acronym_end):
                out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def to_camel(snake: str) -> str:
    # Mirrors pydantic.alias_generators.to_camel for the names that occur in the schema.
    from pydantic.alias_generators import to_camel as pyd_to_camel

    return pyd_to_camel(snake)


def enum_member(value: str) -> str:
    """``end_turn`` -> ``END_TURN``, ``date-time`` -> ``DATE_TIME`` (a valid identifier)."""
    member = "".join(ch if ch.isalnum() else "_" for ch in value).upper()
    return f"_{member}" if not member or member[0].isdigit() else member


def pascal(tag: str) -> str:
    parts = [p for p in tag.replace("-", "_").split("_") if p]
    return "".join(p[0].upper() + p[1:] for p in parts)


def docstring(text: str | None, indent: str = "") -> str:
    if not text:
        return ""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body += " "
    lines = body.split("\n")
    if len(lines) == 1:
        return f'{indent}"""{body}"""\n'
    joined = "\n".join((indent + line) if line.strip() else "" for line in lines)
    return f'{indent}"""{joined.lstrip()}\n{indent}"""\n'


@dataclass
class FieldSpec:
    wire: str
    schemas: list[dict[str, Any]] = field(default_factory=list)
    required: bool = True
    description: str | None = None


@dataclass
class TagInfo:
    wire: str
    value: str


class Generator:
    """Turns one ACP JSON Schema document into Python source."""

    def __init__(
        self,
        schema: dict[str, Any],
        unstable: bool,
        *,
        shared: frozenset[str] = frozenset(),
        with_docs: bool = True,
        profile: Profile | None = None,
        only: frozenset[str] | None = None,
        shared_from: str | None = None,
    ) -> None:
        self.profile = profile or PROFILES[1]
        self.schema = schema
        # Blocks the unstable module imports from the stable one instead of defining.
        self.shared = shared
        # The stable start-up split (see START_ROOTS): ``only`` restricts the module to those
        # blocks (the rest load from REST_MODULE on first use); ``shared_from`` makes it the rest
        # module, importing the ``shared`` blocks from there and exporting only its own.
        self.only = only
        self.shared_from = shared_from
        # Without docs, a block's source is its structure (compared to find shared blocks).
        self.with_docs = with_docs
        self.block_mixins: dict[str, str] = {}
        self.defs: dict[str, dict[str, Any]] = schema["$defs"]
        self.unstable = unstable
        self.refcount: dict[str, int] = {}
        self._count_refs(self.defs)
        # Emitted blocks: name -> (source, dependency names)
        self.blocks: dict[str, tuple[str, set[str]]] = {}
        self.order_hint: list[str] = []
        self.folded_tags: dict[str, TagInfo] = {}
        self.exports: list[str] = []
        self.mixins_used: set[str] = set()
        self.cyclic: set[str] = set()
        self.patch_acc: list[tuple[str, str]] = []  # the model being emitted: (attr, wire)
        self._plan_unions()

    def doc(self, text: str | None, indent: str = "") -> str:
        return docstring(text, indent) if self.with_docs else ""

    # ------------------------------------------------------------------ analysis
    def _count_refs(self, node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.rsplit("/", 1)[-1]
                self.refcount[name] = self.refcount.get(name, 0) + 1
            for value in node.values():
                self._count_refs(value)
        elif isinstance(node, list):
            for value in node:
                self._count_refs(value)

    @staticmethod
    def ref_name(node: dict[str, Any]) -> str | None:
        if "$ref" in node:
            return str(node["$ref"]).rsplit("/", 1)[-1]
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
            return str(all_of[0]["$ref"]).rsplit("/", 1)[-1]
        return None

    @staticmethod
    def variants(node: dict[str, Any]) -> list[dict[str, Any]] | None:
        v = node.get("oneOf") or node.get("anyOf")
        return list(v) if isinstance(v, list) else None

    @staticmethod
    def variant_tag(variant: dict[str, Any]) -> TagInfo | None:
        for prop, sch in variant.get("properties", {}).items():
            if isinstance(sch, dict) and isinstance(sch.get("const"), str):
                return TagInfo(prop, sch["const"])
        return None

    def kind_of(self, name: str) -> str:
        d = self.defs[name]
        variants = self.variants(d)
        if variants is None:
            if "properties" in d:
                return "model"
            return "alias"
        if all(self._is_string_enum_variant(v) for v in variants):
            return "str_enum"
        if all(v.get("type") == "integer" for v in variants):
            return "int_enum"
        if "properties" in d:
            return "merged"
        if any(self.variant_tag(v) for v in variants):
            return "tagged"
        if all("properties" in v and self.ref_name(v) is None for v in variants):
            return "merged"
        return "alias"

    @staticmethod
    def _is_string_enum_variant(v: dict[str, Any]) -> bool:
        return v.get("type") == "string" and "properties" not in v

    def _plan_unions(self) -> None:
        """Decide which $defs get a folded tag field (variant used exactly once)."""
        for name in self.defs:
            if self.kind_of(name) != "tagged":
                continue
            for v in self.variants(self.defs[name]) or []:
                tag = self.variant_tag(v)
                ref = self.ref_name(v)
                if tag is None or ref is None:
                    continue
                extra_props = [p for p in v.get("properties", {}) if p != tag.wire]
                if (
                    self.refcount.get(ref, 0) == 1
                    and self.kind_of(ref) == "model"
                    and not extra_props
                    and (name, tag.value) not in self.profile.variant_names
                ):
                    self.folded_tags[ref] = tag

    # ------------------------------------------------------------------ types
    def type_of(self, node: dict[str, Any], deps: set[str]) -> str:
        ref = self.ref_name(node)
        if ref is not None:
            deps.add(ref)
            if self.kind_of(ref) == "str_enum":
                return f"{ref} | str"  # the StrEnum's members, or any (other) string
            return ref
        if "const" in node:
            return f"Literal[{json.dumps(node['const'])}]"
        variants = self.variants(node)
        if variants is not None:
            non_null = [v for v in variants if v.get("type") != "null"]
            if len(non_null) == 1:
                return self.type_of(non_null[0], deps)
            if any("anyOf" in v or "oneOf" in v or "properties" in v for v in non_null):
                return "Any"
            refs = [self.ref_name(v) for v in non_null]
            objects = [r for r in refs if r is not None and self.kind_of(r) in ("model", "merged")]
            if None not in refs and len(objects) >= 2:
                # An untagged union of several objects (JSON-RPC envelope params/results) cannot
                # be told apart reliably; the method table (METHODS) gives the real model.
                return "Any"
            return self._union([self.type_of(v, deps) for v in non_null])
        typ = node.get("type")
        if isinstance(typ, list):
            non_null_types = [t for t in typ if t != "null"]
            if len(non_null_types) == 1:
                return self.type_of({**node, "type": non_null_types[0]}, deps)
            return self._union([self.type_of({**node, "type": t}, deps) for t in non_null_types])
        if typ == "string":
            return "str"
        if typ == "integer":
            return self.int_type(node)
        if typ == "number":
            return "float"
        if typ == "boolean":
            return "bool"
        if typ == "null":
            return "None"
        if typ == "array":
            items = node.get("items")
            inner = self.type_of(items, deps) if isinstance(items, dict) else "Any"
            return f"list[{inner}]"
        if typ == "object":
            ap = node.get("additionalProperties")
            if isinstance(ap, dict):
                return f"dict[str, {self.type_of(ap, deps)}]"
            return "dict[str, Any]"
        return "Any"

    @staticmethod
    def int_type(node: dict[str, Any]) -> str:
        """``int``, constrained to the range an unsigned ``format`` or ``minimum``/``maximum``
        gives (``protocolVersion`` is a uint16: -1 and 10**30 are invalid params)."""
        fmt = str(node.get("format", ""))
        low = node.get("minimum")
        high = node.get("maximum")
        if fmt.startswith("uint") and fmt[4:].isdigit():
            low = 0 if low is None else low
            high = 2 ** int(fmt[4:]) - 1 if high is None else high
        if low is None and high is None:
            return "int"
        bounds = ", ".join(
            f"{name}={value}" for name, value in (("ge", low), ("le", high)) if value is not None
        )
        return f"Annotated[int, Field({bounds})]"

    @staticmethod
    def _union(types: Iterable[str]) -> str:
        seen: list[str] = []
        for t in types:
            for part in t.split(" | ") if "[" not in t else [t]:
                if part not in seen:
                    seen.append(part)
        if "Any" in seen:
            return "Any"
        if "None" in seen:
            seen = [t for t in seen if t != "None"] + ["None"]
        return " | ".join(seen)

    # ------------------------------------------------------------------ fields
    def fields_of(self, node: dict[str, Any]) -> dict[str, FieldSpec]:
        """Collect the (flattened) fields of an object schema, merging allOf and unions."""
        result: dict[str, FieldSpec] = {}
        required = set(node.get("required", []))
        for prop, sch in node.get("properties", {}).items():
            result[prop] = FieldSpec(
                prop, [sch], prop in required, sch.get("description") if sch else None
            )
        for part in node.get("allOf", []):
            ref = self.ref_name(part)
            sub = self.fields_of(self.defs[ref]) if ref else self.fields_of(part)
            for prop, spec in sub.items():
                if prop in result:
                    result[prop].schemas.extend(spec.schemas)
                    result[prop].required = result[prop].required or spec.required
                else:
                    result[prop] = spec
        variants = self.variants(node)
        if variants is not None and (
            "properties" in node or all("properties" in v or "allOf" in v for v in variants)
        ):
            per_variant = [self.fields_of(v) for v in variants]
            merged: dict[str, FieldSpec] = {}
            for vf in per_variant:
                for prop, spec in vf.items():
                    if prop in merged:
                        merged[prop].schemas.extend(spec.schemas)
                    else:
                        merged[prop] = FieldSpec(prop, list(spec.schemas), True, spec.description)
            for prop, spec in merged.items():
                spec.required = all(prop in vf and vf[prop].required for vf in per_variant)
                if prop not in result:
                    result[prop] = spec
        return result

    def field_type(self, spec: FieldSpec, deps: set[str]) -> str:
        consts = [s["const"] for s in spec.schemas if isinstance(s.get("const"), str)]
        if consts:
            lits = ", ".join(json.dumps(c) for c in dict.fromkeys(consts))
            return f"Literal[{lits}] | str"
        return self._union([self.type_of(s, deps) for s in spec.schemas])

    def render_field(self, spec: FieldSpec, deps: set[str], tag: TagInfo | None = None) -> str:
        wire = spec.wire
        if wire == "_meta":
            py = "meta"
        else:
            py = to_snake(wire)
            if keyword.iskeyword(py) or py in BASE_MODEL_ATTRS or py.startswith("model_"):
                py += "_"
        alias = None if (wire != "_meta" and to_camel(py) == wire) else wire
        desc = spec.description
        if tag is not None:
            typ = f"Literal[{json.dumps(tag.value)}]"
            default: str | None = json.dumps(tag.value)
        else:
            typ = self.field_type(spec, deps)
            lenient = any(s.get("x-deserialize-default-on-error") for s in spec.schemas)
            skip = any(s.get("x-deserialize-skip-invalid-items") for s in spec.schemas)
            if skip and typ.startswith("list["):
                typ = f"Annotated[{typ}, SkipInvalidItems]"
            on_null = any(s.get("x-deserialize-default-on-null") for s in spec.schemas)
            if spec.required:
                default = None
                if lenient and "list[" in typ:
                    typ = f"Annotated[{typ}, EmptyListOnError]"
                elif on_null:
                    assert typ.startswith("list["), (spec.wire, typ)
                    typ = f"Annotated[{typ}, EmptyListOnNull]"
            else:
                default = "None"
                if self.profile.patch_fields and self.nullable(spec):
                    typ = f"Patch[{typ}]"
                    self.patch_acc.append((py, wire))
                else:
                    typ = typ if typ == "Any" else f"{typ} | None"
                if lenient:
                    typ = f"Annotated[{typ}, NoneOnError]"
        if alias is not None:
            if default is None:
                rhs = f" = Field(alias={json.dumps(alias)})"
            else:
                rhs = f" = Field(default={default}, alias={json.dumps(alias)})"
        else:
            rhs = "" if default is None else f" = {default}"
        schema_default = next((s["default"] for s in spec.schemas if "default" in s), None)
        if schema_default is not None:
            note = f"Defaults to `{json.dumps(schema_default)}` when omitted."
            desc = f"{desc}\n\n{note}" if desc else note
        return f"    {py}: {ANN_OPEN}{typ}{ANN_CLOSE}{rhs}\n" + self.doc(desc, "    ")

    @staticmethod
    def nullable(spec: FieldSpec) -> bool:
        """True when one of the field's schemas allows ``null`` (a v2 patch field)."""
        for sch in spec.schemas:
            if not {"type", "$ref", "allOf", "anyOf", "oneOf", "const"} & set(sch):
                return True  # any JSON value, `null` included (`rawInput`, `rawOutput`)
            typ = sch.get("type")
            if typ == "null" or (isinstance(typ, list) and "null" in typ):
                return True
            if any(v.get("type") == "null" for v in Generator.variants(sch) or []):
                return True
        return False

    # ------------------------------------------------------------------ emitters
    def class_header(self, name: str, bases: str, description: str | None) -> str:
        return f"class {name}({bases}):\n" + (self.doc(description, "    ") or "")

    def emit_model(
        self,
        name: str,
        node: dict[str, Any],
        description: str | None,
        base: str = "AcpModel",
        tag: TagInfo | None = None,
    ) -> None:
        deps: set[str] = set()
        if base != "AcpModel":
            deps.add(base)
        bases = base
        mixin = self.profile.factory_mixins.get(name)
        if mixin:
            bases = f"{mixin}, {base}"
            self.block_mixins[name] = mixin
        self.patch_acc = []
        body = ""
        if tag is not None:
            body += self.render_field(FieldSpec(tag.wire), deps, tag)
        if base == "AcpModel":
            fields = self.fields_of(node)
            ordered = [f for w, f in fields.items() if w != "_meta"]
            if "_meta" in fields:
                ordered.append(fields["_meta"])
            for spec in ordered:
                if tag is not None and spec.wire == tag.wire:
                    continue
                body += self.render_field(spec, deps)
        if self.patch_acc:
            bases = bases.replace("AcpModel", "PatchModel")
            pairs = "".join(f"({json.dumps(a)}, {json.dumps(w)}), " for a, w in self.patch_acc)
            body = f"    _patch_fields: ClassVar[tuple[tuple[str, str], ...]] = ({pairs})\n" + body
        src = self.class_header(name, bases, description)
        if not body:
            body = "    pass\n" if not description else ""
        self.add_block(name, src + body, deps)

    def emit_unknown(self, union: str, tag_wire: str, refused: list[str]) -> str:
        name = f"Unknown{union}"
        if name in self.defs:  # the schema names a real variant so (unstable `StateUpdate`)
            name = f"Unknown{union}Variant"
        py = to_snake(tag_wire)
        alias = "" if to_camel(py) == tag_wire else f" = Field(alias={json.dumps(tag_wire)})"
        doc = (
            f"A `{union}` variant this SDK does not know (a newer or custom `{tag_wire}`).\n\n"
            "The whole raw payload is kept in the model's extra fields and written back\n"
            "unchanged by `to_wire()`."
        )
        src = self.class_header(name, "UnknownVariant", doc)
        if refused:  # the known tags this generic model refuses (and where to find the tag)
            src += f"    _tag_wire: ClassVar[str] = {json.dumps(tag_wire)}\n"
            refused_src = ", ".join(json.dumps(t) for t in refused)
            src += f"    _refused_tags: ClassVar[frozenset[str]] = frozenset({{{refused_src}}})\n"
        src += f"    {py}: str{alias}\n"
        self.add_block(name, src, set())
        return name

    def emit_tagged(self, name: str, d: dict[str, Any]) -> None:
        variants = self.variants(d) or []
        members: list[tuple[str, str]] = []
        tag_wire: str | None = None
        default_tag: str | None = None
        for v in variants:
            tag = self.variant_tag(v)
            ref = self.ref_name(v)
            if tag is not None:
                tag_wire = tag.wire
                if ref is not None and self.folded_tags.get(ref) == tag:
                    members.append((ref, tag.value))
                    continue
                vname = self.profile.variant_names.get((name, tag.value))
                if vname is None:
                    vname = pascal(tag.value)
                    if vname in self.defs:
                        vname = f"{vname}{name}"
                if ref is not None:
                    extra = {k: s for k, s in v.get("properties", {}).items() if k != tag.wire}
                    if extra:
                        node = {
                            "properties": extra,
                            "required": [r for r in v.get("required", []) if r in extra],
                        }
                        node["allOf"] = [{"$ref": f"#/$defs/{ref}"}]
                        self.emit_model(vname, node, v.get("description"), tag=tag)
                    elif self.kind_of(ref) == "tagged":
                        # A tagged union inside a tagged union (v2 `state_update` carries a
                        # `StateUpdate`): one merged model with every inner variant's fields.
                        node = {"allOf": [{"$ref": f"#/$defs/{ref}"}]}
                        self.emit_model(vname, node, v.get("description"), tag=tag)
                    else:
                        self.emit_model(vname, {}, v.get("description"), base=ref, tag=tag)
                else:
                    node = {k: val for k, val in v.items() if k != "description"}
                    self.emit_model(vname, node, v.get("description"), tag=tag)
                members.append((vname, tag.value))
            elif ref is not None and v.get("title") != "other":
                default_tag = v.get("title") or ref
                members.append((ref, default_tag))
        assert tag_wire is not None
        known = sorted(t for m, t in members if t != default_tag)
        self.emit_kind_enum(name, [t for m, t in members if t != default_tag])
        lenient = name in LENIENT_UNIONS
        if default_tag is None:
            # Pydantic's own tagged union (no Python call per value), then the generic model:
            # unknown tags land there; a known tag with a malformed payload too when the union
            # is lenient, otherwise the generic model refuses it and the union's error stands.
            unknown = self.emit_unknown(name, tag_wire, [] if lenient else known)
            deps = {m for m, _ in members} | {unknown}
            src = f"{name}: TypeAlias = Annotated[\n    Annotated[\n        "
            src += "\n        | ".join(m for m, _ in members)
            src += f",\n        Field(discriminator={json.dumps(to_snake(tag_wire))}),\n    ]\n"
            src += f'    | {unknown},\n    Field(union_mode="left_to_right"),\n]\n'
            src += self.doc(d.get("description"))
            self.add_block(name, src, deps)
            return
        # A variant is chosen when the tag is absent: a callable discriminator decides.
        unknown = self.emit_unknown(name, tag_wire, [])
        deps = {m for m, _ in members} | {unknown}
        parts = [f"Annotated[{m}, Tag({json.dumps(t)})]" for m, t in members]
        parts.append(f"Annotated[{unknown}, Tag(UNKNOWN_TAG)]")
        known_src = ", ".join(json.dumps(k) for k in known)
        disc_args = (
            f"{json.dumps(tag_wire)}, {json.dumps(to_snake(tag_wire))}, frozenset({{{known_src}}})"
        )
        disc_args += f", default={json.dumps(default_tag)}"
        src = f"{name}: TypeAlias = Annotated[\n    " + " | ".join(parts)
        src += f",\n    Discriminator(tag_discriminator({disc_args})),\n"
        if lenient:
            src += f"    WrapValidator(unknown_on_error({unknown})),\n"
        src += "]\n"
        src += self.doc(d.get("description"))
        self.add_block(name, src, deps)

    def emit_str_enum(
        self, name: str, description: str | None, variants: list[dict[str, Any]]
    ) -> None:
        """A string union as a ``StrEnum`` whose members equal their wire strings.

        Fields typed with it are ``Name | str``: a member or any string is accepted (unknown
        values are kept as plain strings), and ``to_wire()`` writes the string.
        """
        lines = [description.strip() + "\n"] if description else []
        lines.append(
            "A `StrEnum`: members equal their wire strings, and wherever this type is expected "
            "a plain string is accepted too (other strings are kept as is). Known values:\n"
        )
        members = ""
        for v in variants:
            if "const" not in v:
                continue
            vd = " ".join((v.get("description") or v.get("title") or "").split())
            lines.append(f"- `{v['const']}`: {vd}")
            members += f"    {enum_member(v['const'])} = {json.dumps(v['const'])}\n"
            members += self.doc(v.get("description"), "    ")
        src = self.class_header(name, "StrEnum", "\n".join(lines)) + members
        self.add_block(name, src, set())

    def emit_kind_enum(self, union: str, tags: list[str]) -> None:
        """``<Union>Kind``: the tag values of a tagged union (``SessionUpdateKind``...)."""
        name = f"{union}Kind"
        if name in self.defs or not tags:
            return
        doc = (
            f"The known tags of `{union}` as a `StrEnum` (members equal their wire strings;\n"
            "a plain string is accepted wherever a tag is)."
        )
        members = "".join(f"    {enum_member(t)} = {json.dumps(t)}\n" for t in tags)
        self.add_block(name, self.class_header(name, "StrEnum", doc) + members, set())

    def emit_alias(self, name: str, d: dict[str, Any]) -> None:
        deps: set[str] = set()
        kind = self.kind_of(name)
        variants = self.variants(d) or []
        if kind == "str_enum":
            self.emit_str_enum(name, d.get("description"), variants)
            return
        if kind == "int_enum":
            consts = [v["const"] for v in variants if "const" in v]
            typ = f"Literal[{', '.join(json.dumps(c) for c in consts)}] | int"
        elif variants:
            typ = self._union([self.type_of(v, deps) for v in variants])
        else:
            typ = self.type_of(d, deps)
        desc = d.get("description")
        if kind in ("str_enum", "int_enum"):
            lines = [desc.strip() + "\n"] if desc else []
            other = "integers" if kind == "int_enum" else "strings"
            lines.append(f"Known values (other {other} are accepted and kept as is):\n")
            for v in variants:
                if "const" in v:
                    vd = " ".join((v.get("description") or v.get("title") or "").split())
                    lines.append(f"- `{v['const']}`: {vd}")
            desc = "\n".join(lines)
        self.add_block(name, f"{name}: TypeAlias = {typ}\n" + self.doc(desc), deps)

    def annotations(self, src: str, defined: set[str]) -> str:
        """Resolve the field-annotation markers of ``src``: evaluated where possible.

        The modules do not use ``from __future__ import annotations`` (pydantic would compile
        and evaluate every annotation string at import); blocks come in dependency order, so
        only an annotation naming a model not defined yet (itself, or one later in a cycle)
        is written as a string.
        """

        def resolve(match: re.Match[str]) -> str:
            typ = match.group(1)
            names = set(re.findall(r"[A-Za-z_]\w*", re.sub(r'"[^"]*"', "", typ)))
            if names & (set(self.blocks) - defined):
                return repr(typ) if '"' in typ else f'"{typ}"'
            return typ

        return re.sub(f"{ANN_OPEN}(.*?){ANN_CLOSE}", resolve, src)

    def add_block(self, name: str, src: str, deps: set[str]) -> None:
        assert name not in self.blocks, name
        self.blocks[name] = (src, deps - {name})
        self.order_hint.append(name)
        self.exports.append(name)

    # ------------------------------------------------------------------ driver
    def build(self) -> None:
        for name, d in self.defs.items():
            kind = self.kind_of(name)
            if kind in ("model", "merged"):
                node = dict(d)
                self.emit_model(name, node, d.get("description"), tag=self.folded_tags.get(name))
            elif kind == "tagged":
                self.emit_tagged(name, d)
            else:
                self.emit_alias(name, d)

    def ordered_blocks(self) -> list[str]:
        """Topological order (dependencies first), stable w.r.t. the schema order."""
        done: set[str] = set()
        visiting: set[str] = set()
        out: list[str] = []

        def visit(n: str) -> None:
            if n in done or n not in self.blocks:
                return
            if n in visiting:
                self.cyclic.add(n)  # cycle: resolved by an explicit model_rebuild()
                return
            visiting.add(n)
            for dep in sorted(self.blocks[n][1]):
                visit(dep)
            visiting.discard(n)
            done.add(n)
            out.append(n)

        for n in self.order_hint:
            visit(n)
        return out

    def render(self) -> str:
        self.build()
        order = [
            n
            for n in self.ordered_blocks()
            if n not in self.shared and (self.only is None or n in self.only)
        ]
        self.mixins_used = {self.block_mixins[n] for n in order if n in self.block_mixins}
        title = "unstable" if self.unstable else "stable"
        stable_module = self.profile.module("_generated")
        version = self.profile.version
        mode_doc = (
            "unstable: may change without notice. Mirrors `schema.unstable.json` as an overlay\n"
            "of the stable module: every definition that has the same structure (and the same\n"
            f"dependencies) as its stable namesake is imported from `{stable_module}`,\n"
            "so `unstable.PromptRequest is schema.PromptRequest`; only the changed and new\n"
            "definitions are defined here.\n\n"
            if self.unstable
            else f"Mirrors `schema.json` (ACP protocol version {version}).\n\n"
        )
        if self.only is not None:
            mode_doc += (
                "Defines the models an agent's start-up uses (the closure of `START_ROOTS` in\n"
                f"the generator); the others are defined in `{REST_MODULE}` and imported\n"
                "from there on first use (module `__getattr__`), so a stdio agent answers\n"
                "`initialize` without building them. Every name is importable from here.\n\n"
            )
        if self.shared_from is not None:
            mode_doc = (
                f"Mirrors `schema.json` (ACP protocol version {version}): the models no agent\n"
                f"start-up needs, imported by `{stable_module}` on first use (import them\n"
                "from there or from `rxacp.schema`).\n\n"
            )
        if version != 1:
            mode_doc += (
                "Every optional field the schema lets be `null` is a `Patch` (omitted =\n"
                "unchanged, `None` = clear, value = replace; see `rxacp.schema._base.Patch`).\n\n"
            )
        spec_rel = self.profile.spec.relative_to(SCHEMA_PKG).as_posix()
        header = (
            f'"""Generated ACP schema models ({title} protocol) -- DO NOT EDIT.\n\n'
            + mode_doc
            + f"Generated by `scripts/generate_schema.py` from `rxacp/schema/{spec_rel}/`.\n"
            "Hand-written helpers live in `_base.py`, `_factories.py` and `helpers.py`;\n"
            'this module is not responsible for I/O, JSON-RPC envelopes or method routing.\n"""\n\n'
            "from enum import StrEnum\n"
            + (
                "from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias\n\n"
                if self.only is not None
                else "from typing import Annotated, Any, ClassVar, Literal, TypeAlias\n\n"
            )
            + "from pydantic import Discriminator, Field, Tag, WrapValidator\n\n"
            "from rxacp.schema._base import (\n"
            "    UNKNOWN_TAG,\n"
            "    AcpModel,\n"
            "    EmptyListOnError,\n"
            "    EmptyListOnNull,\n"
            "    NoneOnError,\n"
            + ("    Patch,\n    PatchModel,\n" if self.profile.patch_fields else "")
            + "    SkipInvalidItems,\n"
            "    UnknownVariant,\n"
            "    tag_discriminator,\n"
            "    unknown_on_error,\n"
            ")\n"
        )
        if self.mixins_used:
            header += (
                f"from {self.profile.module('_factories')} import (\n"
                + "".join(f"    {m},\n" for m in sorted(self.mixins_used))
                + ")\n"
            )
        if self.shared:
            header += (
                f"from {self.shared_from or stable_module} import (\n"
                + "".join(f"    {n},\n" for n in sorted(self.shared))
                + ")\n"
            )
        rest = sorted(set(self.exports) - self.only) if self.only is not None else []
        if rest:
            header += (
                "\nif TYPE_CHECKING:\n"
                f"    from {REST_MODULE} import (\n"
                + "".join(f"        {n},\n" for n in rest)
                + "    )\n"
            )
        exports = sorted(self.exports)
        if self.shared_from is not None:
            exports = [n for n in exports if n not in self.shared]
        all_src = "__all__ = [\n" + "".join(f'    "{n}",\n' for n in exports) + "]\n"
        lines = [header + "\n" + all_src]
        defined = set(self.shared)
        for n in order:
            lines.append(self.annotations(self.blocks[n][0], defined))
            defined.add(n)
        for n in sorted(self.cyclic - self.shared):
            if self.blocks[n][0].startswith("class ") and (self.only is None or n in self.only):
                lines.append(f"{n}.model_rebuild()\n")
        if rest:
            lines.append(
                "_REST: frozenset[str] = frozenset(__all__) - frozenset(globals())\n"
                f'"""The names defined in `{REST_MODULE}`, imported on first use."""'
            )
            lines.append(
                "def _rest(name: str) -> Any:\n"
                "    if name not in _REST:\n"
                '        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")\n'
                f"    from {REST_MODULE.rsplit('.', 1)[0]} import {REST_MODULE.rsplit('.', 1)[1]}"
                " as rest\n\n"
                "    namespace = globals()\n"
                "    for each in _REST:\n"
                "        namespace[each] = getattr(rest, each)\n"
                "    return namespace[name]\n"
            )
            lines.append("def __dir__() -> list[str]:\n    return sorted({*globals(), *__all__})\n")
            lines.append(
                "if not TYPE_CHECKING:  # a type checker sees the import above\n"
                "    __getattr__ = _rest\n"
            )
        return "\n\n".join(lines)


# Capability queries (``NegotiatedCapabilities.supports_*``/``require_*``): every capability the
# unstable schema (a superset of the stable one) defines gets one; these paths keep the names
# the SDK had before they were generated, the rest are named after their path.
CAPABILITY_NAMES: dict[str, str] = {
    "sessionCapabilities.list": "list_sessions",
    "sessionCapabilities.delete": "delete_session",
    "sessionCapabilities.resume": "resume_session",
    "sessionCapabilities.close": "close_session",
    "sessionCapabilities.fork": "fork_session",
    "auth.logout": "logout",
    "promptCapabilities.image": "image_content",
    "promptCapabilities.audio": "audio_content",
    "promptCapabilities.embeddedContext": "embedded_context",
    "fs.readTextFile": "read_text_file",
    "fs.writeTextFile": "write_text_file",
}
# Objects that only group capabilities (no query of their own).
CAPABILITY_GROUPS = {"sessionCapabilities", "promptCapabilities", "mcpCapabilities", "fs", "auth"}
CAPABILITY_GROUPS_CLIENT = {"session", "fs", "auth"}


def capability_paths(
    schema: dict[str, Any], stable: dict[str, Any]
) -> list[tuple[str, str, str, bool, str]]:
    """(peer, path, name, unstable, description) of every capability, agent then client."""
    defs = schema["$defs"]
    stable_paths: set[tuple[str, str]] = set()
    out: list[tuple[str, str, str, bool, str]] = []

    def ref_of(node: dict[str, Any]) -> str | None:
        for part in [node, *node.get("anyOf", []), *node.get("allOf", [])]:
            if isinstance(part, dict) and "$ref" in part:
                return str(part["$ref"]).rsplit("/", 1)[-1]
        return None

    def walk(
        all_defs: dict[str, Any], peer: str, name: str, prefix: str, sink: Any, groups: set[str]
    ) -> None:
        for prop, node in all_defs[name].get("properties", {}).items():
            if prop == "_meta":
                continue
            path = f"{prefix}{prop}"
            ref = ref_of(node)
            desc = (all_defs[ref].get("description") if ref else None) or node.get("description")
            if path not in groups:
                sink(peer, path, desc or "")
            if ref and ref.endswith("Capabilities"):
                walk(all_defs, peer, ref, f"{path}.", sink, groups)

    def keep_stable(peer: str, path: str, _desc: str) -> None:
        stable_paths.add((peer, path))

    def keep(peer: str, path: str, desc: str) -> None:
        name = CAPABILITY_NAMES.get(path) or "_".join(
            to_snake(p.removesuffix("Capabilities")) for p in path.split(".")
        )
        out.append((peer, path, name, (peer, path) not in stable_paths, desc))

    for all_defs, sink in ((stable["$defs"], keep_stable), (defs, keep)):
        walk(all_defs, "agent", "AgentCapabilities", "", sink, CAPABILITY_GROUPS)
        walk(all_defs, "client", "ClientCapabilities", "", sink, CAPABILITY_GROUPS_CLIENT)
    names = [n for _, _, n, _, _ in out]
    assert len(names) == len(set(names)), names
    return out


def update_capabilities(schema: dict[str, Any]) -> dict[str, str]:
    """``sessionUpdate`` tags whose definition says which client capability they need."""
    defs = schema["$defs"]
    pattern = re.compile(r"MUST only send [^.]*? when the Client advertised\s+the `([\w.]+)`")
    out: dict[str, str] = {}
    for variant in defs["SessionUpdate"].get("oneOf", []):
        tag = variant.get("properties", {}).get("sessionUpdate", {}).get("const")
        ref = Generator.ref_name(variant)
        found = pattern.search((defs[ref].get("description") or "") if ref else "")
        if tag and found:
            out[tag] = found.group(1)
    return out


def render_capability_queries(schema: dict[str, Any], stable: dict[str, Any]) -> str:
    """Source of ``rxacp/schema/_capabilities.py`` (the ``CapabilityQueries`` mixin)."""
    src = (
        '"""Generated capability queries -- DO NOT EDIT.\n\n'
        "One ``supports_<name>()`` / ``require_<name>()`` pair per capability that\n"
        "``schema.unstable.json`` defines (agent and client side), mixed into\n"
        "``rxacp.NegotiatedCapabilities``. Generated by `scripts/generate_schema.py`.\n"
        '"""\n\n'
        '__all__ = ["CAPABILITY_PATHS", "UPDATE_CAPABILITIES", "CapabilityQueries"]\n\n'
    )
    rows = capability_paths(schema, stable)
    src += "UPDATE_CAPABILITIES: dict[str, str] = {\n"
    src += "".join(
        f"    {json.dumps(tag)}: {json.dumps(path)},\n"
        for tag, path in update_capabilities(stable).items()
    )
    src += "}\n"
    src += (
        '"""``sessionUpdate`` tag -> the client capability an agent needs before sending it\n'
        '(the stable schema: "Agents MUST only send ... when the Client advertised ...")."""\n\n'
    )
    src += "CAPABILITY_PATHS: dict[str, str] = {\n"
    src += "".join(f"    {json.dumps(name)}: {json.dumps(path)},\n" for _, path, name, _, _ in rows)
    src += "}\n"
    src += '"""Query name -> dotted wire path, for every generated ``supports_*``."""\n\n\n'
    src += "class CapabilityQueries:\n"
    src += '    """``supports_*``/``require_*`` for every capability of the schema."""\n\n'
    src += "    __slots__ = ()\n\n"
    src += "    def supports(self, path: str) -> bool:\n"
    src += '        """True when the capability at ``path`` is advertised."""\n'
    src += "        raise NotImplementedError\n\n"
    src += "    def require(self, path: str) -> None:\n"
    src += '        """Raise ``AcpCapabilityException`` unless ``path`` is advertised."""\n'
    src += "        raise NotImplementedError\n"
    for peer, path, name, unstable, desc in rows:
        boiler = "This capability is not part of the spec yet, and may be removed or changed at any point."
        text = " ".join(desc.replace("**UNSTABLE**", "").split()).replace(boiler, "").strip()
        first = text.split(". ")[0].rstrip(".")
        tag = " **Unstable.**" if unstable else ""
        asked = "agent" if peer == "agent" else "client"
        summary = f"({asked} capability{', unstable' if unstable else ''}) {first}."
        src += f"\n    def supports_{name}(self) -> bool:\n"
        src += docstring(f"True when ``{path}`` is advertised.{tag}\n\n{summary}", "        ")
        src += f"        return self.supports({json.dumps(path)})\n"
        src += f"\n    def require_{name}(self) -> None:\n"
        src += docstring(
            f"Raise ``AcpCapabilityException`` unless ``{path}`` is advertised.{tag}", "        "
        )
        src += f"        self.require({json.dumps(path)})\n"
    return src


def ruff_format(code: str) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--isolated",
            "--line-length",
            "100",
            "--target-version",
            "py311",
            "-",
        ],
        input=code,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"ruff format failed:\n{proc.stderr}")
    return proc.stdout


def structure(
    schema: dict[str, Any], profile: Profile | None = None
) -> dict[str, tuple[str, set[str]]]:
    """Every block's source without docstrings, and its dependencies."""
    gen = Generator(schema, False, with_docs=False, profile=profile)
    gen.build()
    return gen.blocks


def shared_blocks(
    stable: dict[str, Any], unstable: dict[str, Any], profile: Profile | None = None
) -> frozenset[str]:
    """Unstable blocks that are the stable block of the same name, structurally.

    A block is shared when its docstring-free source equals the stable one and every block it
    depends on is shared too (so the imported stable class refers to the same classes).
    """
    old, new = structure(stable, profile), structure(unstable, profile)
    shared = {n for n, block in new.items() if old.get(n) == block}
    while True:
        keep = {n for n in shared if new[n][1] <= shared}
        if keep == shared:
            return frozenset(shared)
        shared = keep


REST_MODULE = "rxacp.schema._generated_rest"
"""Where the stable models outside the start-up closure are defined (see START_ROOTS)."""
START_ROOTS = (
    # What rxacp's agent modules import at start-up (rxacp/agent/*.py), and the initialize,
    # session/new, session/prompt and cancel exchanges: their closure is defined in
    # _generated.py, the rest in REST_MODULE. tests/test_import_footprint.py pins that a stdio
    # agent leaves REST_MODULE unimported; a model added to those imports belongs here.
    "AgentCapabilities",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "CancelNotification",
    "CompleteElicitationNotification",
    "CreateElicitationRequest",
    "CreateElicitationResponse",
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "EnvVariable",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "KillTerminalRequest",
    "KillTerminalResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "PermissionOption",
    "Plan",
    "PlanEntry",
    "PromptCapabilities",
    "PromptRequest",
    "PromptResponse",
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "ReleaseTerminalRequest",
    "ReleaseTerminalResponse",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SessionNotification",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "TextContent",
    "ToolCall",
    "ToolCallUpdate",
    "ToolCallUpdateNotification",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
    "WriteTextFileRequest",
    "WriteTextFileResponse",
)


def start_closure(blocks: dict[str, tuple[str, set[str]]]) -> frozenset[str]:
    """START_ROOTS and every block they depend on (transitively)."""
    missing = [n for n in START_ROOTS if n not in blocks]
    if missing:
        raise SystemExit(f"START_ROOTS names no definition: {missing}")
    seen: set[str] = set()
    pending = list(START_ROOTS)
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(d for d in blocks[name][1] if d in blocks)
    return frozenset(seen)


EXPORTED_MODULES = ("_base", "_generated", "helpers", "methods")
"""The modules ``rxacp.schema`` re-exports, in the order their names appear in its ``__all__``
(a name exported by two of them is the later one's, as with star imports)."""
BASE_EXPORTS = ("UNKNOWN_TAG", "AcpModel")
"""The names ``rxacp.schema`` re-exports from ``_base`` (whose ``__all__`` lists more)."""


def literal_all(source: str, name: str) -> tuple[str, ...]:
    """The literal ``__all__ = [...]`` of a module's ``source``."""
    for node in ast.parse(source, filename=name).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise SystemExit(f"{name} has no literal __all__ list")


def render_exports(generated: str) -> str:
    """``_exports.py``: the names ``rxacp.schema`` exports, grouped by the module defining them."""
    groups = {
        "_base": BASE_EXPORTS,
        "_generated": literal_all(generated, "_generated.py"),
        **{
            name: literal_all((SCHEMA_PKG / f"{name}.py").read_text(encoding="utf-8"), name)
            for name in ("helpers", "methods")
        },
    }
    lines = [
        '"""Where each name of ``rxacp.schema`` lives -- generated, DO NOT EDIT.',
        "",
        "Written by `scripts/generate_schema.py` from the `__all__` lists of `_generated.py`,",
        "`helpers.py` and `methods.py` (and two names of `_base.py`): `rxacp.schema` imports a",
        "module on the first use of one of its names, not at `import rxacp.schema`.",
        '"""',
        "",
        "from typing import Final",
        "",
        '__all__ = ["MODULES"]',
        "",
        "MODULES: Final[dict[str, tuple[str, ...]]] = {",
    ]
    for module in EXPORTED_MODULES:
        lines.append(f"    {module!r}: (")
        lines += [f"        {name!r}," for name in groups[module]]
        lines.append("    ),")
    lines.append("}")
    lines.append(
        '"""Submodule of ``rxacp.schema`` -> the names it exports there, in ``__all__`` order."""'
    )
    return "\n".join(lines) + "\n"


def generate(out_dir: Path, versions: Iterable[int] = (1, 2)) -> list[Path]:
    """Generate each protocol version's modules into ``out_dir``; return the written paths."""
    written: list[Path] = []
    for version in versions:
        profile = PROFILES[version]
        schemas = {
            name: json.loads((profile.spec / name).read_text(encoding="utf-8"))
            for name in ("schema.json", "schema.unstable.json")
        }
        stable, unstable_schema = schemas["schema.json"], schemas["schema.unstable.json"]
        shared = shared_blocks(stable, unstable_schema, profile)
        gens = [
            (profile.out / "_generated.py", Generator(stable, False, profile=profile)),
            (
                profile.out / "unstable" / "_generated.py",
                Generator(unstable_schema, True, shared=shared, profile=profile),
            ),
        ]
        if version == 1:  # the start-up split (START_ROOTS)
            start = start_closure(structure(stable, profile))
            gens[0] = (gens[0][0], Generator(stable, False, profile=profile, only=start))
            rest = Generator(
                stable,
                False,
                profile=profile,
                shared=start,
                shared_from=profile.module("_generated"),
            )
            gens.insert(1, (profile.out / (REST_MODULE.rsplit(".", 1)[1] + ".py"), rest))
        for rel, gen in gens:
            unstable = gen.unstable
            code = ruff_format(gen.render())
            target = out_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code, encoding="utf-8", newline="\n")
            written.append(target)
            if version == 1 and not unstable and gen.only is not None:
                target = out_dir / profile.out / "_exports.py"
                target.write_text(ruff_format(render_exports(code)), encoding="utf-8", newline="\n")
                written.append(target)
        if profile.capabilities:
            code = render_capability_queries(unstable_schema, stable)
            target = out_dir / profile.out / "_capabilities.py"
            target.write_text(ruff_format(code), encoding="utf-8", newline="\n")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=SCHEMA_PKG, help="output package directory")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
