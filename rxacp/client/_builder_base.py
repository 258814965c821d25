""":class:`AcpClientBuilder`: the one definition of both client builders — connection options,
consumers, raw handlers, the typed handler setters (one per agent→client method, from the method
table: :mod:`rxacp.roles.builders`, typed per flavour) and the build of the connection.

This module is *not* responsible for the two flavours or the public factory (``builder.py``),
nor for dispatching what is registered (``handlers.py``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.metadata
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Self, TypeAlias, TypeVar

import reactivex
from reactivex import abc

from .. import schema
from .._compat import running_loop
from .._durations import Duration, to_seconds
from ..roles.builders import BlockingBuilder, HandlerSetter, RoleBuilder
from ..schema import (
    AcpModel,
    ClientCapabilities,
    CompleteElicitationNotification,
    Implementation,
    SessionNotification,
)
from ..schema import methods as m
from ..session import AcpSession
from ..tracing import install_tracing
from ..transport.base import AcpTransport
from .async_client import AcpAsyncClient
from .handlers import (
    ClientHandlers,
    KnownSessions,
    PermissionTracker,
    default_client_capabilities,
    install,
)
from .session_states import SessionStates

__all__ = ["AcpClientBuilder", "install_handlers"]

_Client = TypeVar("_Client")

UpdateConsumer: TypeAlias = Callable[
    [SessionNotification], "reactivex.Observable[Any] | Awaitable[Any] | None"
]
"""A notification consumer: returns ``None``, an Observable that holds the next update until it
completes, or (``async def``) an awaitable, awaited on the connection's loop."""
ElicitationCompleteConsumer: TypeAlias = Callable[
    [CompleteElicitationNotification], "reactivex.Observable[Any] | Awaitable[Any] | None"
]


def _default_client_info() -> dict[str, Any]:
    try:
        version = importlib.metadata.version("rxacp")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        version = "0"
    return {"name": "rxacp", "title": "rxacp client", "version": version}


def _wire(value: Any, model: type[AcpModel], option: str) -> dict[str, Any]:
    if isinstance(value, AcpModel):
        return model.from_wire(value.to_wire()).to_wire()
    if isinstance(value, Mapping):
        return model.from_wire(dict(value)).to_wire()
    raise TypeError(
        f"{option} takes a {model.__name__} or its wire dict, not {type(value).__name__}"
    )


def _stderr_tail_of(transport: AcpTransport) -> Callable[[], str | None] | None:
    """The transport's stderr tail reader, when it spawned the agent (stdio)."""
    if isinstance(getattr(type(transport), "stderr_tail", None), property):
        return lambda: getattr(transport, "stderr_tail", None)
    return None


def _callable(fn: Any, option: str) -> None:
    if not callable(fn):
        raise TypeError(f"{option} takes a callable, not {type(fn).__name__}")


def install_handlers(
    builder: object,
    handlers: Mapping[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]],
) -> ClientHandlers:
    """Register a handler provider's ``{method: (blocking_fn, async_fn)}`` on a sync or async
    client builder, each builder taking the flavour it runs (the sync builder the blocking one,
    the async builder the coroutine one), as its typed setters would; returns the builder's
    registry so the provider can add close listeners. ``TypeError`` for anything but a builder.

    The one registration path of :class:`~rxacp.client.WorkspaceFileSystem` and
    :class:`~rxacp.client.LocalTerminals` ``install()``."""
    if not isinstance(builder, AcpClientBuilder):
        raise TypeError(f"install() takes an AcpClient builder, not {type(builder).__name__}")
    for method, (blocking_fn, async_fn) in handlers.items():
        builder._set_handler(method, blocking_fn if builder._handlers.blocking else async_fn)
    return builder._handlers


_CLIENT_RESERVED = {
    "session/update": "session_update_consumer()",
    "session/request_permission": "request_permission_handler()",
}
"""Methods a raw handler may not take over on the client side (their rules are the SDK's)."""


