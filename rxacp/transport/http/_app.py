"""The remote ACP endpoint as an ASGI application: :class:`AcpAsgiApp`.

One path (``/acp``) serves both profiles of the RFD: Streamable HTTP (``POST`` messages,
``initialize`` answered ``200`` with ``Acp-Connection-Id``, others ``202``; ``GET`` SSE
streams, connection-scoped or session-scoped with ``Acp-Session-Id``; ``DELETE`` ends) and a
WebSocket upgrade. Each connection gets its own agent from ``agent_factory(transport)``.

Plain ASGI, no framework: it runs under any ASGI server (uvicorn, hypercorn) and mounts into
Starlette/FastAPI. Safe by default: browser ``Origin``s refused, an authentication hook bound
to the connection id, 128-bit random connection ids, bodies capped (``413``), a server-wide
budget of bytes being parsed (``503``), a connection cap, idle connections closed.

This module is *not* responsible for one connection's routing and flow control
(``_connection``), nor for the client side (``_client``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any

from reactivex import abc as rx_abc
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler

from rxacp import jsonrpc
from rxacp.transport._budget import DEFAULT_BUDGET_BYTES, ByteBudget
from rxacp.transport.http._access import Access, make_access
from rxacp.transport.http._connection import HttpAcpAgentTransport, MessageStream
from rxacp.transport.http._protocol import (
    ATTACH_METHODS,
    CONNECTION_ID_HEADER,
    JSON_MIME,
    SESSION_HEADER_METHODS,
    SESSION_ID_HEADER,
    SSE_MIME,
    params_session_id,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "AcpAsgiApp",
    "AgentFactory",
]

_log = logging.getLogger("rxacp.transport.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

AgentFactory = Callable[[HttpAcpAgentTransport], Any]
"""Builds (and may start) the agent of one connection: ``factory(transport) -> agent``. The app
calls ``agent.start()`` if the factory did not and ``agent.close()`` when the connection ends;
it runs on a worker thread, so it may block briefly."""

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""Default cap on one incoming message (a POST body or a WebSocket frame): 16 MiB."""

_MAX_SESSION_STREAMS = 256  # per connection


