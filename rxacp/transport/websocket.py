"""WebSocket transports (the optional extra ``rxacp[websocket]``, built on ``websockets``).

* :class:`WebSocketAcpClientTransport` — a client connects to ``ws://`` / ``wss://`` agent.
* :class:`WebSocketAcpAgentServer` — an agent *service*: it accepts many connections and serves
  each one with its own agent, built by ``agent_factory(transport)`` for that connection's
  :class:`WebSocketAcpAgentTransport`; with a limit on concurrent connections, an idle timeout
  and a clean shutdown.
* :class:`WebSocketAcpAgentTransport` — the agent side of *one* connection. The server creates
  one per connection; constructed directly (``WebSocketAcpAgentTransport(host, port, path)``)
  it listens and serves exactly one client, then stops listening, like the Java SDK's
  WebSocket agent transport.

One JSON-RPC message travels as one WebSocket text frame (binary frames are accepted too).
An incoming message over ``max_message_size`` closes *that* connection with code 1009 and a
reason naming the limit; the server keeps serving others. Nothing reconnects automatically:
after a close, build a new transport and client (reconnecting is the caller's choice).

This module is *not* responsible for JSON-RPC, ACP semantics, authentication or reconnecting.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import socket
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import Any, Self

from reactivex import abc as rx_abc
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler

from rxacp.errors import AcpConnectionException
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed

try:
    from websockets.asyncio.client import connect
    from websockets.asyncio.connection import Connection
    from websockets.asyncio.server import Server, ServerConnection, serve
    from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI
    from websockets.frames import CloseCode
    from websockets.http11 import Request, Response
    from websockets.protocol import State
except ImportError as _exc:  # pragma: no cover - exercised in a test with websockets hidden
    raise ImportError(
        "rxacp.transport.websocket needs the optional 'websockets' package (>= 15); "
        'install it with: pip install "rxacp[websocket]"'
    ) from _exc

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_PATH",
    "AgentFactory",
    "WebSocketAcpAgentServer",
    "WebSocketAcpAgentTransport",
    "WebSocketAcpClientTransport",
]

_log = logging.getLogger("rxacp.transport.websocket")

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""Default cap on one incoming message (16 MiB); larger messages close the connection (1009)."""

DEFAULT_PATH = "/acp"
"""Default HTTP path of the agent endpoint."""

_SHUTDOWN = "server shutting down"
_CLOSE_GRACE = 1.0  # extra bound on cross-loop close waits, beyond close_timeout


@dataclass(frozen=True)
class _Options:
    max_message_size: int
    ping_interval: float | None
    ping_timeout: float | None
    close_timeout: float
    compression: bool


