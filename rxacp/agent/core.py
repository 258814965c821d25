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
from collections.abc import Callable
from typing import Any

import pydantic
import reactivex
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..errors import AcpErrorCodes, AcpProtocolException
from ..schema import (
    AgentAuthCapabilities,
    AgentCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    PromptCapabilities,
    SessionCapabilities,
)
from ..schema._base import validation_errors
from ..schema.methods import METHODS, MethodSpec
from ..session import AcpObservable, AcpSession, IncomingNotification, IncomingRequest
from ..session.adapters import as_observable
from ..transport.base import AcpTransport
from .turn import SESSION_CLOSE, PromptTurn

__all__ = ["AgentConfig", "AgentCore"]

_log = logging.getLogger("rxacp.agent")

PROTOCOL_VERSION = 1

_BUILDER_NAMES = {spec.name: f"{spec.python_name}_handler" for spec in METHODS.values()}


class AgentConfig:
    """Everything a builder collected; consumed once by :class:`AgentCore`."""

    def __init__(self, transport: AcpTransport) -> None:
        self.transport = transport
        self.request_timeout: Duration | None = 60.0
        self.cancel_grace_period: Duration | None = 60.0
        self.max_prompt_duration: Duration | None = None
        self.scheduler: abc.SchedulerBase | None = None
        self.loop: Any = None
        self.max_workers = 32
        self.agent_info: Implementation | None = None
        self.agent_capabilities: AgentCapabilities | None = None
        self.prompt_capabilities: PromptCapabilities | None = None
        self.handlers: dict[str, Callable[..., Any]] = {}
        self.ext_requests: dict[str, Callable[..., Any]] = {}
        self.ext_notifications: dict[str, Callable[..., Any]] = {}


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
        )
        self.cancel_grace_period = to_seconds(
            config.cancel_grace_period, name="cancel_grace_period"
        )
        self.max_prompt_duration = to_seconds(
            config.max_prompt_duration, name="max_prompt_duration"
        )
        self.client_capabilities: NegotiatedCapabilities | None = None
        self.turns: dict[str, PromptTurn] = {}
        self._context_factory: Callable[[PromptTurn], Any] | None = None
        self.session.unhandled_request_hint = self._hint
        self.session.add_close_listener(lambda _exc: self._on_connection_closed())
        self._register()

    # ------------------------------------------------------------------ registration
    def set_context_factory(self, factory: Callable[[PromptTurn], Any]) -> None:
        """How a prompt handler's context is made (sync or async agent)."""
        self._context_factory = factory

    def _register(self) -> None:
        handlers = self.config.handlers
        for spec in METHODS.values():
            if spec.side != "agent":
                continue
            user = handlers.get(spec.name)
            if spec.name == "initialize":
                self.session.set_request_handler(spec.name, self._initialize)
            elif spec.name == "session/prompt":
                if user is not None:
                    self.session.set_request_handler(spec.name, self._prompt)
            elif spec.name == "session/cancel":
                self.session.set_notification_handler(spec.name, self._cancel, ordered=False)
            elif user is None:
                continue
            elif spec.kind == "request":
                self.session.set_request_handler(spec.name, self._request_adapter(spec, user))
            else:
                self.session.set_notification_handler(
                    spec.name, self._notification_adapter(spec, user)
                )
        for method, fn in self.config.ext_requests.items():
            self.session.set_request_handler(method, self._request_adapter(None, fn))
        for method, fn in self.config.ext_notifications.items():
            self.session.set_notification_handler(method, self._notification_adapter(None, fn))

    def _hint(self, method: str) -> str | None:
        name = _BUILDER_NAMES.get(method)
        if name is None:
            return "register it with ext_request_handler()" if method.startswith("_") else None
        return f"this agent registered no {name}()"

    # ------------------------------------------------------------------ adapters
    def _invoke(self, fn: Callable[..., Any], *args: Any) -> reactivex.Observable[Any]:
        """Run a user handler the right way for this agent kind; always an Observable."""
        if self.blocking:
            return self.session.run_blocking(lambda: fn(*args), name=_name_of(fn))
        return as_observable(fn(*args))

    def _request_adapter(
        self, spec: MethodSpec | None, fn: Callable[..., Any]
    ) -> Callable[[IncomingRequest], reactivex.Observable[Any]]:
        params_type = spec.params_type if spec is not None else None
        result_type = spec.result_type if spec is not None else None

        def handle(req: IncomingRequest) -> reactivex.Observable[Any]:
            params = parse_params(params_type, req.params)
            if spec is not None and spec.name == SESSION_CLOSE:
                turn = self.turns.get(getattr(params, "session_id", None) or "")
                if turn is not None:
                    turn.cancel_from_session(SESSION_CLOSE)
            return self._invoke(fn, params).pipe(
                ops.default_if_empty(None),
                ops.map(lambda value: empty_result(result_type, value)),
            )

        return handle

    def _notification_adapter(
        self, spec: MethodSpec | None, fn: Callable[..., Any]
    ) -> Callable[[IncomingNotification], reactivex.Observable[Any] | None]:
        params_type = spec.params_type if spec is not None else None

        def handle(note: IncomingNotification) -> reactivex.Observable[Any] | None:
            return self._invoke(fn, parse_params(params_type, note.params))

        return handle

    # ------------------------------------------------------------------ initialize
    def _initialize(self, req: IncomingRequest) -> reactivex.Observable[Any]:
        request = InitializeRequest.from_wire(req.params if req.params is not None else {})
        self.client_capabilities = NegotiatedCapabilities(
            request.client_capabilities or {},
            PROTOCOL_VERSION,
            peer="client",
            peer_info=request.client_info,
        )
        user = self.config.handlers.get("initialize")
        if user is not None:
            return self._invoke(user, request)
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
        """What the registered handlers imply (``loadSession`` iff a load handler, ...)."""
        has = self.config.handlers.__contains__
        session_caps: dict[str, Any] = {}
        for method, key in (
            ("session/list", "list"),
            ("session/delete", "delete"),
            ("session/resume", "resume"),
            ("session/close", "close"),
        ):
            if has(method):
                session_caps[key] = {}
        return AgentCapabilities(
            load_session=has("session/load") or None,
            prompt_capabilities=self.config.prompt_capabilities,
            session_capabilities=SessionCapabilities.from_wire(session_caps)
            if session_caps
            else None,
            auth=AgentAuthCapabilities.from_wire({"logout": {}}) if has("logout") else None,
        )

    # ------------------------------------------------------------------ prompt turns
    def _prompt(self, req: IncomingRequest) -> None:
        spec = METHODS["session/prompt"]
        request = parse_params(spec.params_type, req.params)
        session_id: str = request.session_id
        if session_id in self.turns:
            req.respond_error(
                AcpProtocolException.invalid_request(
                    f"session {session_id} already has an active prompt turn; wait for its "
                    "answer (also after session/cancel) before prompting again"
                )
            )
            return
        turn = PromptTurn(self, req, session_id, request)
        self.turns[session_id] = turn
        assert self._context_factory is not None
        context = self._context_factory(turn)
        user = self.config.handlers["session/prompt"]
        if self.blocking:
            turn.start(
                self.session.run_blocking(lambda: user(request, context), name=_name_of(user))
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
        spec = METHODS["session/cancel"]
        try:
            params = parse_params(spec.params_type, note.params)
        except AcpProtocolException:
            _log.warning("ignoring malformed session/cancel: %r", note.params)
            return
        turn = self.turns.get(params.session_id)
        if turn is not None:
            turn.cancel_from_session()
        user = self.config.handlers.get("session/cancel")
        if user is not None:
            self._invoke(user, params).subscribe(
                on_error=lambda e: _log.error("cancel handler failed: %s", e, exc_info=e)
            )

    def turn_finished(self, turn: PromptTurn) -> None:
        """Forget an answered turn, so its session can start the next one."""
        if self.turns.get(turn.session_id) is turn:
            del self.turns[turn.session_id]

    def _on_connection_closed(self) -> None:
        for turn in list(self.turns.values()):
            turn.on_connection_closed()
        self.turns.clear()

    # ------------------------------------------------------------------ agent → client
    def call(self, method: str, params: Any) -> AcpObservable[Any]:
        """A cold Observable of one agent→client request, gated on the client's capabilities::

        subscribe ──request──▶ ─────R|
        not advertised:         X          (AcpCapabilityException, nothing sent)
        """
        spec = METHODS[method]
        if spec.capability is not None:
            caps = self.client_capabilities or NegotiatedCapabilities({}, peer="client")
            if not caps.supports(spec.capability):
                capability = spec.capability

                def refuse(
                    observer: abc.ObserverBase[Any], _s: abc.SchedulerBase | None = None
                ) -> abc.DisposableBase:
                    return _fail_now(observer, caps, capability)

                return AcpObservable(refuse)
        return self.session.send_request(
            method, coerce_params(spec.params_type, params), spec.result_type
        )

    def notify(self, method: str, params: Any) -> None:
        """Send an agent→client notification, gated like :meth:`call` (raises at once)."""
        spec = METHODS[method]
        if spec.capability is not None:
            caps = self.client_capabilities or NegotiatedCapabilities({}, peer="client")
            caps.require(spec.capability)
        self.session.send_notification(method, coerce_params(spec.params_type, params))


def _fail_now(
    observer: abc.ObserverBase[Any], caps: NegotiatedCapabilities, capability: str
) -> abc.DisposableBase:
    try:
        caps.require(capability)
    except Exception as exc:
        observer.on_error(exc)
    return Disposable()


def parse_params(params_type: Any, raw: Any) -> Any:
    """Validate raw params into ``params_type`` (``-32602`` naming the problem on failure)."""
    if params_type is None or params_type is Any:
        return raw
    try:
        return params_type.from_wire(raw if raw is not None else {})
    except pydantic.ValidationError as exc:
        errors = validation_errors(exc)
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
        what = errors[0]["msg"] if errors else "invalid"
        raise AcpProtocolException(
            AcpErrorCodes.INVALID_PARAMS,
            f"Invalid params: {where or 'params'}: {what}",
            errors,
        ) from exc


def coerce_params(params_type: Any, value: Any) -> Any:
    """Accept a model of the right type, or a dict (validated into it)."""
    if params_type is None or params_type is Any or isinstance(value, params_type):
        return value
    if isinstance(value, dict):
        return params_type.from_wire(value)
    return value


def empty_result(result_type: Any, value: Any) -> Any:
    """``None`` from a handler becomes the method's empty response (``{}`` on the wire)."""
    if value is not None or result_type is None or result_type is Any:
        return value if value is not None else {}
    try:
        return result_type()
    except pydantic.ValidationError as exc:
        raise AcpProtocolException.internal_error(
            f"handler returned None but {result_type.__name__} has required fields"
        ) from exc


def _name_of(fn: Callable[..., Any]) -> str:
    """A handler's name for logs (its qualified name)."""
    return str(getattr(fn, "__qualname__", None) or repr(fn))
