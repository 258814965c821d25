"""``AcpAgent.async_(transport)`` / ``AcpAgent.sync(transport)``: the agent builders.

Each client→agent method has one handler setter (``prompt_handler``, ``new_session_handler``...).
Async builders take handlers returning Observables (or awaitables, or plain values); sync
builders take handlers returning values, run on a worker pool. The timing options are SDK policy
(see ``docs/cancellation.md``).

This module is *not* responsible for running anything: ``build()`` hands the collected
configuration to :class:`AcpAsyncAgent` / :class:`AcpSyncAgent`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from .. import schema
from .._durations import Duration, to_seconds
from ..roles.builders import (
    BlockingBuilder,
    HandlerSetter,
    ReactiveBuilder,
    RoleBuilder,
    TurnSetter,
)
from ..schema import (
    AgentCapabilities,
    Implementation,
    PromptCapabilities,
    PromptRequest,
    PromptResponse,
)
from ..schema import methods as m
from ..transport.base import AcpTransport
from .agent import AcpAsyncAgent, AcpSyncAgent
from .context import PromptContext, SyncPromptContext
from .core import AgentConfig
from .timeouts import PromptTimeouts

if TYPE_CHECKING:
    from ..schema import unstable  # noqa: F401  # the unstable handlers' models, named
    from .v2 import AgentHandlers as AgentHandlersV2

__all__ = [
    "AcpAgent",
    "AcpAgentBuilder",
    "AsyncAgentBuilder",
    "SyncAgentBuilder",
]

_A = TypeVar("_A", AcpAsyncAgent, AcpSyncAgent)


_AGENT_RESERVED = {
    "initialize": "initialize_handler()",
    "session/prompt": "prompt_handler()",
    "session/cancel": "cancel_handler()",
}
"""Methods a raw handler may not take over on the agent side (their rules are the SDK's)."""


class AcpAgentBuilder(RoleBuilder, Generic[_A]):
    """Options and handlers shared by both builders."""

    def __init__(self, transport: AcpTransport) -> None:
        if not isinstance(transport, AcpTransport):
            raise TypeError(f"transport must be an AcpTransport, not {type(transport).__name__}")
        self._config = AgentConfig(transport)

    # -- options -------------------------------------------------------------------------------
    def human_request_timeout(self, timeout: Duration | None) -> Self:
        """Timeout of the agent→client requests a person answers: ``session/request_permission``
        and ``elicitation/create`` (default: the ``request_timeout``, 60 s; ``0`` or ``None``
        disables). A person may take longer than a minute to click; the error then says which
        request timed out, after how long, and names this setting. See
        ``docs/cancellation.md``."""
        to_seconds(timeout, name="human_request_timeout")
        self._config.human_request_timeout = timeout
        self._config.human_request_timeout_set = True
        return self

    def cancel_grace_period(self, period: Duration | None) -> Self:
        """SDK policy: how long after ``session/cancel`` a handler may take before the SDK
        disposes it and answers ``cancelled`` itself (default 60 s; ``0`` disables)."""
        to_seconds(period, name="cancel_grace_period")
        self._config.cancel_grace_period = period
        return self

    def max_prompt_duration(self, duration: Duration | None) -> Self:
        """SDK policy: a hard ceiling on one prompt turn; answered ``-32800`` with data
        ``{"maxPromptDuration": "PT30M"}`` (default off)."""
        to_seconds(duration, name="max_prompt_duration")
        self._config.max_prompt_duration = duration
        return self

    def hold_prompt_while_cancelling(self, enabled: bool = True) -> Self:
        """SDK policy (default off): a prompt that arrives while its session's turn is being
        cancelled waits until the cancelled turn was answered, then runs, instead of being
        refused ``-32600``; bounded by the cancel grace period (``-32600`` if the turn still
        has not answered then). See ``docs/cancellation.md``."""
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool, not {type(enabled).__name__}")
        self._config.hold_prompt_while_cancelling = enabled
        return self

    def prompt_timeouts(self, timeouts: PromptTimeouts) -> Self:
        """Both prompt-turn timers at once (Java ``promptTimeouts``): ``PromptTimeouts.DEFAULTS``
        (60 s grace, no maximum), ``PromptTimeouts.NONE``, or a ``with_*`` copy."""
        if not isinstance(timeouts, PromptTimeouts):
            raise TypeError(f"timeouts must be a PromptTimeouts, not {type(timeouts).__name__}")
        self._config.cancel_grace_period = timeouts.cancel_grace_period or 0
        self._config.max_prompt_duration = timeouts.max_prompt_duration
        return self

    def event_loop(self, loop: asyncio.AbstractEventLoop) -> Self:
        """Run the connection on a loop you already run (default: its own daemon thread)."""
        self._config.loop = loop
        return self

    def max_workers(self, count: int) -> Self:
        """Size of the worker pool that runs blocking handlers (default 32)."""
        if count < 1:
            raise ValueError("max_workers must be >= 1")
        self._config.max_workers = count
        return self

    def agent_info(
        self,
        info: Implementation | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
        title: str | None = None,
    ) -> Self:
        """The ``agentInfo`` sent in the default ``initialize`` answer."""
        if info is None:
            if name is None or version is None:
                raise ValueError("agent_info needs an Implementation or name= and version=")
            info = Implementation(name=name, version=version, title=title)
        self._config.agent_info = info
        return self

    def agent_capabilities(self, capabilities: AgentCapabilities) -> Self:
        """Advertise exactly these capabilities (default: derived from the registered handlers)."""
        self._config.agent_capabilities = capabilities
        return self

    def prompt_capabilities(self, capabilities: PromptCapabilities) -> Self:
        """Prompt content the agent accepts beyond text (image, audio, embedded context)."""
        self._config.prompt_capabilities = capabilities
        return self

    # -- ACP v2 (Draft, opt-in) ------------------------------------------------------------
    def protocol_v2(self, handlers: AgentHandlersV2) -> Self:
        """Also serve ACP v2 (a Draft, experimental) clients, with these handlers.

        ``handlers`` is an :class:`rxacp.agent.v2.AgentHandlers` (run like this builder's own:
        Observables on an async agent, values on worker threads on a sync one). A connection
        speaks one version, chosen by ``initialize``: a client asking for 2 or more gets v2 and
        these handlers; any other gets v1 and this builder's handlers. Without this option the
        agent is v1 only, exactly as before. See ``docs/v2.md``.
        """
        from .v2 import AgentHandlers

        if not isinstance(handlers, AgentHandlers):
            raise TypeError(
                f"protocol_v2 takes an rxacp.agent.v2.AgentHandlers, not {type(handlers).__name__}"
            )
        self._config.v2 = handlers
        return self

    def protocol_versions(self, *versions: int) -> Self:
        """The protocol versions this agent serves: ``(1,)`` (the default), ``(1, 2)`` or
        ``(2,)`` (the v2 ones need :meth:`protocol_v2`). A v2-only agent answers a v1 client
        with version 2, as the spec says (the client then disconnects)."""
        wanted = tuple(sorted(set(versions)))
        if not wanted or not set(wanted) <= {1, 2}:
            raise ValueError(f"protocol_versions takes 1 and/or 2, not {versions!r}")
        self._config.protocol_versions = wanted
        return self

    # -- handlers (typed from the method table: rxacp.roles.builders) ----------------------------
    _reserved = _AGENT_RESERVED

    def _set_option(self, name: str, value: Any) -> None:
        setattr(self._config, name, value)

    def _set_handler(self, method: str, fn: Callable[..., Any]) -> None:
        self._config.handlers[method] = fn

    def _set_raw(self, method: str, fn: Callable[[Any], Any], notification: bool) -> None:
        config = self._config
        (config.ext_notifications if notification else config.ext_requests)[method] = fn

    initialize_handler = HandlerSetter[schema.InitializeRequest, schema.InitializeResponse](
        m.INITIALIZE, "Default: protocol 1, agent info, capabilities from the handlers."
    )
    authenticate_handler = HandlerSetter[
        "schema.AuthenticateRequest", "schema.AuthenticateResponse"
    ](m.AUTHENTICATE)
    logout_handler = HandlerSetter["schema.LogoutRequest", "schema.LogoutResponse"](m.LOGOUT)
    new_session_handler = HandlerSetter[schema.NewSessionRequest, schema.NewSessionResponse](
        m.SESSION_NEW
    )
    load_session_handler = HandlerSetter["schema.LoadSessionRequest", "schema.LoadSessionResponse"](
        m.SESSION_LOAD
    )
    list_sessions_handler = HandlerSetter[
        "schema.ListSessionsRequest", "schema.ListSessionsResponse"
    ](m.SESSION_LIST)
    delete_session_handler = HandlerSetter[
        "schema.DeleteSessionRequest", "schema.DeleteSessionResponse"
    ](m.SESSION_DELETE)
    resume_session_handler = HandlerSetter[
        "schema.ResumeSessionRequest", "schema.ResumeSessionResponse"
    ](m.SESSION_RESUME)
    close_session_handler = HandlerSetter[
        "schema.CloseSessionRequest", "schema.CloseSessionResponse"
    ](m.SESSION_CLOSE, "The SDK cancels the session's active turn before calling it.")
    set_session_mode_handler = HandlerSetter[
        "schema.SetSessionModeRequest", "schema.SetSessionModeResponse"
    ](m.SESSION_SET_MODE)
    set_session_config_option_handler = HandlerSetter[
        "schema.SetSessionConfigOptionRequest", "schema.SetSessionConfigOptionResponse"
    ](m.SESSION_SET_CONFIG_OPTION)
    cancel_handler = HandlerSetter[schema.CancelNotification, None](
        m.SESSION_CANCEL, "Called after the SDK marked the turn cancelled."
    )
    fork_session_handler = HandlerSetter[
        "unstable.ForkSessionRequest", "unstable.ForkSessionResponse"
    ](m.SESSION_FORK)
    list_providers_handler = HandlerSetter[
        "unstable.ListProvidersRequest", "unstable.ListProvidersResponse"
    ](m.PROVIDERS_LIST)
    set_provider_handler = HandlerSetter[
        "unstable.SetProviderRequest", "unstable.SetProviderResponse"
    ](m.PROVIDERS_SET)
    disable_provider_handler = HandlerSetter[
        "unstable.DisableProviderRequest", "unstable.DisableProviderResponse"
    ](m.PROVIDERS_DISABLE)

    prompt_handler = TurnSetter[PromptRequest, PromptResponse, PromptContext, SyncPromptContext](
        m.SESSION_PROMPT,
        "``fn(request, context)``; see ``docs/cancellation.md``. Cost: a plain return value (a "
        "``PromptResponse`` or ``None``) answers without any Rx; a returned Observable costs a "
        "reactivex subscription (rxacp's own part is a bare observer, no trampoline), and "
        "``reactivex.just(r)`` / ``defer(...)`` also a run of reactivex's current-thread "
        "trampoline (measured: ~1.3x the agent CPU of a plain value per echo round trip over "
        "stdio, ``benchmarks/README.md``). Return an Observable where the handler waits "
        "(client calls, timers).",
    )

    def build(self) -> _A:
        """Create the agent (not started: call ``start()`` or ``run()``)."""
        raise NotImplementedError

    def _checked(self) -> AgentConfig:
        versions = self._config.protocol_versions
        if versions is not None and 2 in versions and self._config.v2 is None:
            raise ValueError("protocol_versions(2) needs protocol_v2(handlers)")
        if versions == (1,):
            self._config.v2 = None
        if self._config.v2 is not None:
            self._config.v2.check()
        return self._config


class AsyncAgentBuilder(AcpAgentBuilder[AcpAsyncAgent], ReactiveBuilder):
    """Builds an :class:`AcpAsyncAgent`: handlers return Observables (or awaitables/values)."""

    def build(self) -> AcpAsyncAgent:
        """Create the agent (not started: call ``start()``, ``run()`` or use ``async with``)."""
        return AcpAsyncAgent(self._checked())


class SyncAgentBuilder(AcpAgentBuilder[AcpSyncAgent], BlockingBuilder):
    """Builds an :class:`AcpSyncAgent`: handlers return values and run on worker threads."""

    def build(self) -> AcpSyncAgent:
        """Create the agent (not started: call ``start()`` or ``run()``)."""
        return AcpSyncAgent(self._checked())


class AcpAgent:
    """Entry point: ``AcpAgent.sync(transport)`` or ``AcpAgent.async_(transport)``."""

    @staticmethod
    def async_(transport: AcpTransport) -> AsyncAgentBuilder:
        """A builder for an Rx agent whose handlers return Observables."""
        return AsyncAgentBuilder(transport)

    @staticmethod
    def sync(transport: AcpTransport) -> SyncAgentBuilder:
        """A builder for a blocking agent whose handlers return values."""
        return SyncAgentBuilder(transport)
