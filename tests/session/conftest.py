"""Fixtures for engine tests: a scripted peer transport that records every frame written."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rxacp.session import AcpSession
from rxacp.testing import quiesce
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed


class ScriptedTransport(AcpTransport):
    """The test plays the peer: ``sent()`` reads what the session wrote, ``inject`` feeds frames."""

    def __init__(self) -> None:
        self._sent: queue.Queue[dict[str, Any]] = queue.Queue()  # decoded frames
        self.receiver: FrameReceiver | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closed = threading.Event()
        self._closed_once = False

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self.loop, self.receiver = loop, receiver

    def send(self, frame: Frame) -> None:
        if not self._closed_once:
            assert isinstance(frame, bytes) and b"\n" not in frame
            self._sent.put(json.loads(frame))

    async def close(self) -> None:
        self._signal_closed(TransportClosed("closed by us"))

    def _signal_closed(self, info: TransportClosed) -> None:
        if not self._closed_once:
            self._closed_once = True
            assert self.receiver is not None
            self.receiver.on_closed(info)
            self.closed.set()

    # -- test side -------------------------------------------------------------
    def inject(self, obj: Any) -> None:
        """Deliver a frame to the session (an object is serialized; bytes go as they are)."""
        frame = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        assert self.loop is not None and self.receiver is not None
        self.loop.call_soon_threadsafe(self.receiver.on_frame, frame)

    def eof(self, **kw: Any) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self._signal_closed, TransportClosed("peer closed", **kw))

    def sent(self, timeout: float = 2.0) -> dict[str, Any]:
        return self._sent.get(timeout=timeout)

    def nothing_sent(self, session: AcpSession) -> bool:
        """True if nothing was written once the loop has processed everything queued so far."""
        flush(session)
        return self._sent.empty()


def flush(session: AcpSession) -> None:
    """Wait until the session's loop ran everything queued (``rxacp.testing.quiesce``; the
    engine tests keep blocking handlers running on purpose, so workers are not waited for)."""
    quiesce(session, workers=False)


@pytest.fixture
def scripted() -> Iterator[tuple[AcpSession, ScriptedTransport]]:
    transport = ScriptedTransport()
    session = AcpSession(transport, role="test")
    session.start()
    yield session, transport
    session.close()
