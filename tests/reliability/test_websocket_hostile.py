"""Issue 17 items 2-4: the WebSocket agent server against hostile clients.

Item 3 (a client that never reads): pings answered with pongs nobody reads, and a long stream
nobody reads, grew the server without limit. The server now stops reading a connection whose
own write buffer is over its mark, and the stdio back-pressure applies per connection.

Item 4 (slowloris): connections that finish the handshake and send nothing used to hold every
``max_connections`` slot forever (real clients got 1013). A default first-message timeout (10 s)
and idle timeout (3600 s) now free them; the tests run them in virtual time.

Item 2 (cross-site WebSocket hijacking): a web page the user opens can open a WebSocket to
``ws://127.0.0.1:PORT`` and its browser sends an ``Origin`` header. Before the fix a default
``WebSocketAcpAgentServer`` served such a page initialize, session/new and a prompt. Now any
handshake with an ``Origin`` is refused (HTTP 403) unless allow-listed; ``token=`` adds a bearer
check. The attacker is a raw ``websockets`` client; the agent is the reference agent.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import reactivex
from reactivex.testing import TestScheduler
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from rxacp.agent import AcpAgent, PromptContext
from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport
from rxacp.transport.websocket import (
    DEFAULT_FIRST_MESSAGE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    WebSocketAcpAgentServer,
    WebSocketAcpAgentTransport,
    WebSocketAcpClientTransport,
)

from .conftest import ROOT, Figure, agent_env, rss_kib, scaled, wait_until

WAIT = 10.0


def reference_server(**options: Any) -> WebSocketAcpAgentServer:
    def factory(transport: AcpTransport) -> Any:
        return build_agent("sync", transport, ReferenceOptions())

    return WebSocketAcpAgentServer(factory, **options).start()


@pytest.fixture
def default_server() -> Iterator[WebSocketAcpAgentServer]:
    server = reference_server()
    yield server
    server.close()


def drive(ws: ClientConnection) -> int:
    """What a hostile page would do once connected: initialize, session/new, a prompt.

    Returns how many of the three requests were answered with a result."""
    served = 0
    calls = [
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
        ("session/new", {"cwd": "/", "mcpServers": []}),
    ]
    for rid, (method, params) in enumerate(calls):
        ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        answer = json.loads(ws.recv(WAIT))
        served += "result" in answer
        if method == "session/new":
            session_id = answer["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "echo pwned"}]}
    ws.send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": prompt}))
    while True:
        msg = json.loads(ws.recv(WAIT))
        if msg.get("id") == 9:
            return served + ("result" in msg)


def attempt(url: str, headers: dict[str, str]) -> tuple[int | None, int]:
    """(HTTP status of a refused handshake or None, requests served)."""
    try:
        with connect(url, additional_headers=headers, open_timeout=WAIT) as ws:
            return None, drive(ws)
    except InvalidStatus as exc:
        return exc.response.status_code, 0


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1:1"])
def test_a_default_server_refuses_any_handshake_carrying_an_origin_a_web_page_would_send(
    default_server: WebSocketAcpAgentServer, origin: str, figure: Figure
) -> None:
    status, served = attempt(default_server.url, {"Origin": origin})
    figure("status", status)
    figure("requests_served_to_the_page", served)
    assert (status, served) == (403, 0)
    assert default_server.connection_count == 0


def test_clients_without_an_origin_and_allow_listed_origins_keep_working(
    default_server: WebSocketAcpAgentServer,
) -> None:
    assert attempt(default_server.url, {}) == (None, 3)  # non-browser clients send no Origin
    server = reference_server(allowed_origins=["https://Editor.example/"])
    try:
        assert attempt(server.url, {"Origin": "https://editor.example"}) == (None, 3)
        assert attempt(server.url, {"Origin": "https://evil.example"}) == (403, 0)
    finally:
        server.close()


def test_a_server_with_a_token_refuses_handshakes_without_the_right_bearer_token(
    figure: Figure,
) -> None:
    server = reference_server(token="s3cret-token")
    try:
        assert attempt(server.url, {}) == (401, 0)
        assert attempt(server.url, {"Authorization": "Bearer wrong"}) == (401, 0)
        assert attempt(server.url, {"Authorization": "Bearer s3cret-token"}) == (None, 3)
        transport = WebSocketAcpClientTransport(server.url, token="s3cret-token")
        with AcpClient.sync(transport).build() as client:
            client.initialize()
            session_id = client.new_session(NewSessionRequest.of("/")).session_id
            answer = client.prompt(PromptRequest.text(session_id, "echo hi"))
        assert answer.stop_reason == "end_turn"
    finally:
        server.close()
    figure("refused_without_token", 2)


def test_origin_and_token_options_are_checked_when_the_server_is_built() -> None:
    with pytest.raises(TypeError, match="list of origins"):
        WebSocketAcpAgentServer(lambda t: None, allowed_origins="https://a.example")
    with pytest.raises(ValueError, match="token"):
        WebSocketAcpAgentServer(lambda t: None, token="")


# -- item 4: slowloris -------------------------------------------------------------------------

SILENT = scaled(20, 100)


def test_silent_connections_filling_every_slot_are_closed_after_the_first_message_timeout(
    figure: Figure,
) -> None:
    """``SILENT`` connections finish the handshake and send nothing. With ``max_connections``
    equal to that, a real client is refused 1013; after the default first-message timeout
    (virtual time) every silent one is closed and the real client is served."""
    clock = TestScheduler()
    server = reference_server(max_connections=SILENT, scheduler=clock)
    silent: list[ClientConnection] = []
    stack = contextlib.ExitStack()
    try:
        for _ in range(SILENT):
            silent.append(stack.enter_context(connect(server.url, open_timeout=WAIT)))
        assert wait_until(lambda: server.connection_count == SILENT, WAIT)
        with (
            connect(server.url, open_timeout=WAIT) as refused,
            pytest.raises(ConnectionClosed) as info,
        ):
            refused.recv(WAIT)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1013
        clock.advance_by(DEFAULT_FIRST_MESSAGE_TIMEOUT - 1)
        assert server.connection_count == SILENT  # not before the limit
        advance_until(clock, lambda: server.connection_count == 0)
        closed = []
        for ws in silent:
            with pytest.raises(ConnectionClosed) as info:
                ws.recv(WAIT)
            closed.append(info.value.rcvd)
        assert all(c is not None and c.code == 1001 for c in closed), closed
        assert closed[0] is not None and "no first message within 10 s" in closed[0].reason
        assert wait_until(lambda: server.connection_count == 0, WAIT)
        with connect(server.url, open_timeout=WAIT) as real:
            assert drive(real) == 3
    finally:
        stack.close()
        server.close()
    figure("silent_connections", SILENT)
    figure("locked_out_for_virtual_seconds", DEFAULT_FIRST_MESSAGE_TIMEOUT)


def advance_until(clock: TestScheduler, done: Callable[[], bool], limit: int = 60) -> None:
    """Advance virtual time a second at a time until ``done()`` (bounded): a connection's timer
    is armed when the server has run its handler, which may be just after the handshake."""
    for _ in range(limit):
        clock.advance_by(1)
        if wait_until(done, 0.2):
            return
    raise AssertionError("the condition never held")


def test_a_connection_silent_after_its_first_message_is_closed_by_the_default_idle_timeout() -> (
    None
):
    clock = TestScheduler()
    server = reference_server(scheduler=clock)
    try:
        with connect(server.url, open_timeout=WAIT) as ws:
            init = {"protocolVersion": 1, "clientCapabilities": {}}
            ws.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
            assert "result" in json.loads(ws.recv(WAIT))
            clock.advance_by(DEFAULT_IDLE_TIMEOUT - 1)
            assert server.connection_count == 1
            clock.advance_by(1)
            with pytest.raises(ConnectionClosed) as info:
                ws.recv(WAIT)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1001
        assert "idle timeout: no message for 3600 s" in info.value.rcvd.reason
    finally:
        server.close()


def test_both_timeouts_can_be_turned_off_with_zero() -> None:
    clock = TestScheduler()
    server = reference_server(scheduler=clock, first_message_timeout=0, idle_timeout=0)
    try:
        with connect(server.url, open_timeout=WAIT) as ws:
            clock.advance_by(10 * DEFAULT_IDLE_TIMEOUT)
            assert drive(ws) == 3
    finally:
        server.close()


# -- item 3: a client that never reads -------------------------------------------------------

FLOOD_SECONDS = scaled(3, 20)
STREAM_UPDATES = scaled(200_000, 500_000)
WS_RSS_BOUND_KIB = 24 * 1024
EXAMPLE = os.path.join(ROOT, "examples", "websocket_agent.py")


def _masked(opcode: int, payload: bytes) -> bytes:
    """One client frame (clients must mask), FIN set."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _raw_connect(url: str) -> socket.socket:
    """A handshake by hand: this client will never read another byte."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=WAIT)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /acp HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(1)
    assert response.startswith(b"HTTP/1.1 101"), response
    return sock


@contextlib.contextmanager
def _server_process(
    *args: str, stderr: Any = subprocess.DEVNULL
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [sys.executable, EXAMPLE, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **agent_env()},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        yield proc, line.rsplit(" ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_client_that_floods_pings_and_never_reads_the_pongs_cannot_grow_the_server(
    figure: Figure,
) -> None:
    """Before: the server answered every ping with a pong queued for a client that never reads
    (47 -> 594 MiB in 20 s). Now the server stops reading the socket while its own write buffer
    is over the mark, so the flood blocks in the attacker's send()."""
    with _server_process() as (proc, url):
        idle = rss_kib(proc.pid)
        sock = _raw_connect(url)
        sock.settimeout(0.2)
        ping = _masked(0x9, b"p" * 125)
        burst = ping * 256
        sent = blocked = 0
        peak = idle
        deadline = time.monotonic() + FLOOD_SECONDS
        while time.monotonic() < deadline:
            try:
                sock.sendall(burst)
                sent += 256
            except TimeoutError:
                blocked += 1
            peak = max(peak, rss_kib(proc.pid))
        sock.close()
        growth = peak - idle
    figure("flood_seconds", FLOOD_SECONDS)
    figure("pings_sent", sent)
    figure("server_rss_growth_kib", growth)
    figure("attacker_send_blocked_times", blocked)
    assert blocked > 0, "the server kept reading pings although its pongs were not read"
    assert growth < WS_RSS_BOUND_KIB, growth


