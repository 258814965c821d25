"""``AcpClient``: the entry point that builds async and sync ACP clients.

``AcpClient.async_(transport)`` returns an :class:`AcpAsyncClientBuilder` (handlers return
Observables) and ``AcpClient.sync(transport)`` an :class:`AcpSyncClientBuilder` (handlers return
values and run on a worker pool). Both share the connection options and consumers of
:class:`_ClientBuilderBase`; the typed handler setters are one-liners into a table keyed by
method name (see ``handlers.py``).

This module is *not* responsible for the calls themselves (``async_client.py``,
``sync_client.py``) or for dispatching agent→client requests (``handlers.py``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.metadata
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Self, TypeAlias, TypeVar

import reactivex
from reactivex import abc

from .._durations import Duration, to_seconds
from ..schema import (
    AcpModel,
    ClientCapabilities,
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    Implementation,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from ..schema import methods as m
from ..session import AcpSession
from ..session.adapters import check_ext_method, check_raw_method
from ..transport.base import AcpTransport
from .async_client import AcpAsyncClient
from .handlers import ClientHandlers, PermissionTracker, default_client_capabilities, install
from .sync_client import AcpSyncClient

__all__ = [
    "AcpAsyncClientBuilder",
    "AcpClient",
    "AcpSyncClientBuilder",
    "AsyncHandler",
    "SyncHandler",
]

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")
_Client = TypeVar("_Client")

AsyncHandler: TypeAlias = Callable[
    [_Req], "reactivex.Observable[_Resp] | Awaitable[_Resp] | _Resp | None"
]
"""An async-builder handler: takes the request model, returns an Observable of the response
(first value answers), a coroutine, or the response itself. ``None``/empty answers ``{}`` when
the response has no required field."""

SyncHandler: TypeAlias = Callable[[_Req], "_Resp | None"]
"""A sync-builder handler: runs on the worker pool (may block) and returns the response."""

UpdateConsumer: TypeAlias = Callable[[SessionNotification], "reactivex.Observable[Any] | None"]
ElicitationCompleteConsumer: TypeAlias = Callable[
    [CompleteElicitationNotification], "reactivex.Observable[Any] | None"
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


_CLIENT_RESERVED = {
    "session/update": "session_update_consumer()",
    "session/request_permission": "request_permission_handler()",
}
"""Methods a raw handler may not take over on the client side (their rules are the SDK's)."""


class _ClientBuilderBase(Generic[_Client]):
    """Connection options and consumers shared by both builders."""

    def __init__(self, transport: AcpTransport, *, blocking: bool) -> None:
        if not isinstance(transport, AcpTransport):
            raise TypeError(f"a client needs an AcpTransport, not {type(transport).__name__}")
        self._transport = transport
        self._handlers = ClientHandlers(blocking=blocking)
        self._request_timeout: Duration | None = 60.0
        self._prompt_timeout: Duration | None = None
        self._client_capabilities: dict[str, Any] | None = None
        self._client_info: dict[str, Any] = _default_client_info()
        self._scheduler: abc.SchedulerBase | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._executor: concurrent.futures.Executor | None = None
        self._built = False

    # ------------------------------------------------------------------ options
    def request_timeout(self, timeout: Duration | None) -> Self:
        """Timeout of every request but ``session/prompt`` (default 60 s; ``0``/``None``: off).

        A timeout disposes the request (the agent gets ``$/cancel_request``) and errors with
        :class:`~rxacp.errors.AcpTimeoutException`.
        """
        to_seconds(timeout, name="request_timeout")
        self._request_timeout = timeout
        return self

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

    def scheduler(self, scheduler: abc.SchedulerBase) -> Self:
        """The scheduler of every timer (default: the connection's asyncio loop; tests pass a
        ``reactivex.testing.TestScheduler`` for virtual time)."""
        self._scheduler = scheduler
        return self

    def event_loop(self, loop: asyncio.AbstractEventLoop) -> Self:
        """Run the connection on a loop you already run (default: its own daemon thread)."""
        if not isinstance(loop, asyncio.AbstractEventLoop):
            raise TypeError(f"event_loop takes an asyncio event loop, not {type(loop).__name__}")
        self._loop = loop
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
        reactivex's trampoline, and holds nothing; returning ``None`` costs nothing at all.
        """
        _callable(consumer, "session_update_consumer")
        self._handlers.update_consumers.append(consumer)
        return self

    def elicitation_complete_consumer(self, consumer: ElicitationCompleteConsumer) -> Self:
        """Receive ``elicitation/complete`` notifications (same rules as update consumers)."""
        _callable(consumer, "elicitation_complete_consumer")
        self._handlers.elicitation_complete_consumers.append(consumer)
        return self

    def ext_notification_handler(
        self, method: str, handler: Callable[[Any], reactivex.Observable[Any] | None]
    ) -> Self:
        """Handle the extension notification ``method`` (starts with ``_``); gets the raw params.

        Runs on the connection's loop, in order with other notifications; must not block.
        """
        _callable(handler, "ext_notification_handler")
        self._handlers.ext_notifications[check_ext_method(method, "ext_notification_handler")] = (
            handler
        )
        return self

    def _request_handler(self, method: str, handler: Callable[..., Any]) -> Self:
        _callable(handler, f"{m.METHODS[method].python_name}_handler")
        self._handlers.requests[method] = handler
        return self

    def request_handler(self, method: str, handler: Callable[[Any], Any]) -> Self:
        """A raw handler for any agent→client request ``method`` (Java ``requestHandler``):
        gets the params as raw JSON, returns the result (raw JSON or a model; ``None``
        answers ``{}``), run like this builder's other handlers (the sync builder's on the
        worker pool). Overrides a typed handler of the same method. ``session/request_permission``
        and ``$/`` methods are refused (rxacp answers pending permissions on cancel: use
        ``request_permission_handler``)."""
        _callable(handler, "request_handler")
        method = check_raw_method(method, "request_handler", _CLIENT_RESERVED)
        self._handlers.ext_requests[method] = handler
        return self

    def notification_handler(self, method: str, handler: Callable[[Any], Any]) -> Self:
        """A raw handler for any agent→client notification ``method`` (Java
        ``notificationHandler``); gets raw JSON, in arrival order (the sync client's on its
        consumer thread). ``session/update`` is refused: use ``session_update_consumer``."""
        _callable(handler, "notification_handler")
        method = check_raw_method(method, "notification_handler", _CLIENT_RESERVED)
        self._handlers.ext_notifications[method] = handler
        return self

    def handler_executor(self, executor: concurrent.futures.Executor) -> Self:
        """Run the sync client's blocking handlers on ``executor`` instead of rxacp's worker
        pool (Java ``SyncSpec.handlerExecutor``). The application owns the executor (rxacp
        never shuts it down). Consumers stay on the client's ordered consumer thread."""
        if not isinstance(executor, concurrent.futures.Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor, not {type(executor).__name__}"
            )
        self._executor = executor
        return self

    def _ext_request(self, method: str, handler: Callable[[Any], Any]) -> Self:
        _callable(handler, "ext_request_handler")
        self._handlers.ext_requests[check_ext_method(method, "ext_request_handler")] = handler
        return self

    # ------------------------------------------------------------------ build
    def _build_async(self) -> AcpAsyncClient:
        if self._built:
            raise RuntimeError("this builder already built a client (a transport is single-use)")
        self._built = True
        session = AcpSession(
            self._transport,
            role="client",
            request_timeout=self._request_timeout,
            scheduler=self._scheduler,
            loop=self._loop,
            executor=self._executor,
        )
        permissions = PermissionTracker()
        install(session, self._handlers, permissions)
        capabilities = self._client_capabilities
        if capabilities is None:
            capabilities = default_client_capabilities(self._handlers)
        return AcpAsyncClient(
            session,
            client_capabilities=capabilities,
            client_info=self._client_info,
            prompt_timeout=self._prompt_timeout,
            permissions=permissions,
            session_closed_listeners=self._handlers.session_closed_listeners,
            stderr_tail=_stderr_tail_of(self._transport),
            update_stream=self._handlers.update_stream,
        )


