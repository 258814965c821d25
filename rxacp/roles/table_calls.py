"""Method-table call descriptors: the one machinery behind both roles' call surfaces.

A call defined from a row of ``rxacp.schema.methods.METHODS`` is a descriptor: assigned in a
class body it becomes a method of that class, named as the table names it (checked when the
class is created), with the types it declares checked against the table (when it is defined)
and a docstring made from the table. Its blocking twin comes from the same descriptor. The
agent→client calls (``rxacp.agent.calls``) and the client→agent calls
(``rxacp.client._plain_calls``) are both built on it.

A surface provides ``_send(method, params) -> AcpObservable`` (gate and send one request) and,
for blocking twins, ``_block(source, what) -> T`` (wait for its answer).

This module is *not* responsible for building a call's params (each role's forms do: request
model or keywords on the agent side, model or wire dict on the client side), nor for gating,
sending or waiting (the surfaces).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import reactivex

from ..schema import methods as m
from ..session.observable import AcpObservable

__all__ = ["BlockingCaller", "Caller", "TableMethod", "table_spec"]

_T = TypeVar("_T")


class Caller(Protocol):
    """A surface a table call is bound to: how one request is gated and sent."""

    def _send(self, method: str, params: Any) -> AcpObservable[Any]: ...


class BlockingCaller(Caller, Protocol):
    """A surface of blocking twins: it also waits for an answer (bounded, disposing on
    interruption)."""

    def _block(self, source: reactivex.Observable[_T], what: str) -> _T: ...


def _model_name(ref: object) -> str | None:
    if ref is None:
        return None
    return ref if isinstance(ref, str) else getattr(ref, "__name__", repr(ref))


def table_spec(
    method: str,
    side: m.MethodSide,
    params: object,
    result: object,
    table: Mapping[str, m.MethodSpec] = m.METHODS,
) -> m.MethodSpec:
    """The table's entry for ``method``, checked against the side and types a call declares.

    ``params``/``result`` are model classes or model names (``None``: no result). Names are
    compared with the table's own references, so declaring an unstable call does not import
    the unstable schema.
    """
    spec = table[method]
    declared = (side, _model_name(params), _model_name(result))
    # the table's model references (class, or the name of an unstable model), not resolved
    row = (spec.side, _model_name(spec._params), _model_name(spec._result))
    if declared != row:
        raise TypeError(
            f"{method}: the declared types disagree with the method table "
            f"(declared {declared}, table {row})"
        )
    return spec


class TableMethod:
    """A descriptor that binds one table-derived function to the surface it is read from.

    Subclasses set ``spec`` and ``_fn`` (the function, its docstring made from the table)
    before ``__set_name__`` runs, and type ``__get__``.
    """

    spec: m.MethodSpec
    _fn: Callable[..., Any]

    def __set_name__(self, owner: type[Any], name: str) -> None:
        spec = self.spec
        if name != spec.python_name:
            raise TypeError(f"{owner.__name__}.{name}: {spec.name} is called {spec.python_name}")
        self._fn.__name__ = self._fn.__qualname__ = name
        self.__doc__ = self._fn.__doc__  # help(Surface.call) shows the call's docstring

    def _bind(self, obj: object) -> Any:
        return types.MethodType(self._fn, obj)

    def __call__(self, surface: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Called on the class (``Surface.call(surface, ...)``), as a plain method is."""
        return self._fn(surface, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        """The function's: ``inspect.signature(Surface.call)`` shows its parameters."""
        return inspect.signature(self._fn)
