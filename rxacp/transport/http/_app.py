"""The remote ACP endpoint as an ASGI application: :class:`AcpAsgiApp`.

One path (``/acp``) serves both profiles of the RFD: Streamable HTTP (``POST`` messages,
``initialize`` answered ``200`` with ``Acp-Connection-Id``, others ``202``; ``GET`` SSE
streams, connection-scoped or session-scoped with ``Acp-Session-Id``; ``DELETE`` ends) and a
WebSocket upgrade. Each connection gets its own agent from ``agent_factory(transport)``.

Plain ASGI, no framework: it runs under any ASGI server (uvicorn, hypercorn) and mounts into
Starlette/FastAPI. Safe by default: browser ``Origin``s refused, an authentication hook bound
to the connection id, 192-bit random connection ids, bodies capped (``413``), a server-wide
budget of bytes being parsed (``503``), a connection cap, idle connections closed.

This module is *not* responsible for one connection's routing and flow control
(``_connection``), the WebSocket profile's frames (``_ws``), the timers (``_timers``), plain
ASGI plumbing (``_asgi``), nor for the client side (``_client``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reactivex import abc as rx_abc

from rxacp import jsonrpc
from rxacp._error_codes import AcpErrorCodes
from rxacp.transport._access import Access, make_access
from rxacp.transport._budget import DEFAULT_BUDGET_BYTES, ByteBudget
from rxacp.transport._remote import check_max_connections
from rxacp.transport.http._asgi import (
    Receive,
    Refused,
    Scope,
    Send,
    decode_body,
    disconnected,
    request_headers,
    respond,
)
from rxacp.transport.http._connection import HttpAcpAgentTransport, MessageStream
from rxacp.transport.http._protocol import (
    ATTACH_METHODS,
    CONNECTION_ID_HEADER,
    JSON_MIME,
    MAX_SESSION_STREAMS,
    SESSION_HEADER_METHODS,
    SESSION_ID_HEADER,
    SSE_MIME,
    id_key,
    params_session_id,
)
from rxacp.transport.http._timers import BodyDeadline, watch_connection
from rxacp.transport.http._ws import serve_websocket

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "AcpAsgiApp",
    "AgentFactory",
]

_log = logging.getLogger("rxacp.transport.http")

AgentFactory = Callable[[HttpAcpAgentTransport], Any]
"""Builds (and may start) the agent of one connection: ``factory(transport) -> agent``. The app
calls ``agent.start()`` if the factory did not and ``agent.close()`` when the connection ends;
it runs on a worker thread, so it may block briefly."""

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""Default cap on one incoming message (a POST body or a WebSocket frame): 16 MiB."""


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
    seconds, then gets ``503`` with ``Retry-After`` (a WebSocket message: close code 1013); a
    body not received whole within ``body_timeout`` seconds of its headers gets ``408`` (a
    stalled upload holds its budget no longer: slowloris);
    more than ``max_connections``: ``503``.
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
        body_timeout: float = 30.0,
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
        check_max_connections(max_connections)
        for name, seconds in (
            ("initialize_timeout", initialize_timeout),
            ("keepalive_interval", keepalive_interval),
            ("body_timeout", body_timeout),
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
        self._body_timeout = float(body_timeout)
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
            closing = list(self._closing)
            await asyncio.gather(*closing, return_exceptions=True)
            # their done callbacks (which discard them) may not have run yet: awaiting tasks
            # that are done already does not yield (Python 3.13), so without this the loop
            # spun here for ever, holding the GIL
            self._closing.difference_update(closing)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope.get("path") != self.path and scope.get("path") != self.path.rstrip("/"):
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await respond(send, 404, f"no ACP endpoint here; use {self.path}\n")
            return
        headers = request_headers(scope)
        if kind == "websocket":
            await self._websocket(headers, receive, send)
            return
        try:
            await self._http(scope, headers, receive, send)
        except Refused as refused:
            await respond(send, refused.status, refused.text + "\n", refused.headers)

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
                raise Refused(426, "WebSocket upgrade is not supported by this server")
            await self._get(headers, principal, receive, send)
        elif method == "DELETE":
            transport = self._known(headers, principal)
            self._over(transport, "the client ended the connection (DELETE)")
            await respond(send, 202, "")
        else:
            raise Refused(405, "use POST, GET or DELETE", [("allow", "POST, GET, DELETE")])

    def _check_access(self, headers: Mapping[str, str]) -> Any:
        principal, refusal = self._access.check(headers)
        if refusal is not None:
            status, text = refusal
            raise Refused(status, text, [("www-authenticate", "Bearer")] if status == 401 else ())
        return principal

    def _known(self, headers: Mapping[str, str], principal: Any) -> HttpAcpAgentTransport:
        cid = headers.get(CONNECTION_ID_HEADER.lower())
        if not cid:
            raise Refused(400, f"missing {CONNECTION_ID_HEADER}")
        transport = self._connections.get(cid)
        if transport is None or transport.ended or transport.principal != principal:
            raise Refused(404, f"unknown {CONNECTION_ID_HEADER} (ended, or never opened)")
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
            raise Refused(413, f"the message exceeds max_message_size ({cap} bytes)")
        chunks: list[bytes] = []
        size = reserved = 0
        deadline = BodyDeadline(asyncio.get_running_loop(), self._scheduler, self._body_timeout)
        try:
            if length:
                whole = self.budget.clamp(length)
                await self._reserve(whole)
                reserved = whole
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise Refused(400, "the client went away")
                chunk = message.get("body", b"")
                if chunk:
                    size += len(chunk)
                    if size > cap:
                        raise Refused(413, f"the message exceeds max_message_size ({cap} bytes)")
                    want = self.budget.clamp(size) - reserved
                    if want > 0:
                        await self._reserve(want)
                        reserved += want
                    chunks.append(chunk)
                if not message.get("more_body", False):
                    deadline.done()
                    return b"".join(chunks), reserved
        except BaseException as exc:
            self.budget.release(reserved)
            if deadline.done() and isinstance(exc, asyncio.CancelledError):
                raise Refused(
                    408, f"the body did not arrive within body_timeout ({self._body_timeout:g} s)"
                ) from None
            raise

    async def _reserve(self, size: int) -> None:
        """Take ``size`` budget bytes, waiting at most ``budget_wait`` seconds (the body is not
        read meanwhile), else ``503``."""
        if self.budget.try_reserve(size):
            return
        try:
            await asyncio.wait_for(self.budget.reserve(size), self._budget_wait)
        except TimeoutError:
            raise Refused(
                503, "the server is busy parsing other messages; retry", [("retry-after", "1")]
            ) from None

    async def _post(
        self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send
    ) -> None:
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != JSON_MIME:
            raise Refused(415, f"Content-Type must be {JSON_MIME}")
        body, reserved = await self._read_body(headers, receive)
        try:
            message = await decode_body(body)
            if isinstance(message, list):
                raise Refused(501, "JSON-RPC batches are not supported")
            if not isinstance(message, dict):
                raise Refused(400, "a message must be a JSON object")
            cid = headers.get(CONNECTION_ID_HEADER.lower())
            if message.get("method") == "initialize" and "id" in message:
                if cid:
                    raise Refused(400, "initialize opens a connection: send no Acp-Connection-Id")
                if id_key(message["id"]) is None:  # its answer could not be told from others
                    refusal = jsonrpc.error_obj(
                        None,
                        {
                            "code": AcpErrorCodes.INVALID_REQUEST,
                            "message": "initialize needs a string or integer id over HTTP",
                        },
                    )
                    await respond(send, 400, jsonrpc.serialize(refusal), content_type=JSON_MIME)
                    return
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
        await respond(send, 202, "")

    def _check_session(
        self, transport: HttpAcpAgentTransport, message: dict[str, Any], headers: Mapping[str, str]
    ) -> None:
        method = message.get("method")
        header = headers.get(SESSION_ID_HEADER.lower())
        if not isinstance(method, str):  # an answer to an agent request: with or without it
            asked = transport.asked_about(message)
            if header is not None and asked is not None and header != asked:
                raise Refused(400, f"{SESSION_ID_HEADER} is not the session this answers about")
            return
        sid = params_session_id(message)
        if header is None and method in SESSION_HEADER_METHODS:
            raise Refused(400, f"{method} needs the {SESSION_ID_HEADER} header")
        if header is not None and sid is not None and header != sid:
            raise Refused(400, f"{SESSION_ID_HEADER} does not match params.sessionId")
        if (
            header is not None
            and method not in ATTACH_METHODS
            and header not in transport.sessions
            and header not in transport.session_streams
        ):
            raise Refused(404, f"unknown {SESSION_ID_HEADER} for this connection")

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
            raise Refused(504, f"initialize not answered within {self._init_timeout:g} s") from None
        except ConnectionError as exc:
            self._over(transport, str(exc))
            raise Refused(
                503, f"the connection ended before initialize was answered: {exc}"
            ) from None
        is_error = b'"error"' in data[:4096] and b'"result"' not in data[:4096]
        if is_error:
            self._over(transport, "initialize failed")
            await respond(send, 400, data, content_type=JSON_MIME)
            return
        await respond(send, 200, data, [(CONNECTION_ID_HEADER, transport.connection_id)], JSON_MIME)

    async def _get(
        self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send
    ) -> None:
        if SSE_MIME not in headers.get("accept", ""):
            raise Refused(406, f"Accept must include {SSE_MIME}")
        transport = self._known(headers, principal)
        sid = headers.get(SESSION_ID_HEADER.lower())
        full = len(transport.session_streams) >= MAX_SESSION_STREAMS
        if sid is not None and sid not in transport.session_streams and full:
            raise Refused(429, f"more than {MAX_SESSION_STREAMS} session streams")
        stream = transport.stream_for(sid)
        if stream.reader is not None:
            raise Refused(409, "this stream already has a reader")
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
        gone = asyncio.ensure_future(disconnected(receive))
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

    async def _websocket(self, headers: Mapping[str, str], receive: Receive, send: Send) -> None:
        await serve_websocket(self, headers, receive, send)

    # -- connections -------------------------------------------------------------------------
    async def _open(
        self, kind: str, headers: Mapping[str, str], principal: Any
    ) -> HttpAcpAgentTransport:
        if self._closed:
            raise Refused(503, "server shutting down")
        limit = self.max_connections
        if limit is not None and len(self._connections) + self._opening >= limit:
            raise Refused(
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
            raise Refused(500, f"the agent could not be started: {type(exc).__name__}") from exc
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
        watch_connection(
            transport,
            loop,
            self._scheduler,
            idle=self._idle,
            first=self._first,
            over=self._over,
        )

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
