"""The engine contract over real transports: the in-memory pair and stdio pipes to a subprocess."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject

from rxacp.errors import AcpConnectionException
from rxacp.session import AcpSession, IncomingNotification
from rxacp.session.blocking import wait_for
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport import AgentParameters, FrameReceiver, StdioAcpClientTransport

from .peers.echo_session import serve

PEER = str(Path(__file__).parent / "peers" / "echo_session.py")


class Link:
    """Our session plus whatever runs the peer; collects the peer's notifications."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.notes: list[tuple[str, Any]] = []
        self.note_event = threading.Event()
        self.peer: AcpSession | None = None
        if kind == "memory":
            pair = InMemoryTransportPair.create()
            self.peer = serve(pair.agent_transport)
            transport: Any = pair.client_transport
        else:
            params = (
                AgentParameters.builder(sys.executable)
                .args(PEER)
                .env({"PYTHONPATH": os.getcwd()})
                .build()
            )
            transport = StdioAcpClientTransport(params)
        self.transport = transport
        self.session = AcpSession(transport, role="test")
        for method in ("_disposed", "_note"):
            self.session.set_notification_handler(method, self._record)
        self.session.start()

    def _record(self, note: IncomingNotification) -> None:
        self.notes.append((note.method, note.params))
        self.note_event.set()

    def wait_note(self, method: str, timeout: float = 5.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            for m, p in self.notes:
                if m == method:
                    return p
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {method} notification"
            self.note_event.clear()
            self.note_event.wait(remaining)

    def call(self, method: str, params: Any, timeout: float = 10.0) -> Any:
        return wait_for(self.session.send_request(method, params), timeout)

    def close(self) -> None:
        self.session.close()
        if self.peer is not None:
            self.peer.close()


@pytest.fixture(params=["memory", "stdio"])
def link(request: pytest.FixtureRequest) -> Iterator[Link]:
    made = Link(request.param)
    yield made
    made.close()


def test_echo_round_trip_preserves_unicode(link: Link) -> None:
    assert link.call("echo", {"text": "héllo ✓ 日本"}) == {"text": "héllo ✓ 日本"}


def test_dispose_before_answer_reaches_the_peer_as_exactly_one_cancel(link: Link) -> None:
    sub = link.session.send_request("hang", {}).subscribe(on_error=lambda e: None)
    assert link.call("echo", {"sync": 1}) == {"sync": 1}  # the hang request is in flight
    sub.dispose()
    sub.dispose()
    disposed = link.wait_note("_disposed")
    assert isinstance(disposed["requestId"], int)
    assert link.call("echo", {"after": 1}) == {"after": 1}
    assert [m for m, _ in link.notes].count("_disposed") == 1
    assert link.session.pending_request_count == 0


def test_take_until_cancels_over_the_wire(link: Link) -> None:
    trigger: Subject[int] = Subject()
    done = threading.Event()
    link.session.send_request("hang", {}).pipe(ops.take_until(trigger)).subscribe(
        on_completed=done.set
    )
    link.call("echo", {})
    trigger.on_next(1)
    assert done.wait(2)
    link.wait_note("_disposed")


def test_notifications_arrive_before_the_answer_in_order_with_a_slow_consumer(link: Link) -> None:
    seen: list[int] = []

    def slow(note: IncomingNotification) -> reactivex.Observable[Any]:
        seen.append(note.params["i"])
        return reactivex.timer(0.001, scheduler=link.session.scheduler)

    link.session.set_notification_handler("_note", slow)
    result = link.call("notify_then_answer", {"n": 300})
    assert result == {"done": 300}
    assert seen == list(range(300))


def test_malformed_lines_are_answered_and_the_connection_keeps_serving() -> None:
    pair = InMemoryTransportPair.create()
    peer = serve(pair.agent_transport)
    errors: list[dict[str, Any]] = []
    raw = pair.client_transport

    import asyncio
    import json

    loop = asyncio.new_event_loop()
    four: asyncio.Future[None] = loop.create_future()

    class Receiver(FrameReceiver):
        def on_frame(self, frame: Any) -> None:
            errors.append(json.loads(frame))
            if len(errors) == 4 and not four.done():
                four.set_result(None)

        def on_frame_too_large(self, size: int) -> None: ...

        def on_closed(self, info: Any) -> None: ...

    try:
        loop.run_until_complete(raw.start(loop, Receiver()))
        for line in (
            b"{oops",
            b"[]",
            b"17",
            b'{"jsonrpc":"2.0","id":5,"method":"echo","params":{"ok":1}}',
        ):
            raw.send(line)
        loop.run_until_complete(asyncio.wait_for(four, 5))
        assert [e.get("error", {}).get("code") for e in errors[:3]] == [-32700, -32600, -32600]
        assert errors[3] == {"jsonrpc": "2.0", "id": 5, "result": {"ok": 1}}
    finally:
        loop.run_until_complete(raw.close())
        loop.close()
        peer.close()


def test_a_20_mib_message_round_trips_over_stdio() -> None:
    link = Link("stdio")
    try:
        result = link.call("big", {"size": 20 * 1024 * 1024}, timeout=30)
        assert len(result["data"]) == 20 * 1024 * 1024
        echoed = link.call("echo", {"blob": "y" * (20 * 1024 * 1024)}, timeout=30)
        assert len(echoed["blob"]) == 20 * 1024 * 1024
    finally:
        link.close()


def test_peer_killed_mid_request_errors_by_its_death_not_at_the_timeout() -> None:
    link = Link("stdio")
    try:
        link.call("echo", {})
        errors: list[Exception] = []
        done = threading.Event()

        def on_error(error: Exception) -> None:
            errors.append(error)
            done.set()

        link.session.send_request("hang", {}).subscribe(on_error=on_error)
        link.call("echo", {})
        pid = link.transport.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        # bounded generously, far below the request timeout: only the death can settle it
        assert done.wait(30.0), "pending request did not settle after the peer's death"
        assert isinstance(errors[0], AcpConnectionException)
        assert errors[0].exit_code == -signal.SIGKILL
    finally:
        link.close()


def _rxacp_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("rxacp-") and t.is_alive()}


def test_close_leaves_no_thread_and_no_process() -> None:
    before = _rxacp_threads()
    pids: list[int] = []
    for kind in ("memory", "stdio", "memory", "stdio"):
        link = Link(kind)
        link.call("echo", {})
        if kind == "stdio":
            pids.append(link.transport.pid)
        link.close()
    for thread in threading.enumerate():
        if thread.name.startswith("rxacp-") and thread.name not in before:
            thread.join(3)  # idle workers exit once the pool shuts down
    assert _rxacp_threads() - before == set()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