class AcpClientBuilder(RoleBuilder, Generic[_Client]):
    """Options, consumers and handlers of both client builders (:class:`AcpAsyncClientBuilder`
    and :class:`AcpSyncClientBuilder`); a handler's type depends on the builder's flavour."""

    def __init__(self, transport: AcpTransport) -> None:
        if not isinstance(transport, AcpTransport):
            raise TypeError(f"a client needs an AcpTransport, not {type(transport).__name__}")
        self._transport = transport
        self._handlers = ClientHandlers(blocking=isinstance(self, BlockingBuilder))
        self._request_timeout: Duration | None = 60.0
        self._prompt_timeout: Duration | None = None
        self._client_capabilities: dict[str, Any] | None = None
        self._client_info: dict[str, Any] = _default_client_info()
        self._scheduler: abc.SchedulerBase | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_chosen = False  # event_loop() was called (None: its own loop thread)
        self._executor: concurrent.futures.Executor | None = None
        self._tracing: bool | None = None
        self._tracer_provider: Any = None
        self._protocol_v2 = False
        self._built = False

    # ------------------------------------------------------------------ options
    def prompt_timeout(self, timeout: Duration | None) -> Self:
        """Bound of one prompt turn (off by default; ``0``/``None``: off)."""
        to_seconds(timeout, name="prompt_timeout")
        self._prompt_timeout = timeout
        return self

    def client_capabilities(self, capabilities: ClientCapabilities | Mapping[str, Any]) -> Self:
        """Advertise exactly these capabilities in ``initialize``.

        Default: what the registered handlers imply (``fs.readTextFile`` iff a read handler,
        ``fs.writeTextFile`` iff a write handler, ``terminal`` iff all five terminal handlers,
        ``elicitation.form`` iff an elicitation handler, plus ``elicitation.url`` with an
        ``elicitation_complete_consumer``).
        """
        self._client_capabilities = _wire(capabilities, ClientCapabilities, "client_capabilities")
        return self

    def client_info(self, info: Implementation | Mapping[str, Any]) -> Self:
        """Name/title/version sent as ``clientInfo`` (default: rxacp and its version)."""
        self._client_info = _wire(info, Implementation, "client_info")
        return self

    def protocol_v2(self, enabled: bool = True) -> Self:
        """Ask for ACP v2 (a Draft, experimental): ``initialize()`` sends a v2 request and the
        connection speaks v2 if the agent answers 2, or falls back to v1 if it answers 1
        (``client.protocol_version`` says which). On v2, consumers, ``updates()`` and the
        permission handler get :mod:`rxacp.schema.v2` models and a prompt turn completes on
        the ``idle`` ``state_update``; see ``docs/v2.md``. Off by default (v1 only)."""
        self._protocol_v2 = bool(enabled)
        return self

    def event_loop(self, loop: asyncio.AbstractEventLoop | None) -> Self:
        """Run the connection on a loop you already run, or (``None``) on a loop of its own in a
        daemon thread.

        Default: the blocking client always gets its own loop; the async client runs on the
        loop that is running where it is built (``build()`` inside ``async def`` code, as
        asyncio libraries do: no thread hand-off per call), else on its own.
        """
        if loop is not None and not isinstance(loop, asyncio.AbstractEventLoop):
            raise TypeError(f"event_loop takes an asyncio event loop, not {type(loop).__name__}")
        self._loop = loop
        self._loop_chosen = True
        return self

    # ------------------------------------------------------------------ consumers
    def session_update_consumer(self, consumer: UpdateConsumer) -> Self:
        """Receive every ``session/update`` (a :class:`SessionNotification`), in order.

        May be called several times: every consumer gets every update, in registration order.
        Consumers run on the connection's loop thread and **must not block**; a consumer may
        return an Observable, which holds the next consumer and the next update until it
        completes. A prompt's answer is emitted only after its updates went through.

        Fast path: an Observable that completes while it is subscribed (``reactivex.empty()``,
        ``reactivex.just(x)``, ``reactivex.defer(...)`` of those) is subscribed once, without
        reactivex's trampoline or observer wrappers, and holds nothing; returning ``None``
        costs nothing at all (measured per streamed update: ``reactivex.empty()`` ~1.6x the
        client CPU of ``None``, mostly reactivex building and subscribing the Observable).
        """
        _callable(consumer, "session_update_consumer")
        self._handlers.update_consumers.append(consumer)
        return self

    def track_session_states(self, enabled: bool = True) -> Self:
        """Keep the read model: every session's :class:`~rxacp.client.SessionState`, folded
        from its updates as they arrive, from the first update on (``session_state(sid)``
        reads it). Off by default: it costs about 2-3 us of CPU per update (see
        ``docs/read-model.md``) and keeps every open session's transcript in memory, which a
        client that renders nothing should not pay for, and which grows with whatever the agent
        streams."""
        self._handlers.session_states = SessionStates() if enabled else None
        return self

    def elicitation_complete_consumer(self, consumer: ElicitationCompleteConsumer) -> Self:
        """Receive ``elicitation/complete`` notifications (same rules as update consumers)."""
        _callable(consumer, "elicitation_complete_consumer")
        self._handlers.elicitation_complete_consumers.append(consumer)
        return self

    _reserved = _CLIENT_RESERVED

    def _set_raw(self, method: str, fn: Callable[[Any], Any], notification: bool) -> None:
        handlers = self._handlers
        (handlers.ext_notifications if notification else handlers.ext_requests)[method] = fn

    def _set_option(self, name: str, value: Any) -> None:
        setattr(self, f"_{name}", value)

    def _set_handler(self, method: str, handler: Callable[..., Any]) -> None:
        _callable(handler, f"{m.METHODS[method].python_name}_handler")
        self._handlers.requests[method] = handler

    # ------------------------------------------------------------------ typed handlers
    read_text_file_handler = HandlerSetter[schema.ReadTextFileRequest, schema.ReadTextFileResponse](
        m.FS_READ_TEXT_FILE
    )
    write_text_file_handler = HandlerSetter[
        schema.WriteTextFileRequest, schema.WriteTextFileResponse
    ](m.FS_WRITE_TEXT_FILE)
    request_permission_handler = HandlerSetter[
        schema.RequestPermissionRequest, schema.RequestPermissionResponse
    ](
        m.SESSION_REQUEST_PERMISSION,
        "Without one, permission requests are refused with ``-32601``, never approved. When the "
        "client sends ``session/cancel`` for the session the request is answered ``cancelled`` "
        "at once (an Observable handler is disposed; what a sync handler returns later is "
        "discarded); the agent cancelling it disposes it too.",
    )
    create_terminal_handler = HandlerSetter[
        schema.CreateTerminalRequest, schema.CreateTerminalResponse
    ](m.TERMINAL_CREATE, "``terminal`` is advertised iff all terminal handlers are.")
    terminal_output_handler = HandlerSetter[
        schema.TerminalOutputRequest, schema.TerminalOutputResponse
    ](m.TERMINAL_OUTPUT)
    release_terminal_handler = HandlerSetter[
        schema.ReleaseTerminalRequest, schema.ReleaseTerminalResponse
    ](m.TERMINAL_RELEASE)
    wait_for_terminal_exit_handler = HandlerSetter[
        schema.WaitForTerminalExitRequest, schema.WaitForTerminalExitResponse
    ](m.TERMINAL_WAIT_FOR_EXIT)
    kill_terminal_handler = HandlerSetter[schema.KillTerminalRequest, schema.KillTerminalResponse](
        m.TERMINAL_KILL
    )
    create_elicitation_handler = HandlerSetter[
        schema.CreateElicitationRequest, schema.CreateElicitationResponse
    ](m.ELICITATION_CREATE)

    def _build_async(self, *, on_running_loop: bool = False) -> AcpAsyncClient:
        if self._built:
            raise RuntimeError("this builder already built a client (a transport is single-use)")
        self._built = True
        loop = self._loop
        if on_running_loop and not self._loop_chosen:
            loop = running_loop()
        session = AcpSession(
            self._transport,
            role="client",
            request_timeout=self._request_timeout,
            scheduler=self._scheduler,
            loop=loop,
            executor=self._executor,
        )
        install_tracing(session, "client", self._tracing, self._tracer_provider)
        permissions = PermissionTracker()
        sessions = KnownSessions()
        install(session, self._handlers, permissions, sessions)
        capabilities = self._client_capabilities
        if capabilities is None:
            capabilities = default_client_capabilities(self._handlers)
        return AcpAsyncClient(
            session,
            client_capabilities=capabilities,
            client_info=self._client_info,
            prompt_timeout=self._prompt_timeout,
            permissions=permissions,
            sessions=sessions,
            session_closed_listeners=self._handlers.session_closed_listeners,
            stderr_tail=_stderr_tail_of(self._transport),
            update_stream=self._handlers.update_stream,
            session_states=self._handlers.session_states,
            handlers=self._handlers,
            protocol_v2=self._protocol_v2,
        )