class AcpAsyncClientBuilder(_ClientBuilderBase[AcpAsyncClient]):
    """Builds an :class:`AcpAsyncClient`. Handlers return Observables (or coroutines/values)
    and run on the connection's loop: they must not block.

    A plain return value answers at once, without Rx; an Observable that emits while it is
    subscribed (``reactivex.just(r)``, ``reactivex.defer(lambda _: reactivex.just(r))``)
    answers at once too, after one subscription; any other Observable answers with its first
    value whenever it comes (disposed if the agent cancels the request)."""

    def __init__(self, transport: AcpTransport) -> None:
        super().__init__(transport, blocking=False)

    def read_text_file_handler(
        self, fn: AsyncHandler[ReadTextFileRequest, ReadTextFileResponse]
    ) -> Self:
        """Serve ``fs/read_text_file`` (advertises ``fs.readTextFile`` by default)."""
        return self._request_handler(m.FS_READ_TEXT_FILE, fn)

    def write_text_file_handler(
        self, fn: AsyncHandler[WriteTextFileRequest, WriteTextFileResponse]
    ) -> Self:
        """Serve ``fs/write_text_file`` (advertises ``fs.writeTextFile`` by default)."""
        return self._request_handler(m.FS_WRITE_TEXT_FILE, fn)

    def request_permission_handler(
        self, fn: AsyncHandler[RequestPermissionRequest, RequestPermissionResponse]
    ) -> Self:
        """Answer ``session/request_permission`` (without one, permission requests are refused
        with ``-32601``, never approved). Disposed when the client sends ``session/cancel`` for
        the session (the request is then answered ``cancelled``) or the agent cancels it."""
        return self._request_handler(m.SESSION_REQUEST_PERMISSION, fn)

    def create_terminal_handler(
        self, fn: AsyncHandler[CreateTerminalRequest, CreateTerminalResponse]
    ) -> Self:
        """Serve ``terminal/create`` (``terminal`` is advertised iff all terminal handlers are)."""
        return self._request_handler(m.TERMINAL_CREATE, fn)

    def terminal_output_handler(
        self, fn: AsyncHandler[TerminalOutputRequest, TerminalOutputResponse]
    ) -> Self:
        """Serve ``terminal/output``."""
        return self._request_handler(m.TERMINAL_OUTPUT, fn)

    def release_terminal_handler(
        self, fn: AsyncHandler[ReleaseTerminalRequest, ReleaseTerminalResponse]
    ) -> Self:
        """Serve ``terminal/release``."""
        return self._request_handler(m.TERMINAL_RELEASE, fn)

    def wait_for_terminal_exit_handler(
        self, fn: AsyncHandler[WaitForTerminalExitRequest, WaitForTerminalExitResponse]
    ) -> Self:
        """Serve ``terminal/wait_for_exit``."""
        return self._request_handler(m.TERMINAL_WAIT_FOR_EXIT, fn)

    def kill_terminal_handler(
        self, fn: AsyncHandler[KillTerminalRequest, KillTerminalResponse]
    ) -> Self:
        """Serve ``terminal/kill``."""
        return self._request_handler(m.TERMINAL_KILL, fn)

    def create_elicitation_handler(
        self, fn: AsyncHandler[CreateElicitationRequest, CreateElicitationResponse]
    ) -> Self:
        """Serve ``elicitation/create`` (advertises ``elicitation.form`` by default)."""
        return self._request_handler(m.ELICITATION_CREATE, fn)

    def ext_request_handler(self, method: str, fn: AsyncHandler[Any, Any]) -> Self:
        """Serve the extension request ``method`` (must start with ``_``); gets the raw params,
        returns an Observable of the raw result (``None`` answers ``{}``)."""
        return self._ext_request(method, fn)

    def build(self) -> AcpAsyncClient:
        """Create the client (the connection starts on the first call)."""
        return self._build_async()


