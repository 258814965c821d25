"""Sync twins: a blocking API declared from the async one, once.

The sync surfaces (``AcpSyncClient``, ``AcpSyncAgent``, ``SyncPromptContext``) wrap an async
part; what they only pass through is declared here instead of written out a second time:

* :class:`ForwardedProperty`: ``owner.name`` is ``owner.<part>.name``, read-only, with the
  part's docstring;

This module is *not* responsible for what the twins wait on (the surfaces' own blocking wait).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

__all__ = ["ForwardedProperty"]

_R = TypeVar("_R")


class ForwardedProperty(Generic[_R]):
    """``owner.name`` is ``owner.<part>.name``, read-only; its docstring is the part's.

    Declared with its type, e.g. ``prompt_timeout = ForwardedProperty[float | None](
    "_async", AcpAsyncClient)`` on a class whose ``_async`` is an ``AcpAsyncClient``.
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
