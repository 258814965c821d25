"""Sync twins: a blocking API declared from the async one, once.

The sync surfaces (``AcpSyncClient``, ``AcpSyncAgent``, ``SyncPromptContext``) wrap an async
part; what they only pass through is declared here instead of written out a second time:

* :class:`Blocking`: ``owner.name(...)`` waits for the Observable ``owner.<part>.name(...)``
  returns (``owner._block(source, what)``: the surface's one bounded wait) — same parameters,
  the value, the async method's docstring;
* :func:`blocking`: the same as a plain function, for the method-table call descriptors
  (``rxacp.roles.table_calls``), whose twins are made from a table row;

(What a surface only reads from its part is forwarded with ``rxacp.session._forward``'s
``ForwardedProperty``, beside the engine's ``Forwarded`` methods.)

This module is *not* responsible for how a surface waits (its ``_block``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

import reactivex

__all__ = ["Blocking", "BlockingSurface", "blocking"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


class BlockingSurface(Protocol):
    """A sync surface: it waits for one Observable's answer, bounded, disposing it when the
    wait is interrupted (``what`` names the call in errors)."""

    def _block(self, source: reactivex.Observable[_T], what: str) -> _T: ...


def blocking(
    call: Callable[Concatenate[Any, _P], reactivex.Observable[_R]],
    what: str,
    part: str | None = None,
) -> Callable[Concatenate[BlockingSurface, _P], _R]:
    """The blocking twin of ``call``: on a surface, ``surface._block(call(target, ...), what)``
    where ``target`` is ``surface.<part>`` (``None``: the surface itself)."""

    def twin(surface: BlockingSurface, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        target = surface if part is None else getattr(surface, part)
        return surface._block(call(target, *args, **kwargs), what)

    twin.__name__ = twin.__qualname__ = getattr(call, "__name__", what)
    twin.__wrapped__ = call  # type: ignore[attr-defined]  # inspect.signature shows call's
    return twin


class Blocking(Generic[_P, _R]):
    """``owner.name(...)`` blocks on ``owner.<part>.name(...)`` (an Observable-returning
    method of the async part): same parameters, its value; ``what`` (default: the method's
    name) names the call in timeout and interruption errors."""

    def __init__(
        self,
        method: Callable[Concatenate[Any, _P], reactivex.Observable[_R]],
        part: str = "_async",
        what: str | None = None,
    ) -> None:
        name = method.__name__
        self._twin = blocking(method, what or name, part)
        self.__doc__ = self._twin.__doc__ = f"Blocking ``{name}``.\n\n{method.__doc__ or ''}"

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Blocking[_P, _R]: ...
    @overload
    def __get__(self, obj: BlockingSurface, owner: type[Any] | None = None) -> Callable[_P, _R]: ...
    def __get__(self, obj: BlockingSurface | None, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        return self._twin.__get__(obj)

    def __call__(self, surface: BlockingSurface, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """Called on the class (``Surface.name(surface, ...)``), as a plain method is."""
        return self._twin(surface, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        """The async method's parameters: ``inspect.signature(Surface.name)`` shows them."""
        return inspect.signature(self._twin)
