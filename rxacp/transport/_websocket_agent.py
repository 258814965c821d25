"""The agent side of one ACP WebSocket connection: :class:`WebSocketAcpAgentTransport`.

One transport per connection, made by :class:`WebSocketAcpAgentServer` for each accepted
connection, or constructed directly to listen for and serve exactly one client (the Java
SDK's behaviour); with an optional idle timeout (:class:`_IdleTimer`). Also defines
:data:`AgentFactory`.

This module is *not* responsible for serving many connections, connection limits or server
shutdown (``_websocket_server``), nor for moving frames (``_websocket_connection``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from reactivex import abc as rx_abc
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.frames import CloseCode

from rxacp._durations import Duration
from rxacp.errors import AcpConnectionException
from rxacp.transport._budget import ByteBudget
from rxacp.transport._websocket_common import (
    DEFAULT_FIRST_MESSAGE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_PATH,
    _access,
    _check_path,
    _log,
    _Options,
    _options,
    _positive_or_none,
    _serve_kwargs,
    _url,
)
from rxacp.transport._websocket_connection import _WebSocketTransport
from rxacp.transport.base import FrameReceiver

if TYPE_CHECKING:
    from rxacp.transport._websocket_server import WebSocketAcpAgentServer

__all__ = ["AgentFactory", "WebSocketAcpAgentTransport"]

AgentFactory = Callable[["WebSocketAcpAgentTransport"], Any]
"""Builds (and may start) the agent of one connection: ``factory(transport) -> agent``.

