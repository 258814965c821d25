"""The builder kit both roles share: :class:`RoleBuilder` (the options and raw registrations
the client and agent builders both have) and typed handler setters from the method table.

A builder declares each setter once for both its flavours, e.g. ``read_text_file_handler =
HandlerSetter[ReadTextFileRequest, ReadTextFileResponse](m.FS_READ_TEXT_FILE)``. The table's row
checks its name (``<python_name>_handler``), side and models, and gives its docstring; the
builder it is read from gives the handler's type, so a type checker checks user handlers:

* on a :class:`ReactiveBuilder` (``AcpClient.async_``, ``AcpAgent.async_``):
  :data:`AsyncHandler` — ``Callable[[Req], Observable[Resp] | Awaitable[Resp] | Resp | None]``;
* on a :class:`BlockingBuilder` (``AcpClient.sync``, ``AcpAgent.sync``): :data:`SyncHandler`
  — ``Callable[[Req], Resp | Awaitable[Resp] | None]`` (run on the worker pool);

and the setter returns the builder, so setters chain (registered by ``_set_handler``).

This module is *not* responsible for running handlers (``handlers.py``), for which methods a
role serves (each builder declares its setters) or for a role's own options.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, ForwardRef, Generic, Self, TypeAlias, TypeVar, get_args, overload

import reactivex
from reactivex import abc

from .._durations import Duration, to_seconds
from ..schema import methods as m
from .handlers import check_ext_method, check_raw_method
from .table_calls import table_spec

__all__ = [
    "AsyncHandler",
    "BlockingBuilder",
    "HandlerSetter",
    "ReactiveBuilder",
    "RoleBuilder",
    "SyncHandler",
    "TurnSetter",
]

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")
_ACtx = TypeVar("_ACtx")
_SCtx = TypeVar("_SCtx")

AsyncHandler: TypeAlias = Callable[
    [_Req], reactivex.Observable[_Resp] | Awaitable[_Resp] | _Resp | None
]
"""An async-builder handler: takes the request model, returns an Observable of the response
(first value answers), a coroutine, or the response itself. ``None``/empty answers ``{}`` when
the response has no required field."""

SyncHandler: TypeAlias = Callable[[_Req], _Resp | Awaitable[_Resp] | None]
"""A sync-builder handler: runs on the worker pool (may block) and returns the response (an
``async def`` handler's coroutine is awaited on the connection's loop)."""


class RoleBuilder:
    """What a setter registers into, and the raw registrations both roles' builders have."""

    _reserved: ClassVar[Mapping[str, str]] = {}
    """Methods a raw handler may not take over (their rules are the SDK's) -> the API to use."""

    def _set_handler(self, method: str, fn: Callable[..., Any]) -> None:
        raise NotImplementedError

    def _set_option(self, name: str, value: Any) -> None:
        raise NotImplementedError

    # -- the options both roles have ---------------------------------------------------------
    def request_timeout(self, timeout: Duration | None) -> Self:
        """Timeout of every request this side sends but a client's ``session/prompt`` (which
        ``prompt_timeout`` bounds): default 60 s; ``0``/``None``: off. A timeout disposes the
        request (the peer gets ``$/cancel_request``) and errors with
        :class:`~rxacp.errors.AcpTimeoutException`."""
        to_seconds(timeout, name="request_timeout")
        self._set_option("request_timeout", timeout)
        return self

    def scheduler(self, scheduler: abc.SchedulerBase) -> Self:
        """The scheduler of every timer (default: the connection's asyncio loop; tests pass a
        ``reactivex.testing.TestScheduler`` for virtual time)."""
        self._set_option("scheduler", scheduler)
        return self

    def tracing(self, enabled: bool = True, *, tracer_provider: Any = None) -> Self:
        """OpenTelemetry spans for this connection (``rxacp[otel]``, see ``docs/tracing.md``;
        an agent continues the client's trace from ``params._meta.traceparent``).

        By default on when ``opentelemetry-api`` is importable and a global tracer provider is
        set when the connection is built; ``tracing(False)`` turns it off; ``tracer_provider``
        uses that provider instead of the global one."""
        self._set_option("tracing", bool(enabled))
        self._set_option("tracer_provider", tracer_provider)
        return self

    def handler_executor(self, executor: concurrent.futures.Executor) -> Self:
        """Run blocking (``def``) handlers on ``executor`` instead of rxacp's worker pool (Java
        ``SyncSpec.handlerExecutor``; an agent's ``max_workers`` is then unused). The
        application owns the executor (rxacp never shuts it down); an abandoned handler keeps
        its thread. A sync client's consumers stay off it (ordered, see ``AcpSyncClient``)."""
        if not isinstance(executor, concurrent.futures.Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor, not {type(executor).__name__}"
            )
        self._set_option("executor", executor)
        return self

    # -- raw registrations -------------------------------------------------------------------

    def _set_raw(self, method: str, fn: Callable[[Any], Any], notification: bool) -> None:
        raise NotImplementedError

    def _raw(self, where: str, method: Any, fn: Any, notification: bool, ext: bool) -> Self:
        if not callable(fn):
            raise TypeError(f"{where} takes a callable, not {type(fn).__name__}")
        if ext:
            method = check_ext_method(method, where)
        else:
            method = check_raw_method(method, where, self._reserved)
        self._set_raw(method, fn, notification)
        return self

    def request_handler(self, method: str, fn: Callable[[Any], Any]) -> Self:
        """A raw handler for any request ``method`` the peer sends (Java ``requestHandler``):
        ``fn(params)`` gets the params as raw JSON and returns the result (raw JSON or a model;
        ``None`` answers ``{}``), run like this builder's other handlers. Overrides a typed
        handler of the same method. ``$/`` methods and those whose protocol rules the SDK
        implements are refused (the error names the typed API to use)."""
        return self._raw("request_handler", method, fn, notification=False, ext=False)

    def notification_handler(self, method: str, fn: Callable[[Any], Any]) -> Self:
        """A raw handler for any notification ``method`` (Java ``notificationHandler``):
        ``fn(params)`` gets raw JSON, in arrival order; refused as :meth:`request_handler`."""
        return self._raw("notification_handler", method, fn, notification=True, ext=False)

    def ext_request_handler(self, method: str, fn: Callable[[Any], Any]) -> Self:
        """Serve the extension request ``method`` (must start with ``_``): ``fn(params)`` gets
        the raw params and returns the raw result (``None`` answers ``{}``), run like this
        builder's other handlers."""
        return self._raw("ext_request_handler", method, fn, notification=False, ext=True)

    def ext_notification_handler(self, method: str, fn: Callable[[Any], Any]) -> Self:
        """Handle the extension notification ``method`` (must start with ``_``): ``fn(params)``
        gets the raw params, in arrival order with the other notifications."""
        return self._raw("ext_notification_handler", method, fn, notification=True, ext=True)


