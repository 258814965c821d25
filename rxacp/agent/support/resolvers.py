"""Argument resolution for decorator agents: the built-in resolvers (request model, prompt
contexts, ``NegotiatedCapabilities``, ``Annotated[str, SessionId]``, ``InvocationContext``,
exceptions) and :func:`analyze`, which checks a handler's whole signature once, at build time,
and raises a ``TypeError`` naming the class, method and parameter when it cannot be resolved.

This module is *not* responsible for finding handlers (``discovery.py``) or calling them
(``dispatch.py``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic
from pydantic import BaseModel

from ...capabilities import NegotiatedCapabilities
from ...errors import AcpProtocolException, peer_echo
from ...schema import AcpModel
from ...schema._base import validation_errors
from ..context import PromptContext, SyncPromptContext
from .decorators import SessionId
from .invocation import ArgumentResolver, HandlerParameter, InvocationContext

__all__ = ["BUILTIN_RESOLVERS", "ResolvedCall", "analyze"]

PROMPT = "session/prompt"


def _has_session_id(request_type: Any) -> bool:
    """Whether requests of ``request_type`` carry a session id (extension params: maybe)."""
    return request_type is None or "session_id" in getattr(request_type, "model_fields", {})


def _is_session_id(param: HandlerParameter) -> bool:
    return param.type is str and any(
        m is SessionId or isinstance(m, SessionId) for m in param.metadata
    )


def _is_model(tp: Any, base: type[Any]) -> bool:
    return isinstance(tp, type) and issubclass(tp, base)


class _RequestResolver(ArgumentResolver):
    """The method's request model; for extension methods the raw params (``dict``/``Any``) or
    the params validated into a pydantic model type."""

    def supports(self, param: HandlerParameter) -> bool:
        if param.kind == "exception_handler":
            return _is_model(param.type, BaseModel)
        if param.request_type is not None:
            return param.type is param.request_type
        raw = typing.get_origin(param.type) or param.type
        return raw in (dict, Mapping, Any, object) or _is_model(raw, BaseModel)

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        request = invocation.request
        if param.kind == "exception_handler":
            return request if isinstance(request, param.type) else None
        model = typing.get_origin(param.type) or param.type
        if param.request_type is None and _is_model(model, BaseModel):
            return _validate(model, request)
        return request


def _validate(model: type[BaseModel], raw: Any) -> Any:
    try:
        if issubclass(model, AcpModel):
            return model.from_wire(raw if raw is not None else {})
        return model.model_validate(raw if raw is not None else {})
    except pydantic.ValidationError as exc:
        errors = validation_errors(exc)
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else "params"
        what = errors[0]["msg"] if errors else "invalid"
        raise AcpProtocolException.invalid_params(
            f"Invalid params: {peer_echo(where, quote=False)}: {what}"
        ) from exc


class _PromptContextResolver(ArgumentResolver):
    """``PromptContext`` / ``SyncPromptContext``: ``@prompt`` handlers only."""

    def supports(self, param: HandlerParameter) -> bool:
        if param.method != PROMPT or param.kind != "handler":
            return False
        if param.type is SyncPromptContext:
            return not param.is_async
        return param.type is PromptContext

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        if param.type is SyncPromptContext:
            return invocation.sync_prompt_context
        return invocation.prompt_context


class _CapabilitiesResolver(ArgumentResolver):
    """``NegotiatedCapabilities``: what the client advertised in ``initialize``."""

    def supports(self, param: HandlerParameter) -> bool:
        return param.type is NegotiatedCapabilities

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        return invocation.client_capabilities


class _SessionIdResolver(ArgumentResolver):
    """``Annotated[str, SessionId]``: the request's session id."""

    def supports(self, param: HandlerParameter) -> bool:
        if not _is_session_id(param):
            return False
        return param.kind == "exception_handler" or _has_session_id(param.request_type)

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        return invocation.session_id


