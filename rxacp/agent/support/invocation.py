"""The extension points of decorator agents: :class:`InvocationContext` (one handler call),
:class:`HandlerParameter` (one declared parameter), and the base classes users subclass —
:class:`AcpInterceptor`, :class:`ArgumentResolver`, :class:`ReturnValueHandler`.

Subclassing is optional: any object with the same method names works (missing methods are
no-ops for interceptors).

This module is *not* responsible for calling them in order (``dispatch.py``) nor for the
built-in resolvers (``resolvers.py``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...capabilities import NegotiatedCapabilities
from ..context import PromptContext, SyncPromptContext

if TYPE_CHECKING:
    from ..agent import AcpAsyncAgent

__all__ = [
    "AcpInterceptor",
    "ArgumentResolver",
    "HandlerParameter",
    "InvocationContext",
    "ReturnValueHandler",
]


@dataclass(frozen=True)
class HandlerParameter:
    """One parameter of a handler or exception handler, as seen by argument resolvers.

    ``annotation`` is the full annotation (``Annotated[...]`` kept), ``type`` the annotation
    without ``Annotated``, ``metadata`` the ``Annotated`` extras. ``request_type`` is the model
    of the method's params (None for extension methods), ``is_async`` whether the handler is
    an ``async def``; ``kind`` is ``"handler"`` or ``"exception_handler"``.
    """

    name: str
    index: int
    annotation: Any
    type: Any
    metadata: tuple[Any, ...]
    default: Any
    handler_name: str
    method: str
    request_type: Any
    is_async: bool
    kind: str = "handler"

    @property
    def has_default(self) -> bool:
        """True if the parameter declares a default value."""
        return self.default is not inspect.Parameter.empty


@dataclass
class InvocationContext:
    """One call of one handler: what interceptors, resolvers and exception handlers see.

    ``attributes`` is a free dict for interceptors to share state within the call.
    ``exception`` is set while an exception handler runs.
    """

    method: str
    request: Any
    instance: object
    handler_name: str
    agent: AcpAsyncAgent | None = None
    prompt_context: PromptContext | None = None
    exception: BaseException | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    _sync_context: SyncPromptContext | None = field(default=None, repr=False)

    @property
    def session_id(self) -> str | None:
        """The request's session id, if it has one."""
        value = getattr(self.request, "session_id", None)
        if value is None and isinstance(self.request, dict):
            value = self.request.get("sessionId")
        return value if isinstance(value, str) else None

    @property
    def client_capabilities(self) -> NegotiatedCapabilities:
        """What the client advertised in ``initialize`` (empty before it initialized)."""
        caps = self.agent.client_capabilities if self.agent is not None else None
        return caps or NegotiatedCapabilities({}, peer="client")

    @property
    def sync_prompt_context(self) -> SyncPromptContext | None:
        """The blocking view of this prompt turn's context (None outside ``@prompt``)."""
        if self.prompt_context is None:
            return None
        if self._sync_context is None:  # the blocking view shares the context's core and turn
            self._sync_context = self.prompt_context.to_sync()
        return self._sync_context


class AcpInterceptor:
    """Cross-cutting code around every handler call (logging, auth, metrics).

    Order for interceptors ``[a, b]``: ``a.pre_handle``, ``b.pre_handle``, handler,
    ``b.post_handle``, ``a.post_handle`` (or ``on_error`` in the same reverse order),
    ``b.after_completion``, ``a.after_completion`` — the Spring/Java onion. Only interceptors
    whose ``pre_handle`` returned get ``post_handle``/``on_error``/``after_completion``.

    They may run on the connection's event loop (``async def`` handlers) or a worker thread:
    keep them quick and never block.

    ``order`` (Java ``getOrder()``): interceptors run sorted by it, lowest first (outermost),
    ties in the order added; ``AcpAgentSupportBuilder.interceptor(i, order=...)`` overrides it.
    """

    order: int = 0

    def pre_handle(self, ctx: InvocationContext) -> bool | None:
        """Before the handler. Return False, or raise an ``AcpProtocolException``, to veto the
        call: the request is answered with that error (False: ``-32600``) and the handler, the
        ``on_error`` hooks and the exception handlers do not run."""
        return None

    def post_handle(self, ctx: InvocationContext, result: Any) -> Any:
        """After a successful handler, with the answer about to be sent; return a value to
        replace it, or None to keep it."""
        return None

    def on_error(self, ctx: InvocationContext, exc: BaseException) -> Any:
        """The handler (or a later ``post_handle``) failed; runs before exception handlers.

        Return a value to replace the result (Java ``onError``): the call is answered with it
        (like a handler's return value) and neither the remaining ``on_error`` hooks nor the
        exception handlers run. Return None to let the error go on."""
        return None

    def after_completion(self, ctx: InvocationContext, exc: BaseException | None) -> None:
        """Always last, once: ``exc`` is the error that will be answered, or None."""


class ArgumentResolver:
    """Supplies values for handler parameters the built-in resolvers do not know.

    ``supports`` is asked once per parameter when the agent is built (an unsupported parameter
    fails the build); ``resolve`` runs at every call. Custom resolvers are asked first.
    """

    def supports(self, param: HandlerParameter) -> bool:
        """True if this resolver provides ``param``."""
        return False

    def resolve(self, param: HandlerParameter, invocation: InvocationContext) -> Any:
        """The value of ``param`` for this call."""
        raise NotImplementedError


class ReturnValueHandler:
    """Turns a handler's return value of some custom type into something the SDK understands
    (a response model, None, a ``str`` for ``@prompt``, an Observable or an awaitable).

    Custom handlers are asked first, in registration order; the first that ``supports`` the
    value converts it and the built-in handling continues with the result.
    """

    def supports(self, value: Any, invocation: InvocationContext) -> bool:
        """True if this handler converts ``value``."""
        return False

    def handle(self, value: Any, invocation: InvocationContext) -> Any:
        """The converted value."""
        raise NotImplementedError