class ReactiveBuilder(RoleBuilder):
    """A builder whose handlers return Observables (or awaitables, or values)."""


class BlockingBuilder(RoleBuilder):
    """A builder whose handlers return values and run on a worker pool."""


_RB = TypeVar("_RB", bound=ReactiveBuilder)
_BB = TypeVar("_BB", bound=BlockingBuilder)
_AnyB = TypeVar("_AnyB")  # a builder of neither flavour (a shared base): untyped handlers
_Owner = type[Any] | None
_AnySetter = Callable[[Callable[..., Any]], _AnyB]
"""The setter a builder of neither flavour gets: any callable."""


def _name(ref: Any) -> str | None:
    if ref is None or ref is type(None):
        return None
    if isinstance(ref, ForwardRef):
        ref = ref.__forward_arg__
    if isinstance(ref, str):
        return ref.rpartition(".")[2]
    return getattr(ref, "__name__", repr(ref))


class HandlerSetter(Generic[_Req, _Resp]):
    """The typed setter of one table method's handler (declared as in the module docstring;
    ``note`` is appended to the docstring made from the table; ``table``: the protocol
    version's method table, default v1's)."""

    def __init__(
        self, method: str, note: str = "", table: Mapping[str, m.MethodSpec] = m.METHODS
    ) -> None:
        self._method = method
        self._note = note
        self._table = table
        self.spec: m.MethodSpec | None = None

    def __set_name__(self, owner: type[Any], name: str) -> None:
        spec = self._table[self._method]
        if name != f"{spec.python_name}_handler":
            raise TypeError(
                f"{owner.__name__}.{name}: {spec.name}'s setter is {spec.python_name}_handler"
            )
        declared = get_args(getattr(self, "__orig_class__", None))
        if len(declared) < 2:
            raise TypeError(
                f"{owner.__name__}.{name}: declare it as {type(self).__name__}[Req, Resp]"
            )
        params, result = _name(declared[0]), _name(declared[1])
        self.spec = table_spec(spec.name, spec.side, params, result, self._table)
        self._name = name
        unstable = "Unstable: " if spec.unstable else ""
        gate = f" (advertises ``{spec.capability}`` by default)" if spec.capability else ""
        note = f" {self._note}" if self._note else ""
        self.__doc__ = f"{unstable}Handle ``{spec.name}``{gate}.{note}"

    def _bind(self, obj: _AnyB) -> Callable[[Callable[..., Any]], _AnyB]:
        method, name = self._method, self._name

        def set_handler(fn: Callable[..., Any]) -> _AnyB:
            if not callable(fn):
                raise TypeError(f"{name} takes a callable, not {type(fn).__name__}")
            builder: RoleBuilder = obj  # type: ignore[assignment]
            builder._set_handler(method, fn)
            return obj

        set_handler.__name__ = name
        set_handler.__doc__ = self.__doc__
        return set_handler

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> HandlerSetter[_Req, _Resp]: ...
    @overload
    def __get__(
        self, obj: _RB, owner: _Owner = None
    ) -> Callable[[AsyncHandler[_Req, _Resp]], _RB]: ...
    @overload
    def __get__(
        self, obj: _BB, owner: _Owner = None
    ) -> Callable[[SyncHandler[_Req, _Resp]], _BB]: ...
    @overload
    def __get__(self, obj: _AnyB, owner: _Owner = None) -> _AnySetter[_AnyB]: ...
    def __get__(self, obj: object, owner: _Owner = None) -> Any:
        return self if obj is None else self._bind(obj)


