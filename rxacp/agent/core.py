"""``AgentCore``: routes client→agent methods to user handlers and owns the prompt turns.

Shared by :class:`AcpAsyncAgent` (handlers return Observables) and :class:`AcpSyncAgent`
(handlers return values and run on the worker pool). Routing is table-driven from
``rxacp.schema.methods.METHODS``: one adapter per kind of method, not one per method.

This module is *not* responsible for the public builder or agent API (``builder.py``,
``agent.py``) nor for the prompt-turn rules themselves (``turn.py``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..errors import AcpProtocolException
from ..roles.handlers import (
    capabilities_from_handlers,
    coerce_params,
    notification_handler,
    parse_params,
    request_handler,
    run_handler,
    unhandled_hint,
)
from ..schema import (
    AgentCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    PromptCapabilities,
)
from ..schema.methods import HUMAN_ANSWERED, METHODS
from ..session import AcpObservable, AcpSession, IncomingNotification, IncomingRequest
from ..session.adapters import as_observable
from ..tracing import install_tracing
from ..transport.base import AcpTransport
from .held import HeldPrompts, busy_error
from .turn import SESSION_CLOSE, PromptTurn

__all__ = ["AgentConfig", "AgentCore"]

_log = logging.getLogger("rxacp.agent")

PROTOCOL_VERSION = 1


class AgentConfig:
    """Everything a builder collected; consumed once by :class:`AgentCore`."""

    def __init__(self, transport: AcpTransport) -> None:
        self.transport = transport
        self.request_timeout: Duration | None = 60.0
        self.human_request_timeout: Duration | None = None
        self.human_request_timeout_set = False  # else: human-answered requests use the above
        self.cancel_grace_period: Duration | None = 60.0
        self.max_prompt_duration: Duration | None = None
        self.scheduler: abc.SchedulerBase | None = None
        self.loop: Any = None
        self.max_workers = 32
        self.executor: Any = None
        self.hold_prompt_while_cancelling = False
        self.agent_info: Implementation | None = None
        self.agent_capabilities: AgentCapabilities | None = None
        self.prompt_capabilities: PromptCapabilities | None = None
        self.handlers: dict[str, Callable[..., Any]] = {}
        self.v2: Any = None
        """The ACP v2 handler set (``rxacp.agent.v2.AgentHandlers``), if the agent serves v2."""
        self.protocol_versions: tuple[int, ...] | None = None
        self.ext_requests: dict[str, Callable[..., Any]] = {}
        self.ext_notifications: dict[str, Callable[..., Any]] = {}
        self.tracing: bool | None = None
        self.tracer_provider: Any = None


class AgentCore:
    """The agent side of one connection."""

    def __init__(self, config: AgentConfig, *, blocking: bool) -> None:
        self.blocking = blocking
        self.config = config
        self.session = AcpSession(
            config.transport,
            role="agent",
            request_timeout=config.request_timeout,
            scheduler=config.scheduler,
            loop=config.loop,
            max_workers=config.max_workers,
            executor=config.executor,
        )
        self.tracer = install_tracing(self.session, "agent", config.tracing, config.tracer_provider)
        self.cancel_grace_period = to_seconds(
            config.cancel_grace_period, name="cancel_grace_period"
        )
        self.human_request_timeout: float | None = (
            to_seconds(config.human_request_timeout, name="human_request_timeout")
            if config.human_request_timeout_set
            else self.session.request_timeout
        )
        """The timeout of agent→client requests a person answers (``HUMAN_ANSWERED``)."""
        self.max_prompt_duration = to_seconds(
            config.max_prompt_duration, name="max_prompt_duration"
        )
        self.client_capabilities: NegotiatedCapabilities | None = None
        self.protocol_version = PROTOCOL_VERSION
        """The connection's protocol version (1 until an ``initialize`` chose v2)."""
        self.methods: Mapping[str, Any] = METHODS
        """The method table of that version (``rxacp.schema.v2.methods.METHODS`` on v2)."""
        self.handlers: dict[str, Callable[..., Any]] = config.handlers
        """The user's handlers of that version, by method name."""
        self.turn_factory: Callable[..., PromptTurn] = PromptTurn
        self.turns: dict[str, PromptTurn] = {}
        self.held = HeldPrompts(
            self.session,
            self.cancel_grace_period,
            enabled=config.hold_prompt_while_cancelling,
            active=self.turns.__contains__,
        )
        """Prompts that arrived during a cancelling turn (the builder option; SDK policy)."""
        self._context_factory: Callable[[PromptTurn], Any] | None = None
        self.session.unhandled_request_hint = unhandled_hint("agent")
        self.session.add_close_listener(lambda _exc: self._on_connection_closed())
        self._register()

    # ------------------------------------------------------------------ registration
    def set_context_factory(self, factory: Callable[[PromptTurn], Any]) -> None:
        """How a prompt handler's context is made (sync or async agent)."""
        self._context_factory = factory

    def _register(self) -> None:
        handlers = self.handlers
        for spec in self.methods.values():
            if spec.side != "agent":
                continue
            user = handlers.get(spec.name)
            if spec.name == "initialize":
                self.session.set_request_handler(spec.name, self._initialize)
            elif spec.name == "session/prompt":
                if user is not None:
                    # never held: a turn must see the session/cancel that follows it (and
                    # be answered cancelled); one turn per session bounds them anyway
                    self.session.set_request_handler(spec.name, self._prompt, held=False)
            elif spec.name == "session/cancel":
                self.session.set_notification_handler(spec.name, self._cancel, ordered=False)
            elif user is None:
                continue
            elif spec.kind == "request":
                before = self._close_turn if spec.name == SESSION_CLOSE else None
                handler = request_handler(
                    self.session, spec, user, blocking=self.blocking, before=before
                )
                self.session.set_request_handler(spec.name, handler)
            else:
                self.session.set_notification_handler(
                    spec.name,
                    notification_handler(self.session, spec, user, blocking=self.blocking),
                )
        for method, fn in self.config.ext_requests.items():
            self.session.set_request_handler(
                method, request_handler(self.session, None, fn, blocking=self.blocking)
            )
        for method, fn in self.config.ext_notifications.items():
            self.session.set_notification_handler(
                method, notification_handler(self.session, None, fn, blocking=self.blocking)
            )
        if self.config.v2 is not None and self.protocol_version == PROTOCOL_VERSION:
            from .v2.router import install_router  # v2 loads only for agents that serve it

            install_router(self)

    def _close_turn(self, _req: IncomingRequest, params: Any) -> None:
        """``session/close`` cancels the session's running turn before the user's handler."""
        session_id = getattr(params, "session_id", None) or ""
        turn = self.turns.get(session_id)
        if turn is not None:
            turn.cancel_from_session(SESSION_CLOSE)
        self.held.cancel(session_id)

    # ------------------------------------------------------------------ initialize
    def _initialize(self, req: IncomingRequest) -> reactivex.Observable[Any]:
        request = InitializeRequest.from_wire(req.params if req.params is not None else {})
        # The capabilities' wire form through the request's serializer, built with its validator
        # just now: ``client_capabilities.to_wire()`` would build ClientCapabilities' own (cold
        # start: one model build fewer before the first answer).
        self.client_capabilities = NegotiatedCapabilities(
            request.to_wire().get("clientCapabilities") or {},
            PROTOCOL_VERSION,
            peer="client",
            peer_info=request.client_info,
        )
        user = self.config.handlers.get("initialize")
        if user is not None:
            return run_handler(self.session, user, request, blocking=self.blocking, lane=req.method)
        return reactivex.of(self.default_initialize_response())

    def default_initialize_response(self) -> InitializeResponse:
        """Protocol version 1, the builder's agent info, capabilities derived from handlers."""
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=self.config.agent_capabilities or self.derived_capabilities(),
            agent_info=self.config.agent_info,
            auth_methods=[],
        )

    def derived_capabilities(self) -> AgentCapabilities:
        """What the registered handlers imply: each handled method's capability path from the
        method table (``loadSession`` iff a load handler, ``sessionCapabilities.list`` iff a
        list handler, ...), plus the builder's prompt capabilities."""
        specs = (METHODS[m] for m in self.config.handlers if METHODS.get(m) is not None)
        wire = capabilities_from_handlers(
            (spec for spec in specs if spec.side == "agent"), AgentCapabilities
        )
        caps = AgentCapabilities.from_wire(wire)
        caps.prompt_capabilities = self.config.prompt_capabilities
        return caps

    # ------------------------------------------------------------------ prompt turns
    def _prompt(self, req: IncomingRequest) -> None:
        spec = self.methods["session/prompt"]
        request = parse_params(spec.params_type, req.params)
        session_id: str = request.session_id
        active = self.turns.get(session_id)
        if active is not None:
            if not self.held.hold(active, req, lambda: self._prompt(req)):
                req.respond_error(busy_error(session_id))
            return
        turn = self.turn_factory(self, req, session_id, request)
        self.turns[session_id] = turn
        assert self._context_factory is not None
        context = self._context_factory(turn)
        user = self.handlers["session/prompt"]
        if self.tracer is not None:  # the handler runs in the turn's span (its own spans nest)
            user = self.tracer.in_turn(session_id, user)
        if self.blocking:
            turn.start(
                run_handler(self.session, user, request, context, blocking=True, lane=req.method)
            )
            return
        try:
            value = user(request, context)
        except Exception as exc:
            turn.finish_now(error=exc)
            return
        if isinstance(value, reactivex.Observable) or inspect.isawaitable(value):
            turn.start(as_observable(value))
        else:  # a plain value: the answer, without an Rx subscription
            turn.finish_now(result=value)

    def _cancel(self, note: IncomingNotification) -> None:
        spec = self.methods["session/cancel"]
        try:
            params = parse_params(spec.params_type, note.params)
        except AcpProtocolException:
            _log.warning("ignoring malformed session/cancel: %r", note.params)
            return
        turn = self.turns.get(params.session_id)
        if turn is not None:
            turn.cancel_from_session()
        self.held.cancel(params.session_id)
        user = self.handlers.get("session/cancel")
        if user is not None:
            run_handler(self.session, user, params, blocking=self.blocking).subscribe(
                on_error=lambda e: _log.error("cancel handler failed: %s", e, exc_info=e)
            )

    def turn_finished(self, turn: PromptTurn) -> None:
        """Forget an answered turn, so its session can start the next one."""
        if self.turns.get(turn.session_id) is turn:
            del self.turns[turn.session_id]
            self.held.turn_answered(turn.session_id)

    def _on_connection_closed(self) -> None:
        for turn in list(self.turns.values()):
            turn.on_connection_closed()
        self.turns.clear()
        self.held.clear()

    # ------------------------------------------------------------------ agent → client
    def call(self, method: str, params: Any) -> AcpObservable[Any]:
        """A cold Observable of one agent→client request, gated on the client's capabilities::

        subscribe ──request──▶ ─────R|
        not advertised:         X          (AcpCapabilityException, nothing sent)
        """
        spec = self.methods[method]
        capability, caps = spec.capability, self._client_caps()
        if capability is not None and not caps.supports(capability):

            def refuse(
                observer: abc.ObserverBase[Any], _s: abc.SchedulerBase | None = None
            ) -> abc.DisposableBase:
                try:
                    caps.require(capability)
                except Exception as exc:
                    observer.on_error(exc)
                return Disposable()

            return AcpObservable(refuse)
        human: dict[str, Any] = {}
        if method in HUMAN_ANSWERED and self.config.human_request_timeout_set:
            human = {"timeout": self.human_request_timeout}
            human["timeout_setting"] = "human_request_timeout"
        return self.session.send_request(
            method, coerce_params(spec.params_type, params), spec.result_type, **human
        )

    def _client_caps(self) -> NegotiatedCapabilities:
        return self.client_capabilities or NegotiatedCapabilities({}, peer="client")

    def wait_bound(self) -> float | None:
        """How long a blocking agent→client call waits at most: the longest of the request
        timeouts + 5 s (the request itself times out first); ``None`` if one is off."""
        plain, human = self.session.request_timeout, self.human_request_timeout
        return None if plain is None or human is None else max(plain, human) + 5.0

    def notify(self, method: str, params: Any) -> None:
        """Send an agent→client notification, gated like :meth:`call` (raises at once)."""
        spec = self.methods[method]
        if spec.capability is not None:
            self._client_caps().require(spec.capability)
        self.session.send_notification(method, coerce_params(spec.params_type, params))
