"""One ACP connection of the remote endpoint, agent side: :class:`HttpAcpAgentTransport`.

The ASGI app (``_app``) makes one per connection, Streamable HTTP or WebSocket, and passes it to
the agent factory. Incoming messages (decoded POST bodies, WebSocket frames) are handed to the
agent's loop in arrival order; outgoing messages are serialized on the agent's loop and routed
on the app's loop to the stream that carries them: the ``initialize`` answer to its POST, the
connection-scoped stream, or the session-scoped stream named by the message (a WebSocket
connection has one stream). Streams buffer until a GET reads them; the bytes nobody has read
yet pause the agent's producers past a high-water mark and end the connection past a cap.

Routing follows the RFD: a response goes where its request came from (its ``Acp-Session-Id``
or ``params.sessionId``; ``session/new`` answers on the connection stream); requests and
notifications of the agent go to their ``params.sessionId``'s stream. While a
``session/load``/``resume`` is pending, that session's replay and the answer go to the session
stream if the client reads it (the TypeScript client opens it first), else both to the
connection stream (the Python client reads only that one until the load succeeded), so the
answer never overtakes the replay.

This module is *not* responsible for HTTP requests, security checks or the registry of
connections (``_app``), nor for JSON-RPC semantics.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from rxacp import jsonrpc
from rxacp.transport._budget import ByteBudget, Reserved, release_dropped
from rxacp.transport._handoff import (
    OUTBOX_HIGH,
    OUTBOX_LOW,
    Ended,
    ReceiverInbox,
    deliver_frame,
)
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed
from rxacp.transport.http._protocol import (
    ATTACH_METHODS,
    MAX_SESSION_STREAMS,
    id_key,
    params_session_id,
)

__all__ = ["OUTBOX_HIGH", "OUTBOX_LOW", "HttpAcpAgentTransport", "MessageStream"]

_MAX_SESSIONS = 4096  # session ids remembered per connection


class MessageStream:
    """One outgoing stream (app loop): serialized messages wait until its one reader takes
    them. ``reader`` is the token of the GET (or WebSocket) reading it, ``None`` while
    nobody reads (messages are kept, bounded by the connection's cap)."""

    __slots__ = ("_wake", "ended", "items", "reader")

    def __init__(self) -> None:
        self.items: collections.deque[bytes] = collections.deque()
        self.reader: object | None = None
        self.ended = False
        self._wake = asyncio.Event()

    def push(self, data: bytes) -> None:
        self.items.append(data)
        self._wake.set()

    def end(self) -> None:
        self.ended = True
        self._wake.set()

    async def next(self, timeout: float | None) -> bytes | None:
        """The next message, ``b""`` after ``timeout`` seconds without one (a keepalive is
        due), ``None`` once the stream ended."""
        while not self.items:
            if self.ended:
                return None
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return b""
        return self.items.popleft()


class HttpAcpAgentTransport(AcpTransport):
    """The agent side of one remote connection (Streamable HTTP or WebSocket) of
    :class:`~rxacp.transport.http.AcpAsgiApp`.

    The app creates it and passes it to the agent factory; use it like any transport
    (``AcpAgent.sync(transport)...build()``). :attr:`connection_id` is the connection's
    ``Acp-Connection-Id``, :attr:`kind` ``"http"`` or ``"websocket"``, :attr:`request_headers`
    the headers of the request that opened it (lower-case names), :attr:`principal` what the
    app's ``authenticate`` hook returned for it.
    """

    carries_objects = True

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        connection_id: str,
        kind: str,
        request_headers: Mapping[str, str],
        principal: Any,
        budget: ByteBudget,
        max_unread: int,
        on_agent_closed: Callable[[HttpAcpAgentTransport], None],
    ) -> None:
        self.connection_id = connection_id
        self.kind = kind
        self.request_headers: Mapping[str, str] = dict(request_headers)
        self.principal = principal
        self._app_loop = loop
        self._budget = budget
        self._max_unread = max_unread
        self._on_agent_closed = on_agent_closed
        self._inbox = ReceiverInbox(deliver_frame, name="HTTP", on_drop=release_dropped)
        self._rx_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        # (is an answer, is an error answer, id key, params session id, session named, bytes)
        self._out: list[tuple[bool, bool, str | None, str | None, str | None, bytes]] = []
        self._out_scheduled = False
        self._unread = 0  # bytes sent by the agent that no reader took yet (any thread)
        self._paused = False
        self._closed = False  # the agent closed its transport
        self.ended = False  # app loop: the connection is over (streams ended)
        self.end_reason = ""
        # app loop only:
        self.connection_stream = MessageStream()
        self.session_streams: dict[str, MessageStream] = {}
        self.sessions: set[str] = set()  # session ids the agent named (answers, messages)
        self._routes: dict[str, str | None] = {}  # client request id -> session id of its route
        self._loads: dict[str, str] = {}  # pending session/load|resume id -> session id
        self._asked: dict[str, str] = {}  # the agent's unanswered requests' id -> session id
        self._init_key: str | None = None
        self._init_answer: asyncio.Future[bytes] | None = None
        self.delivered = 0  # incoming messages handed to the agent so far
        self.activity: Callable[[], None] = lambda: None

    # -- the agent's side (its loop) -------------------------------------------------------
    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Deliver the connection's incoming messages to ``receiver`` on ``loop``."""
        if self._inbox.receiver is not None:
            raise RuntimeError("HttpAcpAgentTransport started twice")
        self._rx_loop = loop
        self._inbox.attach(loop, receiver)

    def send(self, frame: Frame) -> None:
        """Queue one outgoing message (a dict, or a serialized one); never blocks. Raises
        ``TypeError``/``ValueError`` for a value JSON cannot represent (nothing is sent)."""
        if isinstance(frame, bytes | bytearray | memoryview):
            data = bytes(frame)
            message = jsonrpc.decode_json(data)
        else:
            message, data = frame, jsonrpc.serialize(frame)
        response = isinstance(message, dict) and "method" not in message
        failed = response and "error" in message
        key = sid = named = None
        if isinstance(message, dict):
            key = id_key(message.get("id"))
            sid = named = params_session_id(message)
            result = message.get("result") if response else None
            if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
                named = result["sessionId"]  # an answer naming a session: it exists now
        with self._lock:
            if self._closed:
                return
            self._out.append((response, failed, key, sid, named, data))
            self._unread += len(data)
            pause = not self._paused and self._unread > OUTBOX_HIGH
            if pause:
                self._paused = True
            scheduled, self._out_scheduled = self._out_scheduled, True
        if pause:
            self._flow(paused=True)
        if not scheduled:
            with contextlib.suppress(RuntimeError):  # the app's loop is gone
                self._app_loop.call_soon_threadsafe(self._route_queued)

    async def close(self) -> None:
        """The agent ends the connection: its streams end, later requests get 404."""
        with self._lock:
            first = not self._closed
            self._closed = True
        self._inbox.end(TransportClosed("closed"))
        if first:
            with contextlib.suppress(RuntimeError):
                self._app_loop.call_soon_threadsafe(self._agent_closed)

    def _flow(self, *, paused: bool) -> None:
        self._inbox.tell_flow(paused=paused)

    # -- the app's side (its loop) ---------------------------------------------------------
    def expect_initialize(self, request_id: Any) -> asyncio.Future[bytes]:
        """The future of the answer to the ``initialize`` request with ``request_id``."""
        self._init_key = id_key(request_id)
        self._init_answer = self._app_loop.create_future()
        return self._init_answer

    def deliver(self, message: Any, reserved: int = 0) -> None:
        """Hand one incoming message to the agent (in order); ``reserved`` budget bytes are
        released once the agent's engine took it. Records where its answer goes."""
        self.activity()
        self.delivered += 1
        if isinstance(message, dict) and "method" not in message and self._asked:
            self._asked.pop(id_key(message.get("id")) or "", None)  # an answer of the client's
        elif isinstance(message, dict) and "method" in message:
            key = id_key(message.get("id"))
            if key is not None and self.kind == "http":
                sid = params_session_id(message)
                streams = self.session_streams
                room = sid in streams or len(streams) < MAX_SESSION_STREAMS
                if message.get("method") in ATTACH_METHODS and sid is not None and room:
                    self._loads[key] = sid
                    streams.setdefault(sid, MessageStream())
                else:  # (a load past the cap: answered and replayed on the connection stream)
                    self._routes[key] = sid
        if self.ended:
            if reserved:
                self._budget.release(reserved)
            return
        self._inbox.push(Reserved(message, reserved, self._budget), self._app_loop)

    def stream_for(self, session_id: str | None) -> MessageStream:
        """The connection-scoped stream, or the one of ``session_id`` (made if new)."""
        if session_id is None:
            return self.connection_stream
        stream = self.session_streams.get(session_id)
        if stream is None:
            stream = self.session_streams[session_id] = MessageStream()
            if self.ended:
                stream.end()
        return stream

    def taken(self, data: bytes) -> None:
        """A reader took ``data`` off a stream (the client has it or the socket does)."""
        self.activity()
        with self._lock:
            self._unread -= len(data)
            resume = self._paused and self._unread <= OUTBOX_LOW
            if resume:
                self._paused = False
        if resume:
            self._flow(paused=False)

    def end(self, reason: str) -> None:
        """The connection is over (DELETE, idle, shutdown, socket closed, agent closed): end
        every stream, tell the agent (its pending requests settle)."""
        if self.ended:
            return
        self.ended, self.end_reason = True, reason
        self.connection_stream.end()
        for stream in self.session_streams.values():
            stream.end()
        if self._init_answer is not None and not self._init_answer.done():
            self._init_answer.set_exception(ConnectionError(reason))
        self._inbox.push(Ended(TransportClosed(reason)), self._app_loop)

    def _agent_closed(self) -> None:
        self.end("the agent closed the connection")
        self._on_agent_closed(self)

    def _route_queued(self) -> None:
        with self._lock:
            batch, self._out, self._out_scheduled = self._out, [], False
        for response, failed, key, sid, named, data in batch:
            if self.ended:
                self.taken(data)
                continue
            stream = self._route(response, failed, key, sid, named, data)
            if stream is None:
                continue
            stream.push(data)
            if len(stream.items) == 1 or self._unread > self._max_unread:
                self._check_unread()

    def _route(
        self,
        response: bool,
        failed: bool,
        key: str | None,
        sid: str | None,
        named: str | None,
        data: bytes,
    ) -> MessageStream | None:
        if self.kind != "http":
            return self.connection_stream
        if named is not None and len(self.sessions) < _MAX_SESSIONS:
            self.sessions.add(named)
        if response:
            if key is not None and key == self._init_key:
                self._init_key = None
                answer = self._init_answer
                self.taken(data)
                if answer is not None and not answer.done():
                    answer.set_result(data)
                return None
            loaded = self._loads.pop(key, None) if key is not None else None
            if loaded is not None:
                stream = self._attach_route(loaded)
                if failed:  # no such session: the stream the load made goes, unless in use
                    unused = self.session_streams.get(loaded)
                    if unused is not None and unused.reader is None and not unused.items:
                        del self.session_streams[loaded]
                return stream
            route = self._routes.pop(key, None) if key is not None else None
            return self.stream_for(route)
        if key is not None and sid is not None and len(self._asked) < _MAX_SESSIONS:
            self._asked[key] = sid  # a request of the agent's, about session ``sid``
        if sid is not None and sid in self._loads.values():
            return self._attach_route(sid)
        return self.stream_for(sid)

    def asked_about(self, message: dict[str, Any]) -> str | None:
        """The session the agent's request that ``message`` answers was about (app loop)."""
        key = id_key(message.get("id"))
        return self._asked.get(key) if key is not None else None

    def _attach_route(self, sid: str) -> MessageStream:
        stream = self.stream_for(sid)
        return stream if stream.reader is not None else self.connection_stream

    def _check_unread(self) -> None:
        if self._unread > self._max_unread:
            self.end(
                f"the client is not reading: more than {self._max_unread} bytes of messages unread"
            )
            self._on_agent_closed(self)