def _options(
    max_message_size: int,
    ping_interval: float | None,
    ping_timeout: float | None,
    close_timeout: float,
    compression: bool,
) -> _Options:
    if isinstance(max_message_size, bool) or not isinstance(max_message_size, int):
        raise TypeError(f"max_message_size must be an int (bytes), got {max_message_size!r}")
    if max_message_size < 1:
        raise ValueError(f"max_message_size must be positive, got {max_message_size}")
    for name, value in (("ping_interval", ping_interval), ("ping_timeout", ping_timeout)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be > 0 seconds or None, got {value!r}")
    if not close_timeout > 0:
        raise ValueError(f"close_timeout must be > 0 seconds, got {close_timeout!r}")
    return _Options(max_message_size, ping_interval, ping_timeout, close_timeout, compression)


def _positive_or_none(name: str, value: float | None) -> float | None:
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a number of seconds > 0 (or None/0: off), got {value!r}")
    return float(value)


def _describe_close(exc: ConnectionClosed, limit: int) -> TransportClosed:
    """A readable :class:`TransportClosed` for the end of a WebSocket connection."""
    sent, rcvd = exc.sent, exc.rcvd
    if sent is not None and not exc.rcvd_then_sent:  # this side closed first
        if sent.code == CloseCode.MESSAGE_TOO_BIG:
            return TransportClosed(
                f"closed the WebSocket connection with code 1009: an incoming message exceeded "
                f"max_message_size ({limit} bytes): {sent.reason}"
            )
        return TransportClosed(f"this side closed the WebSocket connection: {sent}")
    if rcvd is not None:
        return TransportClosed(f"the WebSocket peer closed the connection: {rcvd}")
    return TransportClosed("the WebSocket connection was lost", error=exc.__cause__ or exc)


def _call(fn: Callable[[Any], None], arg: Any) -> None:
    try:
        fn(arg)
    except Exception:
        _log.exception("frame receiver callback %r failed", fn)


class _End:
    __slots__ = ("info",)

    def __init__(self, info: TransportClosed) -> None:
        self.info = info


class _WebSocketTransport(AcpTransport):
    """One WebSocket connection, driven on its own loop (``ws loop``); frames are handed to the
    receiver's loop (which may be another thread's) in arrival order, batched."""

    def _init_core(self, options: _Options) -> None:
        self._opts = options
        self._lock = threading.Lock()
        self._ws: Connection | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None
        self._rx_loop: asyncio.AbstractEventLoop | None = None
        self._receiver: FrameReceiver | None = None
        self._inbox: list[Any] = []
        self._in_scheduled = False
        self._outbox: collections.deque[Any] = collections.deque()
        self._out_scheduled = False
        self._out_event: asyncio.Event | None = None
        self._closed = False  # close() called: sends are dropped
        self._reported = False  # on_closed delivered
        self._activity: Callable[[], None] | None = None

    # -- receiving (ws loop → receiver loop) -------------------------------------------------
    def _attach(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        with self._lock:
            if self._receiver is not None:
                raise RuntimeError(f"{type(self).__name__} started twice")
            self._rx_loop, self._receiver = loop, receiver
            pending = self._in_scheduled = bool(self._inbox)
        if pending:
            loop.call_soon(self._drain_inbox)

    def _push(self, item: Any) -> None:
        with self._lock:
            if self._reported:
                return
            self._inbox.append(item)
            if self._in_scheduled or self._rx_loop is None:
                return
            self._in_scheduled = True
            loop = self._rx_loop
        try:
            if loop is self._ws_loop:
                loop.call_soon(self._drain_inbox)
            else:
                loop.call_soon_threadsafe(self._drain_inbox)
        except RuntimeError:  # the receiving loop is closed: nobody left to tell
            _log.debug("receiving loop closed; frame dropped")

    def _drain_inbox(self) -> None:
        with self._lock:
            items, self._inbox, self._in_scheduled = self._inbox, [], False
        receiver = self._receiver
        assert receiver is not None
        for item in items:
            if self._reported:
                return
            if isinstance(item, _End):
                self._report(item.info)
                return
            _call(receiver.on_frame, item)

    def _report(self, info: TransportClosed) -> None:
        with self._lock:
            if self._reported or self._receiver is None:
                return
            self._reported = True
            self._inbox = []
        _call(self._receiver.on_closed, info)

    # -- sending (receiver loop → ws loop) ---------------------------------------------------
    def send(self, frame: Frame) -> None:
        """Queue one message as a text frame (bytes are sent as UTF-8 text); never blocks."""
        if isinstance(frame, bytearray | memoryview):
            frame = bytes(frame)
        elif not isinstance(frame, bytes | str):
            raise TypeError(f"a WebSocket transport sends bytes or str frames, got {type(frame)}")
        self._enqueue(frame)

    def _enqueue(self, item: Any) -> bool:
        with self._lock:
            if self._closed or self._ws_loop is None or self._out_event is None:
                return False
            self._outbox.append(item)
            if self._out_scheduled:
                return True
            self._out_scheduled = True
            loop, event = self._ws_loop, self._out_event
        try:
            if loop is self._rx_loop and loop is _running_loop():
                event.set()
            else:
                loop.call_soon_threadsafe(event.set)
        except RuntimeError:
            return False
        return True

    async def drain(self) -> None:
        """Wait until every frame queued so far was handed to the socket."""
        marker: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self._enqueue(marker):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(marker), self._opts.close_timeout)

    async def _write_loop(self, ws: Connection, event: asyncio.Event) -> None:
        try:
            while True:
                await event.wait()
                event.clear()
                with self._lock:
                    batch = list(self._outbox)
                    self._outbox.clear()
                    self._out_scheduled = False
                for item in batch:
                    if isinstance(item, concurrent.futures.Future):
                        item.set_result(None)
                        continue
                    await ws.send(item, text=True)
                    if self._activity is not None:
                        self._activity()
        except ConnectionClosed:
            pass  # the reader reports the close
        finally:
            self._release_markers()

    def _release_markers(self) -> None:
        with self._lock:
            items = list(self._outbox)
            self._outbox.clear()
        for item in items:
            if isinstance(item, concurrent.futures.Future) and not item.done():
                item.set_result(None)

    # -- the connection's life (ws loop) -----------------------------------------------------
    def _bind(self, ws: Connection, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._ws, self._ws_loop, self._out_event = ws, loop, asyncio.Event()

    async def _run(self) -> None:
        """Read until the connection ends (then report it); writes run alongside."""
        ws, event = self._ws, self._out_event
        assert ws is not None and event is not None
        writer = asyncio.get_running_loop().create_task(self._write_loop(ws, event))
        try:
            while True:
                data = await ws.recv(decode=False)
                if self._activity is not None:
                    self._activity()
                self._push(data)
        except ConnectionClosed as exc:
            self._push(_End(_describe_close(exc, self._opts.max_message_size)))
        except Exception as exc:
            _log.warning("WebSocket read failed", exc_info=True)
            self._push(_End(TransportClosed("WebSocket read failed", error=exc)))
            with contextlib.suppress(Exception):
                await ws.close(CloseCode.INTERNAL_ERROR, "read failed")
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    async def _close_ws(self, code: int, reason: str) -> None:
        """Close the WebSocket (on its loop, from any loop), bounded by ``close_timeout``."""
        ws, loop = self._ws, self._ws_loop
        if ws is None or loop is None or loop.is_closed():
            return
        if loop is _running_loop():
            await ws.close(code, reason)
            return
        if ws.state is State.CLOSED:
            return
        coro = ws.close(code, reason)
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                asyncio.wrap_future(future), self._opts.close_timeout + _CLOSE_GRACE
            )

    async def close(self) -> None:
        """Close at once: queued frames are dropped, the peer gets close code 1000. Idempotent;
        ``on_closed`` is reported before this returns."""
        with self._lock:
            first = not self._closed
            self._closed = True
        self._release_markers()
        self._report(TransportClosed("closed"))
        if first:
            await self._close_ws(CloseCode.NORMAL_CLOSURE, "closed")
            await self._after_close()

    async def _after_close(self) -> None:
        """Hook: what a subclass releases after its connection closed."""


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# ==================================================================================== client
class WebSocketAcpClientTransport(_WebSocketTransport):
    """The client side: connects to an agent at ``uri`` (``ws://host:port/acp`` or ``wss://``).

    ``start()`` raises :class:`AcpConnectionException` naming ``uri`` and the cause when the
    connection or the opening handshake fails (within ``connect_timeout`` seconds). There is no
    automatic reconnect: when the connection ends, pending requests fail with
    :class:`AcpConnectionException`; build a new transport and client to connect again.

    ``headers`` are sent with the opening handshake (e.g. ``Authorization``). Keepalive pings
    detect a dead peer (``ping_interval``/``ping_timeout``; ``None`` disables). ``connect_options``
    are passed on to ``websockets.asyncio.client.connect`` (e.g. ``ssl=``, ``proxy=``).
    """

    def __init__(
        self,
        uri: str,
        *,
        connect_timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        close_timeout: float = 5.0,
        compression: bool = False,
        connect_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(uri, str):
            raise TypeError(f"uri must be a str like 'ws://127.0.0.1:8765/acp', got {uri!r}")
        scheme = urllib.parse.urlsplit(uri).scheme
        if scheme not in ("ws", "wss"):
            raise ValueError(f"a WebSocket agent uri starts with ws:// or wss://, got {uri!r}")
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be > 0 seconds, got {connect_timeout!r}")
        self._init_core(
            _options(max_message_size, ping_interval, ping_timeout, close_timeout, compression)
        )
        self.uri = uri
        self.connect_timeout = float(connect_timeout)
        self._headers = dict(headers or {})
        self._connect_options = dict(connect_options or {})
        self._task: asyncio.Task[None] | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Connect (TCP + opening handshake, bounded by ``connect_timeout``) and start reading."""
        self._attach(loop, receiver)
        opts = self._opts
        try:
            ws = await connect(
                self.uri,
                additional_headers=self._headers or None,
                open_timeout=self.connect_timeout,
                max_size=opts.max_message_size,
                ping_interval=opts.ping_interval,
                ping_timeout=opts.ping_timeout,
                close_timeout=opts.close_timeout,
                compression="deflate" if opts.compression else None,
                **self._connect_options,
            )
        except TimeoutError:
            raise AcpConnectionException(
                f"cannot connect to {self.uri}: no WebSocket handshake within "
                f"{self.connect_timeout:g} s"
            ) from None
        except InvalidStatus as exc:
            body = (exc.response.body or b"").decode("utf-8", "replace").strip()[:200]
            raise AcpConnectionException(
                f"cannot connect to {self.uri}: {exc}" + (f" ({body})" if body else "")
            ) from exc
        except (OSError, InvalidURI, Exception) as exc:
            raise AcpConnectionException(f"cannot connect to {self.uri}: {exc}") from exc
        self._bind(ws, loop)
        if self._closed:  # closed while connecting
            await ws.close(CloseCode.NORMAL_CLOSURE, "closed")
            return
        self._task = loop.create_task(self._run())

    async def _after_close(self) -> None:
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._task), self._opts.close_timeout)


# ===================================================================================== agent
AgentFactory = Callable[["WebSocketAcpAgentTransport"], Any]
"""Builds (and may start) the agent of one connection: ``factory(transport) -> agent``.

The server calls ``agent.start()`` if the factory did not, and ``agent.close()`` when the
connection ends. Runs on a worker thread, so it may block briefly."""


def _path_guard(path: str) -> Callable[[ServerConnection, Request], Response | None]:
    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        if urllib.parse.urlsplit(request.path).path == path:
            return None
        return connection.respond(HTTPStatus.NOT_FOUND, f"no ACP endpoint here; use {path}\n")

    return process_request


class _IdleTimer:
    """Closes a connection after ``seconds`` without a message in either direction."""

    def __init__(
        self,
        transport: WebSocketAcpAgentTransport,
        seconds: float,
        scheduler: rx_abc.SchedulerBase | None,
    ) -> None:
        self._t, self._seconds = transport, seconds
        loop = transport._ws_loop
        assert loop is not None
        self._loop = loop
        self._scheduler = scheduler or AsyncIOThreadSafeScheduler(loop)
        self._last = self._scheduler.now
        self._timer: rx_abc.DisposableBase | None = None
        self._closing: asyncio.Task[None] | None = None
        self._stopped = False
        self._arm(seconds)

    def touch(self) -> None:
        self._last = self._scheduler.now

    def _arm(self, seconds: float) -> None:
        self._timer = self._scheduler.schedule_relative(seconds, self._fired)

    def _fired(self, _scheduler: rx_abc.SchedulerBase, _state: Any) -> None:
        """Runs on the scheduler's thread (the loop's, or a test's virtual clock)."""
        if self._stopped:
            return
        idle = (self._scheduler.now - self._last).total_seconds()
        if idle < self._seconds:
            self._arm(self._seconds - idle)
            return
        self._stopped = True
        _log.info("closing an idle WebSocket connection (%g s without a message)", idle)
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._close)

    def _close(self) -> None:
        ws = self._t._ws
        if ws is not None:
            reason = f"idle timeout: no message for {self._seconds:g} s"
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
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = DEFAULT_PATH,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        idle_timeout: float | None = None,
        accept_timeout: float | None = None,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        close_timeout: float = 5.0,
        compression: bool = False,
        scheduler: rx_abc.SchedulerBase | None = None,
        serve_options: Mapping[str, Any] | None = None,
    ) -> None:
        _check_path(path)
        self._init_core(
            _options(max_message_size, ping_interval, ping_timeout, close_timeout, compression)
        )
        self.path = path
        self._idle_seconds = _positive_or_none("idle_timeout", idle_timeout)
        self._accept_timeout = _positive_or_none("accept_timeout", accept_timeout)
        self._scheduler = scheduler
        self._serve_options = dict(serve_options or {})
        self._server: Server | None = None
        self._sock: socket.socket | None = socket.create_server((host, port))
        self.host, self.port = self._sock.getsockname()[:2]

    @classmethod
    def server(cls, agent_factory: AgentFactory, **options: Any) -> WebSocketAcpAgentServer:
        """A :class:`WebSocketAcpAgentServer` (not started) serving each connection with its
        own agent; ``options`` are its constructor's (``host``, ``port``, ``path``...)."""
        return WebSocketAcpAgentServer(agent_factory, **options)

    @classmethod
    def _for_connection(
        cls,
        ws: ServerConnection,
        options: _Options,
        idle_timeout: float | None,
        scheduler: rx_abc.SchedulerBase | None,
    ) -> WebSocketAcpAgentTransport:
        self = cls.__new__(cls)
        self._init_core(options)
        self._sock, self._server, self._accept_timeout = None, None, None
        self._idle_seconds, self._scheduler = idle_timeout, scheduler
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
        if self._idle_seconds is not None:
            idle = _IdleTimer(self, self._idle_seconds, self._scheduler)
            self._activity = idle.touch
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
            handler, sock=sock, **_serve_kwargs(self._opts, self.path, self._serve_options)
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


