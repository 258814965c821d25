"""Fixtures: the reference agent served over WebSocket on loopback, and clients that talk to it.

``Recording`` wraps a client's transport to see the raw JSON-RPC traffic (what the session engine
hides from the API, e.g. the ``-32800`` answer to a disposed prompt).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rxacp.client import AcpClient, AcpSyncClient
from rxacp.schema import (
    NewSessionRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
)
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport, FrameReceiver, TransportClosed
from rxacp.transport.base import Frame
from rxacp.transport.websocket import WebSocketAcpAgentServer, WebSocketAcpClientTransport

WAIT = 5.0
GRACE = 0.5  # the reference agent's cancel grace period in these tests
APIS = ("sync", "async")


def _decode(frame: Frame) -> Any:
    assert isinstance(frame, bytes | str), frame  # the WebSocket transports carry JSON text
    return json.loads(frame)


class Recording(AcpTransport):
    """Forwards to ``inner``; records every message both ways (decoded) for wire assertions."""

    def __init__(self, inner: AcpTransport) -> None:
        self.inner = inner
        self.sent: list[Any] = []
        self.received: list[Any] = []
        self._cond = threading.Condition()
        self._receiver: FrameReceiver | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self._receiver = receiver
        await self.inner.start(loop, self)

    def on_frame(self, frame: Frame) -> None:
        with self._cond:
            self.received.append(_decode(frame))
            self._cond.notify_all()
        assert self._receiver is not None
        self._receiver.on_frame(frame)

    def on_frame_too_large(self, size: int) -> None:
        assert self._receiver is not None
        self._receiver.on_frame_too_large(size)

    def on_closed(self, info: TransportClosed) -> None:
        assert self._receiver is not None
        self._receiver.on_closed(info)

    def on_write_paused(self) -> None:
        assert self._receiver is not None
        self._receiver.on_write_paused()

    def on_write_resumed(self) -> None:
        assert self._receiver is not None
        self._receiver.on_write_resumed()

    def send(self, frame: Frame) -> None:
        with self._cond:
            self.sent.append(_decode(frame))
        self.inner.send(frame)

    async def close(self) -> None:
        await self.inner.close()

    def wait_received(self, predicate: Callable[[Any], bool], timeout: float = WAIT) -> Any:
        """The first received message matching ``predicate`` (waits for it, bounded)."""
        found: list[Any] = []

        def match() -> bool:
            found[:] = [m for m in self.received if predicate(m)][:1]
            return bool(found)

        with self._cond:
            assert self._cond.wait_for(match, timeout), "expected message never arrived"
        return found[0]


class Conversation:
    """A sync rxacp client connected over WebSocket, recording updates and serving fs reads."""

    def __init__(
        self, url: str, transport: AcpTransport | None = None, **transport_options: Any
    ) -> None:
        self.updates: list[SessionNotification] = []
        self._cond = threading.Condition()
        self.files: dict[str, str] = {}
        self.permission: Callable[[RequestPermissionRequest], RequestPermissionResponse] = (
            lambda req: RequestPermissionResponse.selected("allow")
        )
        self.wire = Recording(transport or WebSocketAcpClientTransport(url, **transport_options))
        self.client: AcpSyncClient = (
            AcpClient.sync(self.wire)
            .session_update_consumer(self._record)
            .read_text_file_handler(lambda req: ReadTextFileResponse(content=self.files[req.path]))
            .request_permission_handler(lambda req: self.permission(req))
            .build()
        )

    def initialize(self) -> Conversation:
        self.client.initialize()
        return self

    def _record(self, note: SessionNotification) -> None:
        with self._cond:
            self.updates.append(note)
            self._cond.notify_all()

    def new_session(self) -> str:
        return self.client.new_session(NewSessionRequest.of("/tmp")).session_id

    def chunks(self, session_id: str) -> list[str]:
        with self._cond:
            return [
                getattr(getattr(n.update, "content", None), "text", "")
                for n in self.updates
                if n.session_id == session_id
                and getattr(n.update, "session_update", None) == "agent_message_chunk"
            ]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def close(self) -> None:
        self.client.close()


def reference_server(api: str, **options: Any) -> WebSocketAcpAgentServer:
    """A started server giving each connection its own reference agent (grace ``GRACE``)."""

    def factory(transport: AcpTransport) -> Any:
        return build_agent(api, transport, ReferenceOptions(cancel_grace=GRACE))

    return WebSocketAcpAgentServer(factory, **options).start()


@pytest.fixture(scope="module", params=APIS)
def server(request: pytest.FixtureRequest) -> Iterator[WebSocketAcpAgentServer]:
    """One server per agent API, shared by a module's tests."""
    srv = reference_server(request.param)
    yield srv
    srv.close()


@pytest.fixture
def conv(server: WebSocketAcpAgentServer) -> Iterator[Conversation]:
    """A fresh, initialized client connection to the shared server."""
    conversation = Conversation(server.url).initialize()
    yield conversation
    conversation.close()
