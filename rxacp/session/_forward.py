"""``Forwarded``: a part's method exposed on the object that owns the part, declared once.

The engine is built by composition (the session owns a pending-requests table, an inbox, …);
where a part's method *is* the owner's public method, ``Forwarded`` exposes it with the part's
signature and docstring instead of a second, hand-kept declaration that forwards each argument.

This module is *not* responsible for anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["Forwarded"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class Forwarded(Generic[_P, _R]):
    """``owner.name(...)`` is ``owner.<part>.name(...)`` (bound on each access; on the class,
    the part's function itself, so ``help``/``inspect.signature`` show its declaration)."""

    __slots__ = ("_function", "_name", "_part")

    def __init__(self, part: str, function: Callable[Concatenate[Any, _P], _R]) -> None:
        self._part = part  # the owner's attribute holding the part
        self._function = function
        self._name = function.__name__

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[Concatenate[Any, _P], _R]: ...
    @overload
    def __get__(self, obj: object, owner: type[Any] | None = None) -> Callable[_P, _R]: ...
    def __get__(self, obj: object | None, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self._function
        return getattr(getattr(obj, self._part), self._name)
