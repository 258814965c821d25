"""An ACP agent service over WebSocket: :class:`WebSocketAcpAgentServer`.

Accepts many connections and serves each with its own agent (built by ``agent_factory`` for
that connection's :class:`WebSocketAcpAgentTransport`), with a limit on concurrent
connections, an idle timeout per connection and a clean shutdown; sync (own daemon loop
thread) and async APIs.

This module is *not* responsible for one connection's frames or idle timer
(``_websocket_agent``, ``_websocket_connection``), nor for the client side.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Self

from reactivex import abc as rx_abc
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.frames import CloseCode

from rxacp._durations import Duration, to_seconds
from rxacp.transport._budget import DEFAULT_BUDGET_BYTES, ByteBudget
from rxacp.transport._remote import ServerContext, check_max_connections
from rxacp.transport._websocket_admission import Admission
from rxacp.transport._websocket_agent import AgentFactory, WebSocketAcpAgentTransport
from rxacp.transport._websocket_common import (
    _SHUTDOWN,
    DEFAULT_BUDGET_TIMEOUT,
    DEFAULT_FIRST_MESSAGE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_OPEN_TIMEOUT,
    DEFAULT_PATH,
    _access,
    _check_path,
    _log,
    _options,
    _positive_or_none,
    _run_loop,
    _running_loop,
    _serve_kwargs,
    _url,
)

__all__ = ["WebSocketAcpAgentServer"]


class WebSocketAcpAgentServer(ServerContext):
    """An ACP agent service over WebSocket: each connection gets its own agent.

    ``agent_factory(transport)`` builds the agent of one connection (e.g.
    ``lambda t: AcpAgent.sync(t).prompt_handler(handle).build()``); the server starts it (if
    the factory did not) and closes it when the connection ends. Limits: at most
    ``max_connections`` at once (more are closed with code 1013 and a reason naming the
    limit; ``None``: no limit); ``first_message_timeout`` seconds (default 10) without a first
    message after the handshake, or ``idle_timeout`` seconds (default 3600) without a message
    either way, close a connection with code 1001 (``None`` or ``0``: off; a prompt that sends
    nothing for longer than ``idle_timeout`` is cut off too, so keep it above your longest
    silent turn, a permission dialog left open included); an incoming message over
    ``max_message_size`` closes that connection with code 1009. Other paths than ``path`` get
    HTTP 404. ``port=0`` picks a free port (:attr:`port`, :attr:`url`). ``budget_bytes``
    (default 64 MiB) bounds the incoming bytes being read and parsed across all connections:
    each message over 64 KiB is admitted (its frame header read, its size reserved; with
    compression the most it can inflate to) before its bytes are read, and a connection whose
    message does not fit stops reading until others' are parsed, for at most
    ``budget_timeout`` seconds (default 30; ``None``: no limit), then is closed with code 1013.
    Connections still in their opening handshake count against ``max_connections`` and are
    closed after ``open_timeout`` seconds (default 10).

    Browsers: a handshake carrying an ``Origin`` header (every browser sends one; non-browser
    clients normally do not) is refused with HTTP 403 unless that origin is in
    ``allowed_origins`` (e.g. ``["https://editor.example"]``; ``"null"`` for sandboxed pages,
    ``"*"`` for any), so a web page the user opens cannot drive a local agent. ``token``: when
    set, every handshake must send ``Authorization: Bearer <token>`` (else HTTP 401);
    ``WebSocketAcpClientTransport(url, token=...)`` sends it.

    Sync: ``start()`` runs the server on its own daemon loop thread, ``close()`` stops it.
    Async: ``await start_async()`` serves on the running loop, ``await aclose()``. Closing
    closes every connection (code 1001), so clients' pending requests end with
    :class:`AcpConnectionException` at once, and closes every agent.
    """

    def __init__(
        self,
        agent_factory: AgentFactory,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = DEFAULT_PATH,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_connections: int | None = 100,
        idle_timeout: Duration | None = DEFAULT_IDLE_TIMEOUT,
        first_message_timeout: Duration | None = DEFAULT_FIRST_MESSAGE_TIMEOUT,
        ping_interval: Duration | None = 20.0,
        ping_timeout: Duration | None = 20.0,
        close_timeout: Duration = 5.0,
        compression: bool = False,
        scheduler: rx_abc.SchedulerBase | None = None,
        serve_options: Mapping[str, Any] | None = None,
        allowed_origins: Iterable[str] | None = None,
        token: str | None = None,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        budget_timeout: Duration | None = DEFAULT_BUDGET_TIMEOUT,
        open_timeout: Duration | None = DEFAULT_OPEN_TIMEOUT,
    ) -> None:
        if not callable(agent_factory):
            raise TypeError("agent_factory must be callable: factory(transport) -> agent")
        _check_path(path)
        check_max_connections(max_connections)
        self._factory = agent_factory
        self.host, self.path = host, path
        self._requested_port = port
        self.max_connections = max_connections
        self._opts = _options(
            max_message_size, ping_interval, ping_timeout, close_timeout, compression
        )
        self._idle = _positive_or_none("idle_timeout", idle_timeout)
        self._first = _positive_or_none("first_message_timeout", first_message_timeout)
        self._scheduler = scheduler
        self._serve_options = dict(serve_options or {})
        self._access = _access(allowed_origins, token)
        self.budget = ByteBudget(budget_bytes)
        """The server-wide budget of incoming bytes being read and parsed (all connections)."""
        self._admission = Admission(
            self.budget, max_message_size, _positive_or_none("budget_timeout", budget_timeout)
        )
        self._open_timeout = _positive_or_none("open_timeout", open_timeout)
        self._server: Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._active: set[WebSocketAcpAgentTransport] = set()
        self._closed = threading.Event()
        self._closing = False
        self.port = 0

    # -- properties --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``ws://host:port/path`` clients connect to (after start)."""
        return _url(self.host, self.port, self.path)

    @property
    def connection_count(self) -> int:
        """Connections being served now."""
        return len(self._active)

    @property
    def open_connection_count(self) -> int:
        """TCP connections open now, those still in their handshake included."""
        return self._admission.open

    @property
    def is_serving(self) -> bool:
        """True between start and close."""
        return self._server is not None and not self._closed.is_set()

    # -- async API ---------------------------------------------------------------------------
    async def start_async(self) -> Self:
        """Listen on the running loop; returns once :attr:`port` is known."""
        if self._server is not None:
            raise RuntimeError("WebSocketAcpAgentServer started twice")
        self._loop = asyncio.get_running_loop()
        kwargs = _serve_kwargs(
            self._opts,
            self.path,
            self._access,
            {"open_timeout": self._open_timeout, **self._serve_options},
            self._admission.connection_class(),
        )
        self._server = await serve(self._handle, self.host, self._requested_port, **kwargs)
        self.port = self._server.sockets[0].getsockname()[1]
        _log.info("ACP WebSocket agent server listening on %s", self.url)
        return self

    async def aclose(self) -> None:
        """Stop listening, close every connection (1001) and its agent; wait for all of it."""
        server = self._server
        if server is None or self._closed.is_set():
            self._closed.set()
            return
        self._closing = True  # connections arriving from now on are turned away
        loop = asyncio.get_running_loop()
        closing = [  # queued before server.close(), so these close frames (and reason) win
            loop.create_task(t._close_ws(CloseCode.GOING_AWAY, _SHUTDOWN)) for t in self._active
        ]
        server.close()
        try:
            await asyncio.wait_for(
                asyncio.gather(server.wait_closed(), *closing, return_exceptions=True),
                self._opts.close_timeout + 10.0,
            )
        except TimeoutError:
            _log.warning("WebSocket server: connections still closing after the bound")
        self._closed.set()

    async def __aenter__(self) -> Self:
        return await self.start_async()

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- sync API ----------------------------------------------------------------------------
    def start(self, timeout: Duration = 10.0) -> Self:
        """Start serving on a daemon loop thread of its own; returns once listening (within
        ``timeout``: a ``timedelta`` or seconds)."""
        if self._thread is not None or self._server is not None:
            raise RuntimeError("WebSocketAcpAgentServer started twice")
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=_run_loop, args=(loop,), name="rxacp-ws-server", daemon=True
        )
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.start_async(), loop).result(
                to_seconds(timeout, name="timeout")
            )
        except BaseException:
            self._stop_thread(loop)
            raise
        return self

    def close(self, timeout: Duration = 15.0) -> None:
        """Stop the server started with :meth:`start` (idempotent), waiting at most
        ``timeout`` (a ``timedelta`` or seconds) for connections and agents to close."""
        loop = self._loop
        if loop is None or loop.is_closed():
            self._closed.set()
            return
        if _running_loop() is loop:
            raise RuntimeError("close() would block the server's loop; use await aclose()")
        try:
            asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(
                to_seconds(timeout, name="timeout")
            )
        except Exception:
            _log.warning("WebSocket server did not close cleanly", exc_info=True)
        if self._thread is not None:
            self._stop_thread(loop)

    def wait_closed(self, timeout: Duration | None = None) -> bool:
        """Block until the server is closed (by :meth:`close` from another thread); False if
        ``timeout`` (a ``timedelta`` or seconds) passed first."""
        return self._closed.wait(to_seconds(timeout, name="timeout"))

    def serve_forever(self) -> None:
        """Start (if needed) and block until closed; Ctrl-C closes the server."""
        if self._server is None:
            self.start()
        try:
            while not self._closed.wait(0.5):
                pass
        finally:
            self.close()

    def _stop_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        thread, self._thread = self._thread, None
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(10.0)

    # -- one connection ----------------------------------------------------------------------
    async def _handle(self, ws: ServerConnection) -> None:
        if self._closing:
            await ws.close(CloseCode.GOING_AWAY, _SHUTDOWN)
            return
        limit = self.max_connections
        others = max(len(self._active), self._admission.open - 1)  # handshakes count too
        if limit is not None and others >= limit:
            _log.warning(
                "refusing a WebSocket connection: already serving %d (max_connections)", limit
            )
            reason = f"too many connections: this server serves at most {limit} at a time"
            await ws.close(CloseCode.TRY_AGAIN_LATER, reason)
            return
        transport = WebSocketAcpAgentTransport._for_connection(
            ws, self._opts, self._idle, self._first, self._scheduler, self.budget
        )
        self._active.add(transport)
        loop = asyncio.get_running_loop()
        agent: Any = None
        try:
            serving = loop.create_task(transport._serve())
            try:
                agent = await loop.run_in_executor(None, self._make_agent, transport)
            except Exception as exc:
                _log.error("agent_factory failed for a WebSocket connection", exc_info=True)
                reason = f"agent could not be started: {type(exc).__name__}"
                await ws.close(CloseCode.INTERNAL_ERROR, reason)
            await serving
        finally:
            self._active.discard(transport)
            closer = getattr(agent, "close", None)
            if callable(closer):
                with contextlib.suppress(Exception):
                    await loop.run_in_executor(None, closer)

    def _make_agent(self, transport: WebSocketAcpAgentTransport) -> Any:
        agent = self._factory(transport)
        starter = getattr(agent, "start", None)
        if callable(starter):
            starter()
        return agent