class _InvocationResolver(ArgumentResolver):
    """``InvocationContext``: the call itself."""

    def supports(self, param: HandlerParameter) -> bool:
        return param.type is InvocationContext

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        return invocation


class _ExceptionResolver(ArgumentResolver):
    """An exception-typed parameter of an exception handler: the exception being handled."""

    def supports(self, param: HandlerParameter) -> bool:
        return param.kind == "exception_handler" and _is_model(param.type, BaseException)

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        exc = invocation.exception
        return exc if isinstance(exc, param.type) else None


BUILTIN_RESOLVERS: tuple[ArgumentResolver, ...] = (
    _RequestResolver(),
    _PromptContextResolver(),
    _CapabilitiesResolver(),
    _SessionIdResolver(),
    _InvocationResolver(),
    _ExceptionResolver(),
)


@dataclass(frozen=True)
class ResolvedCall:
    """A handler whose every parameter has a resolver: ``arguments(inv)`` builds the call."""

    fn: Callable[..., Any]
    name: str
    is_async: bool
    params: tuple[tuple[HandlerParameter, ArgumentResolver | None], ...]

    def arguments(self, invocation: InvocationContext) -> list[Any]:
        """The positional arguments of this call (defaults for parameters nobody resolves)."""
        return [
            param.default if resolver is None else resolver.resolve(param, invocation)
            for param, resolver in self.params
        ]


def _split(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extras = typing.get_args(annotation)
        return base, tuple(extras)
    return annotation, ()


def _hint(param: HandlerParameter) -> str:
    if param.type in (PromptContext, SyncPromptContext):
        if param.method != PROMPT:
            return "a prompt context is only available to @prompt handlers"
        return "an async def handler cannot block: use PromptContext, not SyncPromptContext"
    if _is_session_id(param):
        return f"{getattr(param.request_type, '__name__', param.request_type)} has no session id"
    if param.request_type is not None and _is_model(param.type, AcpModel):
        return f"this handler receives {param.request_type.__name__}"
    return (
        "supported: the request model, SyncPromptContext/PromptContext (@prompt), "
        "NegotiatedCapabilities, Annotated[str, SessionId], InvocationContext, "
        "or a custom argument_resolver"
    )


def analyze(
    fn: Callable[..., Any],
    *,
    owner: str,
    method: str,
    request_type: Any,
    resolvers: Sequence[ArgumentResolver],
    kind: str = "handler",
) -> ResolvedCall:
    """Check ``fn``'s signature against ``resolvers``; raise ``TypeError`` naming the problem."""
    name = f"{owner}.{getattr(fn, '__name__', fn)}"
    what = "exception handler" if kind == "exception_handler" else f"{method} handler"
    if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
        raise TypeError(f"{name}: a {what} cannot be a generator; return a value or Observable")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"{name}: cannot evaluate the type annotations of this {what}: {exc}"
        ) from exc
    is_async = inspect.iscoroutinefunction(fn)
    resolved: list[tuple[HandlerParameter, ArgumentResolver | None]] = []
    for index, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            raise TypeError(
                f"{name}: parameter {p.name!r} of this {what} must be positional "
                "(no *args, **kwargs or keyword-only parameters)"
            )
        if p.name not in hints:
            raise TypeError(
                f"{name}: parameter {p.name!r} of this {what} has no type annotation; "
                "arguments are resolved by annotation"
            )
        base, extras = _split(hints[p.name])
        param = HandlerParameter(
            p.name, index, hints[p.name], base, extras, p.default, name, method, request_type,
            is_async, kind,
        )  # fmt: skip
        resolver = next((r for r in resolvers if r.supports(param)), None)
        if resolver is None and not param.has_default:
            raise TypeError(
                f"{name}: cannot resolve parameter {p.name!r} of type "
                f"{_type_name(hints[p.name])} of this {what} ({_hint(param)})"
            )
        resolved.append((param, resolver))
    return ResolvedCall(fn, name, is_async, tuple(resolved))


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")