class AcpSyncClientBuilder(_ClientBuilderBase[AcpSyncClient]):
    """Builds an :class:`AcpSyncClient`. Handlers return values and run on the worker pool
    (they may block); consumers run on the client's consumer thread, one notification after
    another in arrival order (they may block too: the agent is then read more slowly)."""

    def __init__(self, transport: AcpTransport) -> None:
        super().__init__(transport, blocking=True)

    def read_text_file_handler(
        self, fn: SyncHandler[ReadTextFileRequest, ReadTextFileResponse]
    ) -> Self:
        """Serve ``fs/read_text_file`` (advertises ``fs.readTextFile`` by default)."""
        return self._request_handler(m.FS_READ_TEXT_FILE, fn)

    def write_text_file_handler(
        self, fn: SyncHandler[WriteTextFileRequest, WriteTextFileResponse]
    ) -> Self:
        """Serve ``fs/write_text_file`` (advertises ``fs.writeTextFile`` by default)."""
        return self._request_handler(m.FS_WRITE_TEXT_FILE, fn)

    def request_permission_handler(
        self, fn: SyncHandler[RequestPermissionRequest, RequestPermissionResponse]
    ) -> Self:
        """Answer ``session/request_permission`` (without one, they are refused, never
        approved). After ``session/cancel`` the request is answered ``cancelled`` at once and
        whatever this handler returns later is discarded."""
        return self._request_handler(m.SESSION_REQUEST_PERMISSION, fn)

    def create_terminal_handler(
        self, fn: SyncHandler[CreateTerminalRequest, CreateTerminalResponse]
    ) -> Self:
        """Serve ``terminal/create`` (``terminal`` is advertised iff all terminal handlers are)."""
        return self._request_handler(m.TERMINAL_CREATE, fn)

    def terminal_output_handler(
        self, fn: SyncHandler[TerminalOutputRequest, TerminalOutputResponse]
    ) -> Self:
        """Serve ``terminal/output``."""
        return self._request_handler(m.TERMINAL_OUTPUT, fn)

    def release_terminal_handler(
        self, fn: SyncHandler[ReleaseTerminalRequest, ReleaseTerminalResponse]
    ) -> Self:
        """Serve ``terminal/release``."""
        return self._request_handler(m.TERMINAL_RELEASE, fn)

    def wait_for_terminal_exit_handler(
        self, fn: SyncHandler[WaitForTerminalExitRequest, WaitForTerminalExitResponse]
    ) -> Self:
        """Serve ``terminal/wait_for_exit``."""
        return self._request_handler(m.TERMINAL_WAIT_FOR_EXIT, fn)

    def kill_terminal_handler(
        self, fn: SyncHandler[KillTerminalRequest, KillTerminalResponse]
    ) -> Self:
        """Serve ``terminal/kill``."""
        return self._request_handler(m.TERMINAL_KILL, fn)

    def create_elicitation_handler(
        self, fn: SyncHandler[CreateElicitationRequest, CreateElicitationResponse]
    ) -> Self:
        """Serve ``elicitation/create`` (advertises ``elicitation.form`` by default)."""
        return self._request_handler(m.ELICITATION_CREATE, fn)

    def ext_request_handler(self, method: str, fn: SyncHandler[Any, Any]) -> Self:
        """Serve the extension request ``method`` (must start with ``_``); gets the raw params,
        returns the raw result (``None`` answers ``{}``)."""
        return self._ext_request(method, fn)

    def build(self) -> AcpSyncClient:
        """Create the client (the connection starts on the first call)."""
        delegate = self._build_async()
        return AcpSyncClient(
            delegate,
            request_timeout=to_seconds(self._request_timeout, name="request_timeout"),
            consumer_thread=self._handlers.consumer_thread,
        )


class AcpClient:
    """Factory of ACP client builders (``AcpClient.async_(t)`` / ``AcpClient.sync(t)``)."""

    def __init__(self) -> None:
        raise TypeError(
            "AcpClient is a factory: use AcpClient.async_(transport) or AcpClient.sync(transport)"
        )

    @staticmethod
    def async_(transport: AcpTransport) -> AcpAsyncClientBuilder:
        """A builder of an :class:`AcpAsyncClient` (Observable API) over ``transport``."""
        return AcpAsyncClientBuilder(transport)

    @staticmethod
    def sync(transport: AcpTransport) -> AcpSyncClientBuilder:
        """A builder of an :class:`AcpSyncClient` (blocking API) over ``transport``."""
        return AcpSyncClientBuilder(transport)