def _start_stream(url: str, updates: int) -> socket.socket:
    sock = _raw_connect(url)
    calls = [
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
        ("session/new", {"cwd": "/", "mcpServers": []}),
    ]
    for rid, (method, params) in enumerate(calls):
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        sock.sendall(_masked(0x1, json.dumps(msg).encode()))
    prompt = [{"type": "text", "text": f"stream {updates}"}]
    params = {"sessionId": "ref-1", "prompt": prompt}
    msg = {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": params}
    sock.sendall(_masked(0x1, json.dumps(msg).encode()))
    return sock


PromptHandler = Callable[[PromptRequest, PromptContext], reactivex.Observable[PromptResponse]]


def _serve_to_a_client_that_never_reads(
    prompt: PromptHandler, caplog: pytest.LogCaptureFixture, wait: float
) -> tuple[bool, bool, float]:
    """Serve ``prompt`` over WebSocket to a raw client that never reads; return whether the
    connection was closed with 1008 within ``wait`` s, whether it was then released, and how
    long the release took after the 1008."""

    def factory(transport: AcpTransport) -> Any:
        return (
            AcpAgent.async_(transport)
            .new_session_handler(lambda req: NewSessionResponse(session_id="ref-1"))
            .prompt_handler(prompt)
            .build()
        )

    server = WebSocketAcpAgentServer(factory, close_timeout=1.0).start()
    try:
        caplog.set_level(logging.WARNING, logger="rxacp.transport.websocket")
        sock = _start_stream(server.url, 0)
        closed = wait_until(lambda: "code 1008" in caplog.text, wait)
        start = time.monotonic()
        freed = wait_until(lambda: server.connection_count == 0, 30.0)
        release_seconds = time.monotonic() - start
        sock.close()
    finally:
        server.close()
    return closed, freed, release_seconds


@pytest.mark.timeout(240)  # ~30 MiB built on one loop: slow on a loaded 2-core box
def test_an_unread_backlog_from_the_loop_thread_closes_the_connection_with_1008(
    caplog: pytest.LogCaptureFixture, figure: Figure
) -> None:
    """A handler writing from the connection's loop cannot be made to wait: once more than
    ``MAX_BACKLOG`` (16 MiB) is unread by a client that stopped reading, the connection is
    closed with 1008 and the code and reason are logged, instead of queueing for ever."""
    updates = 200_000  # ~30 MiB of updates, all written from the loop thread at once

    def prompt(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[PromptResponse]:
        for i in range(updates):
            ctx.send_message(f"{i:09d}" + "x" * 100)
        return reactivex.of(PromptResponse.end_turn())

    closed, freed, release_seconds = _serve_to_a_client_that_never_reads(prompt, caplog, 150.0)
    figure("closed_with_1008", closed)
    figure("connection_released", freed)
    figure("seconds_from_1008_to_release", round(release_seconds, 2))
    assert closed and "the peer is not reading: more than 16777216 bytes" in caplog.text
    # Bounded by close_timeout (1 s), not by the 20 s keepalive: the close frame cannot reach
    # a peer that does not read, so the connection is aborted.
    assert freed and release_seconds < 10.0, release_seconds


def test_a_backlog_queued_before_the_socket_backed_up_still_closes_the_connection_with_1008(
    caplog: pytest.LogCaptureFixture, figure: Figure
) -> None:
    """Before: the backlog was checked only at the next ``send``, or around a write that found
    the socket already backed up; the write that filled the socket waited for ever, so a burst
    queued before that (here one 20 MiB message, then a small one) was never noticed and the
    connection stayed open (seen in CI). Now a timer checks while the backlog is over the cap."""

    def prompt(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[PromptResponse]:
        ctx.send_message("x" * (20 * 1024 * 1024))
        ctx.send_message("after")
        return reactivex.of(PromptResponse.end_turn())

    closed, freed, _ = _serve_to_a_client_that_never_reads(prompt, caplog, 60.0)
    figure("closed_with_1008", closed)
    assert closed and "the peer is not reading" in caplog.text
    assert freed


def test_a_client_that_stops_reading_a_long_stream_makes_the_producer_wait_not_the_server_grow(
    figure: Figure,
) -> None:
    """Before: a client that stopped reading during a 500k-update stream took the server to
    341 MiB (stdio: +1 MiB). Now the stdio back-pressure applies: the sync producer waits while
    the connection's outbox is over its mark."""
    with _server_process() as (proc, url):
        idle = rss_kib(proc.pid)
        sock = _start_stream(url, STREAM_UPDATES)
        peak = idle
        cpu: list[int] = []

        def settled() -> bool:  # the producer is blocked: the server's CPU time stops growing
            nonlocal peak
            peak = max(peak, rss_kib(proc.pid))
            with open(f"/proc/{proc.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            cpu.append(int(fields[11]) + int(fields[12]))
            return len(cpu) > 40 and cpu[-1] == cpu[-40]

        blocked = wait_until(settled, 60.0)
        growth = peak - idle
        sock.close()
    figure("updates_requested", STREAM_UPDATES)
    figure("server_rss_growth_kib", growth)
    figure("producer_blocked", blocked)
    assert blocked, "the server kept producing for a client that does not read"
    assert growth < WS_RSS_BOUND_KIB, growth


def test_the_one_client_agent_transport_refuses_origins_and_frees_itself_from_a_silent_client() -> (
    None
):
    """``WebSocketAcpAgentTransport`` constructed directly (the Java SDK's one-client endpoint)
    has the same guards: a web page's handshake is refused, and a client that connects and
    stays silent is closed after the first-message timeout instead of holding the endpoint."""
    clock = TestScheduler()
    transport = WebSocketAcpAgentTransport(scheduler=clock)
    agent = build_agent("sync", transport, ReferenceOptions())
    starting = threading.Thread(target=agent.start, daemon=True)
    starting.start()
    try:
        assert wait_until(lambda: attempt_status(transport.url) == 403, WAIT)
        with connect(transport.url, open_timeout=WAIT) as silent:
            clock.advance_by(DEFAULT_FIRST_MESSAGE_TIMEOUT - 1)
            with pytest.raises(ConnectionClosed) as info:
                for _ in range(60):  # a virtual second at a time: the timer is armed once the
                    clock.advance_by(1)  # server side has run the handshake's handler
                    with contextlib.suppress(TimeoutError):
                        silent.recv(0.1)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1001
        assert "no first message" in info.value.rcvd.reason
    finally:
        starting.join(WAIT)
        agent.close()


def attempt_status(url: str) -> int | None:
    try:
        with connect(url, additional_headers={"Origin": "https://evil.example"}, open_timeout=1):
            return None
    except InvalidStatus as exc:
        return exc.response.status_code
    except OSError:
        return -1  # not listening yet