class TurnSetter(HandlerSetter[_Req, _Resp], Generic[_Req, _Resp, _ACtx, _SCtx]):
    """The typed setter of a handler that also gets a context (``session/prompt``:
    ``fn(request, context)``); declared ``TurnSetter[Req, Resp, AsyncContext, SyncContext]``:
    the async builder's handler gets the async context, the sync builder's the sync one."""

    @overload  # type: ignore[override]
    def __get__(self, obj: None, owner: type[Any]) -> TurnSetter[_Req, _Resp, _ACtx, _SCtx]: ...
    @overload
    def __get__(
        self, obj: _RB, owner: _Owner = None
    ) -> Callable[
        [Callable[[_Req, _ACtx], reactivex.Observable[_Resp] | Awaitable[_Resp] | _Resp | None]],
        _RB,
    ]: ...
    @overload
    def __get__(
        self, obj: _BB, owner: _Owner = None
    ) -> Callable[[Callable[[_Req, _SCtx], _Resp | Awaitable[_Resp] | None]], _BB]: ...
    @overload
    def __get__(self, obj: _AnyB, owner: _Owner = None) -> _AnySetter[_AnyB]: ...
    def __get__(self, obj: object, owner: _Owner = None) -> Any:
        return HandlerSetter.__get__(self, obj, owner)
