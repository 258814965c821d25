"""A part's method or property exposed on the object that owns the part, declared once.

rxacp is built by composition (the session owns a pending-requests table, an inbox, …; a sync
surface owns its async part). Where a part's method *is* the owner's public method,
:class:`Forwarded` exposes it with the part's signature and docstring; where the owner only
reads a part's property, :class:`ForwardedProperty` does, with the part's docstring. No second,
hand-kept declaration forwards each argument or value.

This module is *not* responsible for anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["Forwarded", "ForwardedProperty"]

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


class ForwardedProperty(Generic[_R]):
    """``owner.name`` is ``owner.<part>.name``, read-only; its docstring is the part's.

    Declared with its type and the part's class (where the docstring is read), e.g.
    ``timeout = ForwardedProperty[float | None]("_part", Part)`` on a class whose ``_part`` is
    a ``Part``.
    """

    __slots__ = ("__dict__", "_name", "_part", "_source")  # __dict__: the per-instance __doc__

    def __init__(self, part: str, source: type[Any]) -> None:
        self._part = part  # the owner's attribute holding the part
        self._source = source  # the part's class (where the docstring is read)
        self._name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name
        self.__doc__ = getattr(getattr(self._source, name, None), "__doc__", None)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> ForwardedProperty[_R]: ...
    @overload
    def __get__(self, obj: object, owner: type[Any] | None = None) -> _R: ...
    def __get__(self, obj: object | None, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self._part), self._name)