class _Refused(Exception):
    def __init__(self, status: int, text: str, headers: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(text)
        self.status, self.text, self.headers = status, text, list(headers)


class AcpAsgiApp:
    """An ASGI application serving ACP agents remotely at ``path`` (default ``/acp``).

    ``agent_factory(transport)`` builds the agent of one connection (e.g. ``lambda t:
    AcpAgent.sync(t).prompt_handler(handle).build()``); the transport is an
    :class:`HttpAcpAgentTransport`. Run it with any ASGI server (``uvicorn.run(app)``) or
    mount it; other paths get ``404``.

    Security defaults: a request carrying ``Origin`` is refused (``403``) unless the origin is
    in ``allowed_origins``; ``token`` requires ``Authorization: Bearer <token>`` (``401``), and
    ``authenticate(headers)`` is the general hook (return a principal, or ``None``/raise to
    refuse) — checked before ``initialize`` and on every later request, which must resolve to
    the same principal as the connection's first (else ``404``). Bodies over
    ``max_message_size`` get ``413``; a body that does not fit in the server-wide
    ``budget_bytes`` of bytes being read and parsed waits (unread) up to ``budget_wait``
    seconds, then gets ``503`` with ``Retry-After``; more than ``max_connections``: ``503``.
    A WebSocket connection that sends no message within ``first_message_timeout`` seconds of
    the upgrade, and any connection without a request or a message either way for
    ``idle_timeout`` seconds, is closed (its streams end; ``None``/``0``: off). SSE streams
    carry a keepalive comment every ``keepalive_interval`` seconds.

    Several workers: every Streamable HTTP request of one connection must reach the worker
    that opened it. ``connection_id_prefix`` (e.g. ``"w1."``) starts every id this worker
    mints, so a proxy can route on the ``Acp-Connection-Id`` prefix (or use a sticky cookie,
    which the RFD requires clients to keep); see ``docs/remote.md``.
    """

    def __init__(
        self,
        agent_factory: AgentFactory,
        *,
        path: str = "/acp",
        allowed_origins: Iterable[str] | None = None,
        token: str | None = None,
        authenticate: Callable[[Mapping[str, str]], Any] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        budget_wait: float = 5.0,
        max_connections: int | None = 100,
        idle_timeout: float | None = 3600.0,
        first_message_timeout: float | None = 10.0,
        initialize_timeout: float = 30.0,
        keepalive_interval: float = 15.0,
        max_unread_bytes: int = 16 * 1024 * 1024,
        connection_id_prefix: str = "",
        scheduler: rx_abc.SchedulerBase | None = None,
    ) -> None:
        if not callable(agent_factory):
            raise TypeError("agent_factory must be callable: factory(transport) -> agent")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        for name, value in (
            ("max_message_size", max_message_size),
            ("max_unread_bytes", max_unread_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1 (bytes), got {value!r}")
        if max_connections is not None and (
            isinstance(max_connections, bool)
            or not isinstance(max_connections, int)
            or max_connections < 1
        ):
            raise ValueError(
                f"max_connections must be an int >= 1 or None, got {max_connections!r}"
            )
        for name, seconds in (
            ("initialize_timeout", initialize_timeout),
            ("keepalive_interval", keepalive_interval),
        ):
            if not seconds > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {seconds!r}")
        if not isinstance(connection_id_prefix, str) or not all(
            (c.isascii() and c.isalnum()) or c in "-_." for c in connection_id_prefix
        ):
            raise ValueError(
                f"connection_id_prefix takes ASCII letters, digits, '-', '_', '.', got "
                f"{connection_id_prefix!r}"
            )
        self._factory = agent_factory
        self.path = path
        self.connection_id_prefix = connection_id_prefix
        self._access: Access = make_access(allowed_origins, token, authenticate)
        self.max_message_size = max_message_size
        self.budget = ByteBudget(budget_bytes)
        self._budget_wait = float(budget_wait)
        self.max_connections = max_connections
        self._idle = float(idle_timeout) if idle_timeout else None
        self._first = float(first_message_timeout) if first_message_timeout else None
        self._init_timeout = float(initialize_timeout)
        self._keepalive = float(keepalive_interval)
        self._max_unread = max_unread_bytes
        self._scheduler = scheduler
        self._connections: dict[str, HttpAcpAgentTransport] = {}
        self._agents: dict[str, Any] = {}
        self._opening = 0  # connections accepted but not registered yet (initialize, upgrade)
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- public ------------------------------------------------------------------------------
    @property
    def connection_count(self) -> int:
        """Connections open now (HTTP and WebSocket)."""
        return len(self._connections)

    def connection(self, connection_id: str) -> HttpAcpAgentTransport | None:
        """The open connection with this id, if any."""
        return self._connections.get(connection_id)

    async def aclose(self) -> None:
        """End every connection and close its agent (also done at ASGI lifespan shutdown)."""
        self._closed = True
        for transport in list(self._connections.values()):
            self._over(transport, "server shutting down")
        while self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope.get("path") != self.path and scope.get("path") != self.path.rstrip("/"):
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await _respond(send, 404, f"no ACP endpoint here; use {self.path}\n")
            return
        headers = _headers(scope)
        if kind == "websocket":
            await self._websocket(headers, receive, send)
            return
        try:
            await self._http(scope, headers, receive, send)
        except _Refused as refused:
            await _respond(send, refused.status, refused.text + "\n", refused.headers)

    # -- HTTP ------------------------------------------------------------------------------
    async def _http(
        self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send
    ) -> None:
        method = scope.get("method", "GET")
        principal = self._check_access(headers)
        if method == "POST":
            await self._post(headers, principal, receive, send)
        elif method == "GET":
            if headers.get("upgrade", "").lower() == "websocket":
                raise _Refused(426, "WebSocket upgrade is not supported by this server")
            await self._get(headers, principal, receive, send)
        elif method == "DELETE":
            transport = self._known(headers, principal)
            self._over(transport, "the client ended the connection (DELETE)")
            await _respond(send, 202, "")
        else:
            raise _Refused(405, "use POST, GET or DELETE", [("allow", "POST, GET, DELETE")])

    def _check_access(self, headers: Mapping[str, str]) -> Any:
        principal, refusal = self._access.check(headers)
        if refusal is not None:
            status, text = refusal
            raise _Refused(status, text, [("www-authenticate", "Bearer")] if status == 401 else ())
        return principal

    def _known(self, headers: Mapping[str, str], principal: Any) -> HttpAcpAgentTransport:
        cid = headers.get(CONNECTION_ID_HEADER.lower())
        if not cid:
            raise _Refused(400, f"missing {CONNECTION_ID_HEADER}")
        transport = self._connections.get(cid)
        if transport is None or transport.ended or transport.principal != principal:
            raise _Refused(404, f"unknown {CONNECTION_ID_HEADER} (ended, or never opened)")
        return transport

    async def _read_body(self, headers: Mapping[str, str], receive: Receive) -> tuple[bytes, int]:
        """The body, with the budget bytes reserved for it (released by the caller).

        A declared ``Content-Length`` is reserved whole before reading, so bodies never hold
        parts of the budget while waiting for the rest (which could starve them all); a body
        without one reserves as it arrives."""
        cap = self.max_message_size
        declared = headers.get("content-length")
        length = int(declared) if declared is not None and declared.isdigit() else None
        if length is not None and length > cap:
            raise _Refused(413, f"the message exceeds max_message_size ({cap} bytes)")
        chunks: list[bytes] = []
        size = reserved = 0
        try:
            if length:
                whole = self.budget.clamp(length)
                await self._reserve(whole)
                reserved = whole
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Refused(400, "the client went away")
                chunk = message.get("body", b"")
                if chunk:
                    size += len(chunk)
                    if size > cap:
                        raise _Refused(413, f"the message exceeds max_message_size ({cap} bytes)")
                    want = self.budget.clamp(size) - reserved
                    if want > 0:
                        await self._reserve(want)
                        reserved += want
                    chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks), reserved
        except BaseException:
            self.budget.release(reserved)
            raise

    async def _reserve(self, size: int) -> None:
        """Take ``size`` budget bytes, waiting at most ``budget_wait`` seconds (the body is not
        read meanwhile), else ``503``."""
        if self.budget.try_reserve(size):
            return
        try:
            await asyncio.wait_for(self.budget.reserve(size), self._budget_wait)
        except TimeoutError:
            raise _Refused(
                503, "the server is busy parsing other messages; retry", [("retry-after", "1")]
            ) from None

    async def _post(
        self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send
    ) -> None:
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != JSON_MIME:
            raise _Refused(415, f"Content-Type must be {JSON_MIME}")
        body, reserved = await self._read_body(headers, receive)
        try:
            message = await _decode(body)
            if isinstance(message, list):
                raise _Refused(501, "JSON-RPC batches are not supported")
            if not isinstance(message, dict):
                raise _Refused(400, "a message must be a JSON object")
            cid = headers.get(CONNECTION_ID_HEADER.lower())
            if message.get("method") == "initialize" and "id" in message:
                if cid:
                    raise _Refused(400, "initialize opens a connection: send no Acp-Connection-Id")
                await self._initialize(message, reserved, headers, principal, send)
                reserved = 0
                return
            transport = self._known(headers, principal)
            self._check_session(transport, message, headers)
            transport.deliver(message, reserved)
            reserved = 0
        finally:
            if reserved:
                self.budget.release(reserved)
        await _respond(send, 202, "")

    def _check_session(
        self, transport: HttpAcpAgentTransport, message: dict[str, Any], headers: Mapping[str, str]
    ) -> None:
        method = message.get("method")
        if not isinstance(method, str):
            return  # an answer to an agent request: accepted with or without Acp-Session-Id
        header = headers.get(SESSION_ID_HEADER.lower())
        sid = params_session_id(message)
        if header is None and method in SESSION_HEADER_METHODS:
            raise _Refused(400, f"{method} needs the {SESSION_ID_HEADER} header")
        if header is not None and sid is not None and header != sid:
            raise _Refused(400, f"{SESSION_ID_HEADER} does not match params.sessionId")
        if (
            header is not None
            and method not in ATTACH_METHODS
            and header not in transport.sessions
            and header not in transport.session_streams
        ):
            raise _Refused(404, f"unknown {SESSION_ID_HEADER} for this connection")

    async def _initialize(
        self,
        message: dict[str, Any],
        reserved: int,
        headers: Mapping[str, str],
        principal: Any,
        send: Send,
    ) -> None:
        transport = await self._open("http", headers, principal)
        answer = transport.expect_initialize(message.get("id"))
        transport.deliver(message, reserved)
        try:
            data = await asyncio.wait_for(answer, self._init_timeout)
        except TimeoutError:
            self._over(transport, "initialize was not answered")
            raise _Refused(
                504, f"initialize not answered within {self._init_timeout:g} s"
            ) from None
        except ConnectionError as exc:
            self._over(transport, str(exc))
            raise _Refused(
                503, f"the connection ended before initialize was answered: {exc}"
            ) from None
        is_error = b'"error"' in data[:4096] and b'"result"' not in data[:4096]
        if is_error:
            self._over(transport, "initialize failed")
            await _respond(send, 400, data, content_type=JSON_MIME)
            return
        await _respond(
            send, 200, data, [(CONNECTION_ID_HEADER, transport.connection_id)], JSON_MIME
        )

    async def _get(
        self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send
    ) -> None:
        if SSE_MIME not in headers.get("accept", ""):
            raise _Refused(406, f"Accept must include {SSE_MIME}")
        transport = self._known(headers, principal)
        sid = headers.get(SESSION_ID_HEADER.lower())
        full = len(transport.session_streams) >= _MAX_SESSION_STREAMS
        if sid is not None and sid not in transport.session_streams and full:
            raise _Refused(429, f"more than {_MAX_SESSION_STREAMS} session streams")
        stream = transport.stream_for(sid)
        if stream.reader is not None:
            raise _Refused(409, "this stream already has a reader")
        token = object()
        stream.reader = token
        try:
            await self._sse(transport, stream, receive, send)
        finally:
            if stream.reader is token:
                stream.reader = None

    async def _sse(
        self, transport: HttpAcpAgentTransport, stream: MessageStream, receive: Receive, send: Send
    ) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", SSE_MIME.encode()),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        transport.activity()
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            while not gone.done():
                item = asyncio.ensure_future(stream.next(self._keepalive))
                await asyncio.wait({item, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not item.done():
                    item.cancel()
                    break
                data = item.result()
                if data is None:
                    break
                chunk = b": keepalive\n\n" if not data else b"data: " + data + b"\n\n"
                try:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                except Exception:  # the client went away: the next reader gets the message
                    if data:
                        stream.items.appendleft(data)
                    return
                if data:
                    transport.taken(data)
            if not gone.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()

    # -- WebSocket ---------------------------------------------------------------------------
    async def _websocket(self, headers: Mapping[str, str], receive: Receive, send: Send) -> None:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        principal, refusal = self._access.check(headers)
        if refusal is not None:
            _log.warning("refused a WebSocket upgrade: %s", refusal[1])
            await send({"type": "websocket.close", "code": 1008})
            return
        try:
            transport = await self._open("websocket", headers, principal)
        except _Refused as refused:  # 1013: try again later (a limit); 1011: the agent failed
            code = 1013 if refused.status == 503 else 1011
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": code, "reason": refused.text[:120]})
            return
        await send(
            {
                "type": "websocket.accept",
                "headers": [
                    (CONNECTION_ID_HEADER.lower().encode(), transport.connection_id.encode())
                ],
            }
        )
        writer = asyncio.ensure_future(self._ws_writer(transport, send))
        try:
            await self._ws_reader(transport, receive, send)
        finally:
            writer.cancel()
            with contextlib.suppress(BaseException):
                await writer
            self._over(transport, transport.end_reason or "the WebSocket connection closed")

    async def _ws_reader(
        self, transport: HttpAcpAgentTransport, receive: Receive, send: Send
    ) -> None:
        cap = self.max_message_size
        while not transport.ended:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                if message.get("bytes") is not None:
                    _log.warning("ignoring a binary WebSocket frame (ACP sends text frames)")
                continue
            data = text.encode()
            if len(data) > cap:
                await send({"type": "websocket.close", "code": 1009, "reason": f"over {cap} bytes"})
                return
            await self.budget.reserve(len(data))
            transport.deliver(data, self.budget.clamp(len(data)))

    async def _ws_writer(self, transport: HttpAcpAgentTransport, send: Send) -> None:
        stream = transport.connection_stream
        while True:
            data = await stream.next(None)
            if data is None:  # the connection ended here (idle, shutdown, the agent closed...)
                reason = transport.end_reason.encode()[:120].decode(errors="ignore")
                with contextlib.suppress(Exception):
                    await send({"type": "websocket.close", "code": 1001, "reason": reason})
                return
            await send({"type": "websocket.send", "text": data.decode()})
            transport.taken(data)

    # -- connections -------------------------------------------------------------------------
    async def _open(
        self, kind: str, headers: Mapping[str, str], principal: Any
    ) -> HttpAcpAgentTransport:
        if self._closed:
            raise _Refused(503, "server shutting down")
        limit = self.max_connections
        if limit is not None and len(self._connections) + self._opening >= limit:
            raise _Refused(
                503, f"too many connections: this server serves at most {limit} at a time"
            )
        loop = asyncio.get_running_loop()
        transport = HttpAcpAgentTransport(
            loop=loop,
            connection_id=self.connection_id_prefix + secrets.token_urlsafe(24),  # 192 bits
            kind=kind,
            request_headers=headers,
            principal=principal,
            budget=self.budget,
            max_unread=self._max_unread,
            on_agent_closed=lambda t: self._over(t, t.end_reason),
        )
        self._opening += 1
        try:
            agent = await loop.run_in_executor(None, self._make_agent, transport)
        except Exception as exc:
            _log.error("agent_factory failed for a remote connection", exc_info=True)
            raise _Refused(500, f"the agent could not be started: {type(exc).__name__}") from exc
        finally:
            self._opening -= 1
        self._connections[transport.connection_id] = transport
        self._agents[transport.connection_id] = agent
        self._watch_idle(transport, loop)
        return transport

    def _make_agent(self, transport: HttpAcpAgentTransport) -> Any:
        agent = self._factory(transport)
        starter = getattr(agent, "start", None)
        if callable(starter):
            starter()
        return agent

    def _over(self, transport: HttpAcpAgentTransport, reason: str) -> None:
        """End one connection (app loop): streams end, the agent is closed."""
        transport.end(reason)
        if self._connections.get(transport.connection_id) is not transport:
            return
        del self._connections[transport.connection_id]
        agent = self._agents.pop(transport.connection_id, None)
        closer = getattr(agent, "close", None)
        if callable(closer):
            loop = asyncio.get_running_loop()
            task = loop.create_task(_close_agent(loop, closer))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def _watch_idle(
        self, transport: HttpAcpAgentTransport, loop: asyncio.AbstractEventLoop
    ) -> None:
        scheduler = self._scheduler or AsyncIOThreadSafeScheduler(loop)
        first = self._first
        if transport.kind == "websocket" and first is not None:

            def silent(_s: rx_abc.SchedulerBase, _state: Any) -> None:
                if transport.delivered == 0 and not transport.ended:
                    reason = f"no first message within {first:g} s of the upgrade"
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(self._over, transport, reason)

            scheduler.schedule_relative(first, silent)
        idle = self._idle
        if idle is None:
            return
        state = {"last": scheduler.now}

        def touch() -> None:
            state["last"] = scheduler.now

        def fired(_s: rx_abc.SchedulerBase, _state: Any) -> None:
            if transport.ended:
                return
            left = idle - (scheduler.now - state["last"]).total_seconds()
            if left > 0:
                scheduler.schedule_relative(left, fired)
                return
            reason = f"idle timeout: no request or message for {idle:g} s"
            _log.info("closing remote connection: %s", reason)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._over, transport, reason)

        transport.activity = touch
        scheduler.schedule_relative(idle, fired)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _close_agent(loop: asyncio.AbstractEventLoop, closer: Callable[[], Any]) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(loop.run_in_executor(None, closer), 15.0)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _decode(body: bytes) -> Any:
    try:
        if len(body) > 256 * 1024:  # keep the server's loop responsive for big messages
            return await asyncio.to_thread(jsonrpc.decode_json, body)
        return jsonrpc.decode_json(body)
    except jsonrpc.ParseError as exc:
        raise _Refused(400, f"invalid JSON: {exc}") from None


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


async def _respond(
    send: Send,
    status: int,
    body: bytes | str,
    headers: Iterable[tuple[str, str]] = (),
    content_type: str = "text/plain; charset=utf-8",
) -> None:
    data = body.encode() if isinstance(body, str) else body
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    if data:
        raw.append((b"content-type", content_type.encode()))
    raw.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})
