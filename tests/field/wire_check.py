"""Validate every message a peer sent against rxacp's schema models, counting what failed.

:func:`validate_traffic` walks a :class:`~rxacp.testing.mocks.TrafficLog`: each incoming request
or notification is parsed with its method's params model, each answer to one of our requests
with that method's result model (``from_wire``, exactly as the SDK parses them). A message that
does not parse is a *reject*; values that parsed into a generic ``Unknown*`` variant (an
unknown ``sessionUpdate``, content ``type``...) are counted apart as *unknown variants*; methods
the schema does not know (``_``-extensions or others) are counted as *unknown methods*.

This module is *not* responsible for recording traffic nor for deciding what counts as a pass.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from rxacp.schema import METHODS
from rxacp.schema._base import UnknownVariant
from rxacp.testing.mocks import TrafficLog

__all__ = ["WireReport", "validate_traffic"]


@dataclass
class WireReport:
    """What :func:`validate_traffic` found."""

    checked: int = 0
    rejects: list[str] = field(default_factory=list)
    unknown_variants: Counter[str] = field(default_factory=Counter)
    unknown_methods: Counter[str] = field(default_factory=Counter)
    methods: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        """One line: counts per kind."""
        return (
            f"{self.checked} messages, {len(self.rejects)} rejects, unknown variants "
            f"{dict(self.unknown_variants)}, unknown methods {dict(self.unknown_methods)}"
        )


def _unknowns(value: Any, out: Counter[str]) -> None:
    if isinstance(value, UnknownVariant):
        out[type(value).__name__] += 1
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _unknowns(getattr(value, name), out)
    elif isinstance(value, list | tuple):
        for item in value:
            _unknowns(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _unknowns(item, out)


def _parse(model: Any, payload: Any, what: str, report: WireReport) -> None:
    report.checked += 1
    try:
        parsed = model.from_wire(payload)
    except ValidationError as exc:
        report.rejects.append(f"{what}: {exc.errors()[:2]}")
        return
    _unknowns(parsed, report.unknown_variants)


def validate_traffic(log: TrafficLog) -> WireReport:
    """Validate every frame the peer sent (``direction == "in"``) in ``log``."""
    report = WireReport()
    sent: dict[Any, str] = {}
    for frame in log.frames:
        message = frame.message
        if not isinstance(message, dict):
            if frame.direction == "in":
                report.checked += 1
                report.rejects.append(f"not a JSON object: {str(message)[:80]}")
            continue
        method = message.get("method")
        if frame.direction == "out":
            if method is not None and "id" in message:
                sent[message["id"]] = method
            continue
        if method is not None:
            report.methods[method] += 1
            spec = METHODS.get(method)
            if spec is None:
                report.checked += 1
                report.unknown_methods[method] += 1
                continue
            _parse(spec.params_type, message.get("params"), method, report)
            continue
        asked = sent.get(message.get("id"))
        if asked is None:
            report.checked += 1
            report.unknown_methods[f"answer to unknown id {message.get('id')!r}"] += 1
            continue
        report.methods[f"{asked} (answer)"] += 1
        if "error" in message:
            report.checked += 1
            error = message["error"]
            ok = isinstance(error, dict) and isinstance(error.get("code"), int)
            if not ok or not isinstance(error.get("message"), str):
                report.rejects.append(f"{asked} error answer: {error!r}"[:200])
            continue
        spec = METHODS.get(asked)
        if spec is not None and spec.result_type is not None:
            _parse(spec.result_type, message.get("result"), f"{asked} answer", report)
        else:
            report.checked += 1
    return report
