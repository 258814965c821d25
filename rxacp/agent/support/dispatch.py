"""One call of a decorated handler, as a cold Observable the agent layer subscribes to:
interceptors (pre / post / on_error / after_completion), argument resolution, the handler,
return-value handling and ``@exception_handler`` recovery.

Where things run (the agent underneath is an ``AcpAsyncAgent``):

* ``def`` handlers (and ``def`` exception handlers) run on the connection's worker pool,
  together with the ``pre_handle`` hooks, so they may block;
* ``async def`` handlers are started on the connection's event loop; their coroutine runs
  there as a task (disposal cancels it);
* a returned Observable is subscribed (its first value is the answer), a returned awaitable
  is awaited on the connection's loop; disposal (grace period, ``$/cancel_request``...)
  disposes them.

This module is *not* responsible for finding handlers or checking signatures.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import reactivex
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import CompositeDisposable, Disposable, SingleAssignmentDisposable

from ...errors import AcpErrorCodes, AcpProtocolException
from ...roles.handlers import empty_result
from ...schema import AcpModel, PromptResponse
from ...session import AcpObservable
from ...session.adapters import to_future
from ..context import PromptContext
from .discovery import ExceptionHandlerDef, most_specific
from .invocation import InvocationContext, ReturnValueHandler
from .resolvers import ResolvedCall

if TYPE_CHECKING:
    from ..agent import AcpAsyncAgent

__all__ = ["Dispatcher", "Target"]

_log = logging.getLogger("rxacp.agent.support")

PROMPT = "session/prompt"


class _Vetoed(Exception):
    """An interceptor refused the call; carries the error to answer."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _Pending:
    """A handler's return value that needs the Rx steps (see :meth:`Dispatcher.invoke`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Target:
    """What one ACP method is routed to: the checked handler and what its answer must be."""

    def __init__(self, method: str, kind: str, result_type: Any, call: ResolvedCall) -> None:
        self.method = method
        self.kind = kind
        self.result_type = result_type
        self.call = call


class _Chain:
    """The interceptors of one call: those whose ``pre_handle`` returned are 'started'."""

    def __init__(self, interceptors: Sequence[Any], inv: InvocationContext) -> None:
        self._all = interceptors
        self._inv = inv
        self._started: list[Any] = []
        self._completed = False
        self.error: BaseException | None = None

    def pre_handle(self) -> None:
        for interceptor in self._all:
            hook = getattr(interceptor, "pre_handle", None)
            try:
                verdict = hook(self._inv) if hook is not None else None
            except Exception as exc:
                raise _Vetoed(exc) from exc
            if verdict is False:
                raise _Vetoed(
                    AcpProtocolException.invalid_request(
                        f"{self._inv.method} was rejected by {type(interceptor).__name__}"
                    )
                )
            self._started.append(interceptor)

    def post_handle(self, result: Any) -> Any:
        for interceptor in reversed(self._started):
            hook = getattr(interceptor, "post_handle", None)
            if hook is not None:
                replaced = hook(self._inv, result)
                if replaced is not None:
                    result = replaced
        return result

    def on_error(self, exc: BaseException) -> Any:
        """Run the ``on_error`` hooks inside out; the first value one returns replaces the
        result (``None``: the error goes on)."""
        for interceptor in reversed(self._started):
            hook = getattr(interceptor, "on_error", None)
            if hook is not None:
                try:
                    replacement = hook(self._inv, exc)
                except Exception:
                    _log.exception("interceptor on_error failed")
                    continue
                if replacement is not None:
                    return replacement
        return None

    def after_completion(self) -> None:
        if self._completed:
            return
        self._completed = True
        for interceptor in reversed(self._started):
            hook = getattr(interceptor, "after_completion", None)
            if hook is not None:
                try:
                    hook(self._inv, self.error)
                except Exception:
                    _log.exception("interceptor after_completion failed")


class Dispatcher:
    """Turns handler calls into Observables for the agent layer (bind the agent after build)."""

    def __init__(
        self,
        instance: object,
        interceptors: Sequence[Any],
        return_handlers: Sequence[ReturnValueHandler],
        exception_handlers: Sequence[tuple[ExceptionHandlerDef, ResolvedCall]],
    ) -> None:
        self._instance = instance
        self._interceptors = tuple(interceptors)
        self._return_handlers = tuple(return_handlers)
        self._exception_handlers = list(exception_handlers)
        self.agent: AcpAsyncAgent | None = None

    # ------------------------------------------------------------------ adapters
    def adapter(self, target: Target) -> Callable[..., reactivex.Observable[Any]]:
        """The function given to the agent builder for ``target`` (``ctx``: prompts only)."""

        def handle(request: Any, ctx: PromptContext | None = None) -> reactivex.Observable[Any]:
            return self.invoke(target, request, ctx)

        return handle

    def invoke(
        self, target: Target, request: Any, ctx: PromptContext | None
    ) -> reactivex.Observable[Any]:
        """A cold Observable of the answer of one call (one value, or the error to answer).

        The common case — the handler returns a plain value (no return-value handler takes it)
        — runs without an Rx pipeline: pre_handle, the handler, the answer's checks and
        post_handle in one go (on the worker pool for ``def`` handlers), then the answer.
        Anything else (an Observable, an awaitable, a failure to recover from) continues
        through the same steps as Rx operators (measured: the pipeline per call doubled the
        decorator reference agent's CPU per round trip)::

            --R|   (R: the answer after post_handle)     --X   (the error, after recovery)
        """

        def subscribe(
            observer: abc.ObserverBase[Any], _scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            inv = InvocationContext(
                target.method, request, self._instance, target.call.name, self.agent, ctx
            )
            chain = _Chain(self._interceptors, inv)
            after = Disposable(chain.after_completion)  # once: completion or disposal
            running, rest = SingleAssignmentDisposable(), SingleAssignmentDisposable()

            def work() -> Any:
                chain.pre_handle()
                value = target.call.fn(*target.call.arguments(inv))
                if after.is_disposed or self._needs_rx(value, inv):  # disposed: not emitted
                    return _Pending(value)
                return chain.post_handle(self._final(value, inv, target))

            def on_error(error: Exception) -> None:
                chain.error = error
                observer.on_error(error)
                after.dispose()

            def on_completed() -> None:
                observer.on_completed()
                after.dispose()

            def finish(source: reactivex.Observable[Any]) -> None:
                rest.disposable = source.subscribe(observer.on_next, on_error, on_completed)

            def recover(error: Exception, _source: Any = None) -> reactivex.Observable[Any]:
                return self._recover(error, inv, target, chain)

            def settled(value: Any) -> None:
                if isinstance(value, _Pending):
                    finish(
                        self._realize(value.value, inv, target).pipe(
                            ops.map(chain.post_handle), ops.catch(recover)
                        )
                    )
                else:
                    observer.on_next(value)
                    on_completed()

            def failed(error: Exception) -> None:
                finish(recover(error))

            if target.call.is_async or self.agent is None:  # inline, on the loop
                try:
                    value = work()
                except Exception as exc:
                    failed(exc)
                else:
                    settled(value)
            else:
                running.disposable = self.agent.session.run_blocking(
                    work, name=target.call.name, lane=target.method
                ).subscribe(settled, failed)
            return CompositeDisposable(running, rest, after)

        return AcpObservable(subscribe)

    def _needs_rx(self, value: Any, inv: InvocationContext) -> bool:
        """Whether a return value needs more than :meth:`_final`: a return-value handler
        takes it, or it is an Observable or an awaitable."""
        if isinstance(value, reactivex.Observable) or inspect.isawaitable(value):
            return True
        return any(handler.supports(value, inv) for handler in self._return_handlers)

    # ------------------------------------------------------------------ steps
    def _run(self, call: ResolvedCall, fn: Callable[[], Any]) -> reactivex.Observable[Any]:
        """``fn()`` on the worker pool (``def``) or inline on the loop (``async def``)."""
        if call.is_async or self.agent is None:
            return reactivex.defer(lambda _s: reactivex.of(fn()))
        return self.agent.session.run_blocking(fn, name=call.name)

    def _realize(
        self, value: Any, inv: InvocationContext, target: Target
    ) -> reactivex.Observable[Any]:
        """The answer a return value stands for (custom handlers, Observables, awaitables)."""
        for handler in self._return_handlers:
            if handler.supports(value, inv):
                value = handler.handle(value, inv)
                break
        if isinstance(value, reactivex.Observable):
            return value.pipe(
                ops.take(1),
                ops.default_if_empty(None),
                ops.flat_map(lambda v: self._realize(v, inv, target)),
            )
        if inspect.isawaitable(value):
            assert self.agent is not None
            return reactivex.from_future(to_future(value, self.agent.session.loop)).pipe(
                ops.flat_map(lambda v: self._realize(v, inv, target))
            )
        return reactivex.of(self._final(value, inv, target))

    def _final(self, value: Any, inv: InvocationContext, target: Target) -> Any:
        if isinstance(value, BaseException):
            raise value
        if target.kind == "notification":
            return None
        if target.method == PROMPT:
            if isinstance(value, str):
                assert inv.prompt_context is not None
                inv.prompt_context.send_message(value)
                return PromptResponse.end_turn()
            if value is None:
                return PromptResponse.end_turn()
        result_type = target.result_type
        if value is None or result_type is None:  # extension request: any JSON (None -> {})
            return empty_result(result_type, value, inv.handler_name)
        if isinstance(value, (result_type, dict)):
            return value
        expected = f"{result_type.__name__}, None" + (" or str" if target.method == PROMPT else "")
        name = type(value).__name__
        got = name if isinstance(value, AcpModel) else f"a {name}"
        raise AcpProtocolException(
            AcpErrorCodes.INTERNAL_ERROR,
            f"{inv.handler_name} returned {got}; a {target.method} handler returns {expected}",
        )

    def _recover(
        self, exc: Exception, inv: InvocationContext, target: Target, chain: _Chain
    ) -> reactivex.Observable[Any]:
        if isinstance(exc, _Vetoed):
            error = exc.error
            return reactivex.throw(error if isinstance(error, Exception) else exc)
        replacement = chain.on_error(exc)
        if replacement is not None:  # Java onError: an interceptor recovered the call
            return self._realize(replacement, inv, target)
        found = most_specific([d for d, _ in self._exception_handlers], exc)
        if found is None:
            return reactivex.throw(exc)
        call = next(c for d, c in self._exception_handlers if d is found)
        inv.exception = exc

        def handle() -> Any:
            return call.fn(*call.arguments(inv))

        return self._run(call, handle).pipe(
            ops.flat_map(lambda value: self._realize(value, inv, target))
        )