The server calls ``agent.start()`` if the factory did not, and ``agent.close()`` when the
connection ends. Runs on a worker thread, so it may block briefly."""


class _IdleTimer:
    """Closes a connection that sent no first message within ``first`` seconds of the handshake,
    or after ``idle`` seconds without a message in either direction (each ``None``: off)."""

    def __init__(
        self,
        transport: WebSocketAcpAgentTransport,
        idle: float | None,
        first: float | None,
        scheduler: rx_abc.SchedulerBase | None,
    ) -> None:
        self._t, self._idle, self._first = transport, idle, first
        loop = transport._ws_loop
        assert loop is not None
        self._loop = loop
        self._scheduler = scheduler or AsyncIOThreadSafeScheduler(loop)
        self._start = self._last = self._scheduler.now
        self._got_first = first is None
        self._timer: rx_abc.DisposableBase | None = None
        self._closing: asyncio.Task[None] | None = None
        self._stopped = False
        self._arm(min(s for s in (idle, first) if s is not None))

    def touch(self) -> None:
        """A message was sent."""
        self._last = self._scheduler.now

    def received(self) -> None:
        """A message arrived."""
        self._got_first = True
        self._last = self._scheduler.now

    def _arm(self, seconds: float) -> None:
        self._timer = self._scheduler.schedule_relative(max(seconds, 0.0), self._fired)

    def _fired(self, _scheduler: rx_abc.SchedulerBase, _state: Any) -> None:
        """Runs on the scheduler's thread (the loop's, or a test's virtual clock)."""
        if self._stopped:
            return
        now = self._scheduler.now
        waits: list[float] = []
        reason = None
        if not self._got_first and self._first is not None:
            left = self._first - (now - self._start).total_seconds()
            if left <= 0:
                reason = f"no first message within {self._first:g} s of the handshake"
            waits.append(left)
        if reason is None and self._idle is not None:
            left = self._idle - (now - self._last).total_seconds()
            if left <= 0:
                reason = f"idle timeout: no message for {self._idle:g} s"
            waits.append(left)
        if reason is None:
            if waits:
                self._arm(min(waits))
            return
        self._stopped = True
        _log.info("closing a WebSocket connection: %s", reason)
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._close, reason)

    def _close(self, reason: str) -> None:
        ws = self._t._ws
        if ws is not None:
            self._closing = self._loop.create_task(ws.close(CloseCode.GOING_AWAY, reason))

    def stop(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.dispose()


class WebSocketAcpAgentTransport(_WebSocketTransport):
    """The agent side of one WebSocket connection.

    :class:`WebSocketAcpAgentServer` creates one per accepted connection and hands it to its
    ``agent_factory``; it may be started on any loop (the agent's own loop by default).

    Constructed directly, ``WebSocketAcpAgentTransport(host, port, path)`` binds at once
    (``port=0`` picks a free port, see :attr:`port` / :attr:`url`), and ``start()`` waits for
    the first client (at most ``accept_timeout`` seconds, ``None``: forever) and serves only it:
    a second client is refused with close code 1013, and the listener closes with the
    connection. That is the Java SDK's behaviour; for a service use :meth:`server`.

    Timeouts (seconds; ``None`` or ``0``: off): ``first_message_timeout`` (default 10) closes a
    connection that sends no message that long after its handshake, and ``idle_timeout``
    (default 3600) one without a message in either direction that long (keepalive pings do
    not count), both with code 1001 and a reason naming the limit.

    Browsers: a handshake carrying an ``Origin`` header (every browser sends one; non-browser
    clients normally do not) is refused with HTTP 403 unless that origin is in
    ``allowed_origins`` (e.g. ``["https://editor.example"]``; ``"null"`` for sandboxed pages,
    ``"*"`` for any), so a web page the user opens cannot drive a local agent. ``token``: when
    set, every handshake must send ``Authorization: Bearer <token>`` (else HTTP 401);
    ``WebSocketAcpClientTransport(url, token=...)`` sends it.
    """

    _flow_control = True

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = DEFAULT_PATH,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        idle_timeout: Duration | None = DEFAULT_IDLE_TIMEOUT,
        first_message_timeout: Duration | None = DEFAULT_FIRST_MESSAGE_TIMEOUT,
        accept_timeout: Duration | None = None,
        ping_interval: Duration | None = 20.0,
        ping_timeout: Duration | None = 20.0,
        close_timeout: Duration = 5.0,
        compression: bool = False,
        scheduler: rx_abc.SchedulerBase | None = None,
        serve_options: Mapping[str, Any] | None = None,
        allowed_origins: Iterable[str] | None = None,
        token: str | None = None,
    ) -> None:
        _check_path(path)
        self._init_core(
            _options(max_message_size, ping_interval, ping_timeout, close_timeout, compression)
        )
        self.path = path
        self._idle_seconds = _positive_or_none("idle_timeout", idle_timeout)
        self._first_seconds = _positive_or_none("first_message_timeout", first_message_timeout)
        self._accept_timeout = _positive_or_none("accept_timeout", accept_timeout)
        self._scheduler = scheduler
        self._serve_options = dict(serve_options or {})
        self._access = _access(allowed_origins, token)
        self._server: Server | None = None
        self._sock: socket.socket | None = socket.create_server((host, port))
        self.host, self.port = self._sock.getsockname()[:2]

    @classmethod
    def server(cls, agent_factory: AgentFactory, **options: Any) -> WebSocketAcpAgentServer:
        """A :class:`WebSocketAcpAgentServer` (not started) serving each connection with its
        own agent; ``options`` are its constructor's (``host``, ``port``, ``path``...)."""
        from rxacp.transport._websocket_server import WebSocketAcpAgentServer  # import cycle

        return WebSocketAcpAgentServer(agent_factory, **options)

    @classmethod
    def _for_connection(
        cls,
        ws: ServerConnection,
        options: _Options,
        idle_timeout: float | None,
        first_message_timeout: float | None,
        scheduler: rx_abc.SchedulerBase | None,
        budget: ByteBudget | None = None,
    ) -> WebSocketAcpAgentTransport:
        self = cls.__new__(cls)
        self._init_core(options)
        self._budget = budget
        self._sock, self._server, self._accept_timeout = None, None, None
        self._idle_seconds, self._scheduler = idle_timeout, scheduler
        self._first_seconds = first_message_timeout
        self._serve_options = {}
        address = ws.local_address
        self.host, self.port = address[0], address[1]
        self.path = urllib.parse.urlsplit(ws.request.path).path if ws.request else DEFAULT_PATH
        self._bind(ws, asyncio.get_running_loop())
        return self

    @property
    def url(self) -> str:
        """``ws://host:port/path`` of this endpoint."""
        return _url(self.host, self.port, self.path)

    @property
    def request_headers(self) -> Mapping[str, str]:
        """The client's opening-handshake headers (e.g. ``Authorization``; case-insensitive),
        empty before a client connected. An ``agent_factory`` may check them and raise to
        refuse the connection (it is then closed with code 1011)."""
        ws = self._ws
        request = getattr(ws, "request", None)
        return request.headers if request is not None else {}

    @property
    def remote_address(self) -> Any:
        """The peer's (host, port), or None before a client connected."""
        return self._ws.remote_address if self._ws is not None else None

    async def _serve(self) -> None:
        """Run the connection bound with :meth:`_bind` until it ends (ws loop)."""
        idle: _IdleTimer | None = None
        if self._idle_seconds is not None or self._first_seconds is not None:
            idle = _IdleTimer(self, self._idle_seconds, self._first_seconds, self._scheduler)
            self._activity, self._received = idle.touch, idle.received
        try:
            await self._run()
        finally:
            if idle is not None:
                idle.stop()

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Attach the agent's receiver (server-made transports), or, for a transport constructed
        directly, listen and wait for the one client it serves."""
        self._attach(loop, receiver)
        if self._sock is None:
            return
        first: asyncio.Future[None] = loop.create_future()

        async def handler(ws: ServerConnection) -> None:
            if first.done():
                await ws.close(CloseCode.TRY_AGAIN_LATER, "busy: this endpoint serves one client")
                return
            self._bind(ws, loop)
            first.set_result(None)
            try:
                await self._serve()
            finally:
                if self._server is not None:
                    self._server.close(close_connections=False)

        sock, self._sock = self._sock, None
        self._server = await serve(
            handler,
            sock=sock,
            **_serve_kwargs(self._opts, self.path, self._access, self._serve_options),
        )
        try:
            await asyncio.wait_for(first, self._accept_timeout)
        except BaseException as exc:
            await self._stop_listening()
            if isinstance(exc, TimeoutError):
                raise AcpConnectionException(
                    f"no client connected to {self.url} within {self._accept_timeout:g} s"
                ) from None
            raise

    async def _stop_listening(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), self._opts.close_timeout)

    async def _after_close(self) -> None:
        await self._stop_listening()
