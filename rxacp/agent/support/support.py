"""``AcpAgentSupport``: turns an ``@acp_agent`` object into a running agent.

``create(instance)`` discovers the handlers (conflicts fail there); ``build()`` checks every
handler signature against the argument resolvers (an unresolvable parameter fails there, never
at the first call) and wires the handlers into an ``AcpAgent.async_`` builder.

Why the async agent underneath: returned Observables and awaitables are subscribed, not
waited for on a thread, so a disposed prompt turn cancels them instead of leaving a worker
blocked (where each kind of handler runs: ``dispatch.py``).

This module is *not* responsible for the handler call pipeline (``dispatch.py``) or the prompt
turn rules (``rxacp.agent.turn``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import uuid
from typing import Any, Self

from reactivex import abc

from ..._durations import Duration, to_seconds
from ...schema import AgentCapabilities, NewSessionResponse, PromptCapabilities
from ...schema.methods import METHODS
from ...transport.base import AcpTransport
from ..agent import AcpAsyncAgent
from ..builder import AcpAgent, AsyncAgentBuilder
from ..timeouts import PromptTimeouts
from .discovery import AgentDefinition, discover
from .dispatch import Dispatcher, Target
from .invocation import ArgumentResolver, ReturnValueHandler
from .resolvers import BUILTIN_RESOLVERS, ResolvedCall, analyze

__all__ = ["AcpAgentSupport", "AcpAgentSupportBuilder"]


class AcpAgentSupportBuilder:
    """Configures and builds a decorator agent. Every setter returns the builder."""

    def __init__(self) -> None:
        self._definition: AgentDefinition | None = None
        self._transport: AcpTransport | None = None
        self._interceptors: list[tuple[int, Any]] = []  # (order, interceptor), as added
        self._resolvers: list[ArgumentResolver] = []
        self._return_handlers: list[ReturnValueHandler] = []
        self._options: list[tuple[str, tuple[Any, ...]]] = []

    # -- what and where ----------------------------------------------------------------------
    def agent(self, agent: object) -> Self:
        """The ``@acp_agent`` object (or class, instantiated without arguments) to serve.

        Raises ``TypeError`` at once if it is not an ACP agent or two methods claim one ACP
        method (or one exception type).
        """
        if self._definition is not None:
            raise ValueError("this builder already has an agent")
        instance = agent() if isinstance(agent, type) else agent
        self._definition = discover(instance)
        return self

    def transport(self, transport: AcpTransport) -> Self:
        """The transport to serve on (e.g. ``StdioAcpAgentTransport()``)."""
        if not isinstance(transport, AcpTransport):
            raise TypeError(f"transport must be an AcpTransport, not {type(transport).__name__}")
        self._transport = transport
        return self

    # -- extension points ----------------------------------------------------------------------
    def interceptor(self, interceptor: Any, *, order: int | None = None) -> Self:
        """Add an interceptor (see :class:`AcpInterceptor`). They run sorted by ``order``
        (Java ``getOrder()``; default: the interceptor's ``order`` attribute, else 0), lowest
        first, and in the order added when equal."""
        hooks = ("pre_handle", "post_handle", "on_error", "after_completion")
        if not any(callable(getattr(interceptor, h, None)) for h in hooks):
            raise TypeError(f"{interceptor!r} has none of the interceptor methods {hooks}")
        rank = getattr(interceptor, "order", 0) if order is None else order
        if not isinstance(rank, int) or isinstance(rank, bool):
            raise TypeError(f"interceptor order must be an int, not {type(rank).__name__}")
        self._interceptors.append((rank, interceptor))
        return self

    def argument_resolver(self, resolver: ArgumentResolver) -> Self:
        """Add a custom argument resolver (asked before the built-in ones)."""
        if not (callable(getattr(resolver, "supports", None)) and callable(resolver.resolve)):
            raise TypeError(f"{resolver!r} needs supports(param) and resolve(param, invocation)")
        self._resolvers.append(resolver)
        return self

    def return_value_handler(self, handler: ReturnValueHandler) -> Self:
        """Add a custom return value handler (asked before the built-in handling)."""
        if not (callable(getattr(handler, "supports", None)) and callable(handler.handle)):
            raise TypeError(f"{handler!r} needs supports(value, invocation) and handle(...)")
        self._return_handlers.append(handler)
        return self

    # -- agent builder options -----------------------------------------------------------------
    def _option(self, name: str, *args: Any) -> Self:
        self._options.append((name, args))
        return self

    def _duration(self, name: str, value: Duration | None) -> Self:
        to_seconds(value, name=name)
        return self._option(name, value)

    def request_timeout(self, timeout: Duration | None) -> Self:
        """Timeout of agent→client requests (default 60 s; ``0`` disables)."""
        return self._duration("request_timeout", timeout)

    def human_request_timeout(self, timeout: Duration | None) -> Self:
        """Timeout of the agent→client requests a person answers (permission, elicitation;
        default: the request timeout; see the agent builders' option)."""
        return self._duration("human_request_timeout", timeout)

    def cancel_grace_period(self, period: Duration | None) -> Self:
        """SDK policy: how long a prompt handler may take after ``session/cancel`` (60 s)."""
        return self._duration("cancel_grace_period", period)

    def max_prompt_duration(self, duration: Duration | None) -> Self:
        """SDK policy: a hard ceiling on one prompt turn (default off)."""
        return self._duration("max_prompt_duration", duration)

    def hold_prompt_while_cancelling(self, enabled: bool = True) -> Self:
        """SDK policy (default off): hold a prompt that arrives while its session's turn is
        being cancelled until that turn answered (see the agent builders' option)."""
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool, not {type(enabled).__name__}")
        return self._option("hold_prompt_while_cancelling", enabled)

    def prompt_timeouts(self, timeouts: PromptTimeouts) -> Self:
        """Both prompt-turn timers at once (see :class:`~rxacp.agent.PromptTimeouts`)."""
        if not isinstance(timeouts, PromptTimeouts):
            raise TypeError(f"timeouts must be a PromptTimeouts, not {type(timeouts).__name__}")
        return self._option("prompt_timeouts", timeouts)

    def scheduler(self, scheduler: abc.SchedulerBase) -> Self:
        """The scheduler of every timer (tests pass ``TestScheduler``)."""
        return self._option("scheduler", scheduler)

    def event_loop(self, loop: asyncio.AbstractEventLoop) -> Self:
        """Run the connection on a loop you already run."""
        return self._option("event_loop", loop)

    def max_workers(self, count: int) -> Self:
        """Size of the worker pool that runs ``def`` handlers (default 32)."""
        if count < 1:
            raise ValueError("max_workers must be >= 1")
        return self._option("max_workers", count)

    def handler_executor(self, executor: concurrent.futures.Executor) -> Self:
        """Run ``def`` handlers on ``executor`` (see ``AcpAgentBuilder.handler_executor``)."""
        if not isinstance(executor, concurrent.futures.Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor, not {type(executor).__name__}"
            )
        return self._option("handler_executor", executor)

    def agent_capabilities(self, capabilities: AgentCapabilities) -> Self:
        """Advertise exactly these capabilities (default: derived from the handlers)."""
        return self._option("agent_capabilities", capabilities)

    def prompt_capabilities(self, capabilities: PromptCapabilities) -> Self:
        """Prompt content the agent accepts beyond text."""
        return self._option("prompt_capabilities", capabilities)

    # -- build -----------------------------------------------------------------------------------
    def _check(self) -> tuple[AgentDefinition, list[Target], Dispatcher]:
        definition = self._definition
        if definition is None:
            raise ValueError("no agent: use AcpAgentSupport.create(instance) or .agent(instance)")
        check = functools.partial(
            analyze, owner=definition.owner, resolvers=(*self._resolvers, *BUILTIN_RESOLVERS)
        )
        targets = []
        for method, handler in definition.handlers.items():
            spec = handler.mark.spec
            call = check(handler.fn, method=method, request_type=spec.params_type if spec else None)
            result_type = spec.result_type if spec else None
            targets.append(Target(method, handler.mark.kind, result_type, call))
        exception_calls: list[tuple[Any, ResolvedCall]] = [
            (ex, check(ex.fn, method="*", request_type=None, kind="exception_handler"))
            for ex in definition.exception_handlers
        ]
        interceptors = [i for _, i in sorted(self._interceptors, key=lambda pair: pair[0])]
        dispatcher = Dispatcher(
            definition.instance, interceptors, self._return_handlers, exception_calls
        )
        return definition, targets, dispatcher

    def validate(self) -> Self:
        """Check every handler signature now (``build()`` does it too); raises ``TypeError``."""
        self._check()
        return self

    def build(self) -> AcpAsyncAgent:
        """Check the handlers and build the agent (not started). Raises ``TypeError`` naming
        the class, method and parameter of a handler whose signature cannot be resolved."""
        definition, targets, dispatcher = self._check()
        if self._transport is None:
            raise ValueError("no transport: call .transport(...) before build()/run()/start()")
        builder: AsyncAgentBuilder = AcpAgent.async_(self._transport)
        info = definition.info
        builder.agent_info(name=info.name, version=info.version, title=info.title)
        for name, args in self._options:
            getattr(builder, name)(*args)
        for target in targets:
            adapter = dispatcher.adapter(target)
            if target.method in METHODS:
                getattr(builder, f"{METHODS[target.method].python_name}_handler")(adapter)
            elif target.kind == "request":
                builder.ext_request_handler(target.method, adapter)
            else:
                builder.ext_notification_handler(target.method, adapter)
        if "session/new" not in definition.handlers:
            builder.new_session_handler(
                lambda _req: NewSessionResponse(session_id=str(uuid.uuid4()))
            )
        agent = builder.build()
        dispatcher.agent = agent
        return agent

    def start(self) -> AcpAsyncAgent:
        """Build and start serving (non-blocking); returns the running agent."""
        agent = self.build()
        agent.start()
        return agent

    def run(self) -> None:
        """Build, serve until the client disconnects (or Ctrl-C), then close."""
        self.build().run()


class AcpAgentSupport:
    """Entry point of decorator agents::

    AcpAgentSupport.create(HelloAgent()).transport(StdioAcpAgentTransport()).run()
    """

    @staticmethod
    def create(agent: object) -> AcpAgentSupportBuilder:
        """A builder for ``agent`` (an ``@acp_agent`` object, or its class)."""
        return AcpAgentSupportBuilder().agent(agent)

    @staticmethod
    def builder(agent: object | None = None) -> AcpAgentSupportBuilder:
        """An empty builder (add the agent with ``.agent(...)``), or one for ``agent``."""
        builder = AcpAgentSupportBuilder()
        return builder if agent is None else builder.agent(agent)