def _check_path(path: str) -> None:
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")


def _url(host: str, port: int, path: str) -> str:
    return f"ws://{f'[{host}]' if ':' in host else host}:{port}{path}"


def _serve_kwargs(opts: _Options, path: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "process_request": _path_guard(path),
        "max_size": opts.max_message_size,
        "ping_interval": opts.ping_interval,
        "ping_timeout": opts.ping_timeout,
        "close_timeout": opts.close_timeout,
        "compression": "deflate" if opts.compression else None,
        **extra,
    }


# ==================================================================================== server
class WebSocketAcpAgentServer:
    """An ACP agent service over WebSocket: each connection gets its own agent.

    ``agent_factory(transport)`` builds the agent of one connection (e.g.
    ``lambda t: AcpAgent.sync(t).prompt_handler(handle).build()``); the server starts it (if
    the factory did not) and closes it when the connection ends. Limits: at most
    ``max_connections`` at once (more are closed with code 1013 and a reason naming the
    limit; ``None``: no limit); ``idle_timeout`` seconds without a message either way closes
    a connection with code 1001 (``None``: off — a prompt that sends nothing for longer would
    be cut off, so keep it above your longest silent turn); an incoming message over
    ``max_message_size`` closes that connection with code 1009. Other paths than ``path`` get
    HTTP 404. ``port=0`` picks a free port (:attr:`port`, :attr:`url`).

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
        idle_timeout: float | None = None,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        close_timeout: float = 5.0,
        compression: bool = False,
        scheduler: rx_abc.SchedulerBase | None = None,
        serve_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(agent_factory):
            raise TypeError("agent_factory must be callable: factory(transport) -> agent")
        _check_path(path)
        if max_connections is not None and (
            isinstance(max_connections, bool)
            or not isinstance(max_connections, int)
            or max_connections < 1
        ):
            raise ValueError(
                f"max_connections must be an int >= 1 or None, got {max_connections!r}"
            )
        self._factory = agent_factory
        self.host, self.path = host, path
        self._requested_port = port
        self.max_connections = max_connections
        self._opts = _options(
            max_message_size, ping_interval, ping_timeout, close_timeout, compression
        )
        self._idle = _positive_or_none("idle_timeout", idle_timeout)
        self._scheduler = scheduler
        self._serve_options = dict(serve_options or {})
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
    def is_serving(self) -> bool:
        """True between start and close."""
        return self._server is not None and not self._closed.is_set()

    # -- async API ---------------------------------------------------------------------------
    async def start_async(self) -> Self:
        """Listen on the running loop; returns once :attr:`port` is known."""
        if self._server is not None:
            raise RuntimeError("WebSocketAcpAgentServer started twice")
        self._loop = asyncio.get_running_loop()
        kwargs = _serve_kwargs(self._opts, self.path, self._serve_options)
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
    def start(self, timeout: float = 10.0) -> Self:
        """Start serving on a daemon loop thread of its own; returns once listening."""
        if self._thread is not None or self._server is not None:
            raise RuntimeError("WebSocketAcpAgentServer started twice")
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=_run_loop, args=(loop,), name="rxacp-ws-server", daemon=True
        )
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.start_async(), loop).result(timeout)
        except BaseException:
            self._stop_thread(loop)
            raise
        return self

    def close(self, timeout: float = 15.0) -> None:
        """Stop the server started with :meth:`start` (idempotent), waiting at most
        ``timeout`` seconds for connections and agents to close."""
        loop = self._loop
        if loop is None or loop.is_closed():
            self._closed.set()
            return
        if _running_loop() is loop:
            raise RuntimeError("close() would block the server's loop; use await aclose()")
        try:
            asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(timeout)
        except Exception:
            _log.warning("WebSocket server did not close cleanly", exc_info=True)
        if self._thread is not None:
            self._stop_thread(loop)

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the server is closed (by :meth:`close` from another thread)."""
        return self._closed.wait(timeout)

    def serve_forever(self) -> None:
        """Start (if needed) and block until closed; Ctrl-C closes the server."""
        if self._server is None:
            self.start()
        try:
            while not self._closed.wait(0.5):
                pass
        finally:
            self.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
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
        if limit is not None and len(self._active) >= limit:
            _log.warning(
                "refusing a WebSocket connection: already serving %d (max_connections)", limit
            )
            reason = f"too many connections: this server serves at most {limit} at a time"
            await ws.close(CloseCode.TRY_AGAIN_LATER, reason)
            return
        transport = WebSocketAcpAgentTransport._for_connection(
            ws, self._opts, self._idle, self._scheduler
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


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
