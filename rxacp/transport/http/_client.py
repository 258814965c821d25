"""The client side of Streamable HTTP: :class:`HttpAcpClientTransport` (``httpx`` + ``httpx-sse``).

Client→agent messages are POSTed in order, one at a time (``initialize`` answered in its
``200`` body with ``Acp-Connection-Id``; the rest ``202``); agent→client messages arrive on
long-lived SSE streams — the connection-scoped one, opened after ``initialize``, and one per
session, opened before the first message that names the session is POSTed (so nothing the
agent says about it is missed, and a turn's updates and its answer share one ordered stream).
Cookies the server sets are kept for the connection and sent back (``httpx``'s jar).

Every pending request settles: a refused POST of a request is answered locally with a JSON-RPC
error naming the HTTP status; ``401``/``403``/``404``/``410``, a network failure or the end of
any stream ends the whole transport (``on_closed``), which fails every pending request.

This module is *not* responsible for the agent side (``_app``), nor for reconnecting (build a
new transport and client, then ``session/load``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.parse
from collections.abc import Mapping
from typing import Any

import httpx
import httpx_sse

from rxacp import jsonrpc
from rxacp.errors import AcpConnectionException
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed
from rxacp.transport.framing import call_safely
from rxacp.transport.http._protocol import (
    CONNECTION_ID_HEADER,
    JSON_MIME,
    SESSION_ID_HEADER,
    SSE_MIME,
    id_key,
    params_session_id,
)

__all__ = ["HttpAcpClientTransport"]

_log = logging.getLogger("rxacp.transport.http")

_FATAL_STATUSES = frozenset({401, 403, 404, 410})
_ERROR_TEXT_CAP = 500


class HttpAcpClientTransport(AcpTransport):
    """The client side: connects to an agent at ``url`` (``http://host:port/acp`` or ``https``).

    ``headers`` go on every request (e.g. ``Authorization``); ``token`` adds ``Authorization:
    Bearer <token>``. ``connect_timeout`` bounds connecting and each POST; SSE streams have no
    read timeout (the server sends keepalive comments). Incoming messages over
    ``max_message_size`` end the transport. ``client``: an ``httpx.AsyncClient`` of your own
    (proxies, TLS, HTTP/2 with ``httpx[http2]``); by default one is made per transport, with a
    cookie jar, and closed with it. No automatic reconnect.
    """

    carries_objects = True

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        connect_timeout: float = 10.0,
        max_message_size: int = 16 * 1024 * 1024,
        close_timeout: float = 5.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"a remote agent url starts with http:// or https://, got {url!r}")
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be > 0 seconds, got {connect_timeout!r}")
        self.url = url
        self._headers = dict(headers or {})
        if token is not None:
            if not isinstance(token, str) or not token:
                raise ValueError("token must be a non-empty string (or None)")
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = float(connect_timeout)
        self._close_timeout = float(close_timeout)
        self._max = max_message_size
        self._client = client
        self._owns_client = client is None
        self._receiver: FrameReceiver | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.connection_id: str | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._ready: dict[str | None, asyncio.Future[None]] = {}
        self._agent_requests: dict[str, str | None] = {}  # agent request id -> its stream
        self._ended = False
        self._closing = False

    # -- AcpTransport ----------------------------------------------------------------------
    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Begin: nothing is sent until the first message (``initialize``)."""
        if self._receiver is not None:
            raise RuntimeError("HttpAcpClientTransport started twice")
        self._receiver, self._loop = receiver, loop
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout, read=None),
                follow_redirects=False,
                # over HTTP/1.1 every open SSE stream holds a TCP connection of its own: a pool
                # cap would make POSTs wait behind them once there are many sessions
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=20),
            )
        self._queue = asyncio.Queue()
        self._worker = loop.create_task(self._post_loop())

    def send(self, frame: Frame) -> None:
        """Queue one message for POSTing (in order); never blocks."""
        if self._ended or self._queue is None:
            return
        message = (
            jsonrpc.decode_json(bytes(frame))
            if isinstance(frame, bytes | bytearray | memoryview)
            else frame
        )
        data = jsonrpc.serialize(message)
        self._queue.put_nowait((message, data))

    async def close(self) -> None:
        """Stop the streams, end the connection (``DELETE``, bounded), close the client."""
        if self._closing:
            return
        self._closing = True
        tasks = [t for t in (self._worker, *self._streams.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        client, cid = self._client, self.connection_id
        if client is not None:
            if cid is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        client.delete(self.url, headers=self._with({CONNECTION_ID_HEADER: cid})),
                        self._close_timeout,
                    )
            if self._owns_client:
                with contextlib.suppress(Exception):
                    await client.aclose()
        self._end(TransportClosed("closed"))

    # -- internals -------------------------------------------------------------------------
    def _with(self, extra: Mapping[str, str]) -> dict[str, str]:
        return {**self._headers, **extra}

    def _end(self, info: TransportClosed) -> None:
        if self._ended:
            return
        self._ended = True
        for future in self._ready.values():
            if not future.done():
                future.set_exception(AcpConnectionException(info.reason))
                future.exception()  # retrieved: nobody else may wait for it
        receiver = self._receiver
        if receiver is not None:
            call_safely(receiver.on_closed, info)
        if not self._closing and self._loop is not None:
            self._loop.create_task(self.close())

    def _fail(self, reason: str, error: BaseException | None = None) -> None:
        if not self._closing:
            _log.warning("remote agent connection ended: %s", reason)
        self._end(TransportClosed(reason, error=error))

    def _incoming(self, data: bytes, stream: str | None) -> None:
        if self._ended or self._receiver is None:
            return
        if len(data) > self._max:
            self._fail(f"an incoming message exceeded max_message_size ({self._max} bytes)")
            return
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        if isinstance(message, dict):
            if "method" in message:
                key = id_key(message.get("id"))
                if key is not None:
                    self._agent_requests[key] = stream
            else:
                result = message.get("result")
                sid = result.get("sessionId") if isinstance(result, dict) else None
                if isinstance(sid, str):
                    self._open_stream(sid)  # the client will talk about it next
        call_safely(self._receiver.on_frame, data)

    async def _post_loop(self) -> None:
        queue = self._queue
        assert queue is not None
        while True:
            message, data = await queue.get()
            try:
                await self._post(message, data)
            except asyncio.CancelledError:
                raise
            except httpx.HTTPError as exc:
                self._fail(f"cannot reach the agent at {self.url}: {exc!r}", exc)
                return
            except AcpConnectionException as exc:
                self._fail(str(exc))
                return
            if self._ended:
                return

    async def _post(self, message: Any, data: bytes) -> None:
        client = self._client
        assert client is not None
        is_dict = isinstance(message, dict)
        method = message.get("method") if is_dict else None
        key = id_key(message.get("id")) if is_dict else None
        headers = {"Content-Type": JSON_MIME}
        if self.connection_id is None:
            if method != "initialize":
                raise AcpConnectionException(
                    f"the first message to {self.url} must be initialize, not {method!r}"
                )
            await self._post_initialize(client, data, headers)
            return
        headers[CONNECTION_ID_HEADER] = self.connection_id
        sid = params_session_id(message) if is_dict and method is not None else None
        if method is None and key is not None:
            sid = self._agent_requests.pop(key, None)
        if sid is not None:
            headers[SESSION_ID_HEADER] = sid
            await self._stream_ready(sid)
        response = await client.post(self.url, content=data, headers=self._with(headers))
        await response.aclose()
        if response.status_code in (200, 202):
            return
        text = _error_text(response)
        reason = f"the agent at {self.url} refused a message: HTTP {response.status_code} {text}"
        if response.status_code in _FATAL_STATUSES or method is None or key is None:
            raise AcpConnectionException(reason)
        answer = jsonrpc.error_obj(
            message.get("id"),
            {"code": -32603, "message": reason, "data": {"status": response.status_code}},
        )
        self._incoming(jsonrpc.serialize(answer), None)

    async def _post_initialize(
        self, client: httpx.AsyncClient, data: bytes, headers: dict[str, str]
    ) -> None:
        response = await client.post(self.url, content=data, headers=self._with(headers))
        body = await response.aread()
        if response.status_code != 200:
            raise AcpConnectionException(
                f"cannot connect to {self.url}: initialize answered HTTP {response.status_code}"
                f" {_error_text(response)}"
            )
        cid = response.headers.get(CONNECTION_ID_HEADER)
        if not cid:
            raise AcpConnectionException(
                f"cannot connect to {self.url}: its initialize answer has no {CONNECTION_ID_HEADER}"
            )
        self.connection_id = cid
        self._open_stream(None)
        await self._stream_ready(None)
        self._incoming(body, None)

    def _open_stream(self, sid: str | None) -> None:
        if sid in self._streams or self._ended or self._loop is None:
            return
        self._ready[sid] = self._loop.create_future()
        self._streams[sid] = self._loop.create_task(self._read_stream(sid))

    async def _stream_ready(self, sid: str | None) -> None:
        self._open_stream(sid)
        ready = self._ready.get(sid)
        if ready is not None:
            await asyncio.shield(ready)

    async def _read_stream(self, sid: str | None) -> None:
        client, cid = self._client, self.connection_id
        assert client is not None and cid is not None
        headers = {"Accept": SSE_MIME, CONNECTION_ID_HEADER: cid}
        if sid is not None:
            headers[SESSION_ID_HEADER] = sid
        what = "connection stream" if sid is None else f"stream of session {sid}"
        try:
            async with httpx_sse.aconnect_sse(
                client, "GET", self.url, headers=self._with(headers)
            ) as source:
                status = source.response.status_code
                if status != 200:
                    await source.response.aread()
                    self._fail(
                        f"the agent at {self.url} refused the {what}: HTTP {status} "
                        f"{_error_text(source.response)}"
                    )
                    return
                ready = self._ready.get(sid)
                if ready is not None and not ready.done():
                    ready.set_result(None)
                async for event in source.aiter_sse():
                    if event.data:
                        self._incoming(event.data.encode(), sid)
            self._fail(f"the agent at {self.url} ended the {what}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail(f"the {what} from {self.url} failed: {exc!r}", exc)


def _error_text(response: httpx.Response) -> str:
    try:
        text = response.text.strip()
    except Exception:
        return ""
    return f"({text[:_ERROR_TEXT_CAP]})" if text else ""
