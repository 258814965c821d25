"""Finds the decorated methods of an agent object: which ACP method each handles, its
exception handlers, and the ``@acp_agent`` info. Conflicts fail here, at ``create()``:
two methods claiming one ACP method, two exception handlers claiming one exception type,
a class without ``@acp_agent``.

This module is *not* responsible for checking signatures (``resolvers.analyze``, at build time)
or for calling anything.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .decorators import AGENT_ATTR, EXCEPTION_ATTR, MARK_ATTR, AgentInfo, HandlerMark

__all__ = ["AgentDefinition", "ExceptionHandlerDef", "HandlerDef", "discover"]


@dataclass(frozen=True)
class HandlerDef:
    """One decorated handler: the bound method and the mark that selected it."""

    attr: str
    fn: Callable[..., Any]
    mark: HandlerMark


@dataclass(frozen=True)
class ExceptionHandlerDef:
    """One ``@exception_handler`` method and the exception types it takes."""

    attr: str
    fn: Callable[..., Any]
    types: tuple[type[BaseException], ...]


@dataclass
class AgentDefinition:
    """Everything discovered on one agent object."""

    instance: object
    owner: str
    info: AgentInfo
    handlers: dict[str, HandlerDef] = field(default_factory=dict)
    exception_handlers: list[ExceptionHandlerDef] = field(default_factory=list)


def _exception_types_from_params(fn: Callable[..., Any], name: str) -> tuple[type[Any], ...]:
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:
        raise TypeError(f"{name}: cannot evaluate the type annotations: {exc}") from exc
    hints.pop("return", None)
    found = tuple(t for t in hints.values() if isinstance(t, type) and issubclass(t, BaseException))
    if not found:
        raise TypeError(
            f"{name}: @exception_handler needs exception types, e.g. "
            "@exception_handler(ValueError), or a parameter annotated with an exception type"
        )
    return found


def discover(instance: object) -> AgentDefinition:
    """Scan ``instance``'s class (most-derived attribute of each name) for decorated methods."""
    cls = type(instance)
    owner = cls.__name__
    info = getattr(cls, AGENT_ATTR, None)
    if not isinstance(info, AgentInfo):
        raise TypeError(
            f"{owner} is not an ACP agent: decorate the class with "
            '@acp_agent(name="...", version="...")'
        )
    definition = AgentDefinition(instance, owner, info)
    by_type: dict[type[BaseException], str] = {}
    for attr in sorted(dir(cls)):
        if attr.startswith("__") and attr.endswith("__"):
            continue
        raw = inspect.getattr_static(cls, attr, None)
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        marks: tuple[HandlerMark, ...] = getattr(raw, MARK_ATTR, ())
        types: tuple[type[BaseException], ...] | None = getattr(raw, EXCEPTION_ATTR, None)
        if not marks and types is None:
            continue
        bound = getattr(instance, attr)
        for mark in marks:
            previous = definition.handlers.get(mark.method)
            if previous is not None:
                raise TypeError(
                    f"{owner}: both {previous.attr}() and {attr}() handle {mark.method!r}; "
                    "each ACP method may have one handler"
                )
            definition.handlers[mark.method] = HandlerDef(attr, bound, mark)
        if types is not None:
            if marks:
                raise TypeError(f"{owner}.{attr}: a handler cannot also be an @exception_handler")
            types = types or _exception_types_from_params(bound, f"{owner}.{attr}")
            for t in types:
                if t in by_type:
                    raise TypeError(
                        f"{owner}: both {by_type[t]}() and {attr}() handle {t.__name__}; "
                        "each exception type may have one @exception_handler"
                    )
                by_type[t] = attr
            definition.exception_handlers.append(ExceptionHandlerDef(attr, bound, types))
    return definition


def most_specific(
    handlers: list[ExceptionHandlerDef], exc: BaseException
) -> ExceptionHandlerDef | None:
    """The handler whose type is nearest to ``type(exc)`` in its MRO (None if none matches)."""
    mro = type(exc).__mro__
    ranked = ((mro.index(t), h) for h in handlers for t in h.types if t in mro)
    best = min(ranked, key=lambda pair: pair[0], default=None)
    return None if best is None else best[1]
