"""The WebSocket server admits each large message into its byte budget before reading it, and
counts connections still in their handshake against its connection limit.

Messages over 64 KiB wait, not read, while the server-wide budget is used up (a small client
keeps being served), up to ``budget_timeout`` (then close code 1013); a compressed message
reserves what it can inflate to, not its size on the wire; many connections sending a large
message at once take about one message's memory, not one each. Half-open handshakes count against
``max_connections`` (a client arriving meanwhile is refused with 1013, never left hanging) and
are closed after ``open_timeout``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from rxacp.transport.websocket import WebSocketAcpAgentServer
from tests.polling import wait_until
from tests.websocket.conftest import reference_server

pytestmark = pytest.mark.timeout(60)

WAIT = 10.0  # generous bound on anything that should happen now
BUDGET = 1 << 20


def _initialize(rid: int = 0, padding: int = 0) -> str:
    params: dict[str, Any] = {"protocolVersion": 1}
    if padding:
        params["_meta"] = {"padding": "x" * padding}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params})


def _answer(ws: ClientConnection, timeout: float = WAIT) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv(timeout))
        if "id" in message:
            return dict(message)


@pytest.fixture
def server() -> Iterator[WebSocketAcpAgentServer]:
    srv = reference_server("sync", budget_bytes=BUDGET, compression=True)
    yield srv
    srv.close()


def test_a_large_message_waits_unread_for_the_budget_while_a_small_client_is_served(
    server: WebSocketAcpAgentServer,
) -> None:
    plain = {"compression": None}  # compressed, even small messages reserve (see below)
    with connect(server.url, **plain) as large, connect(server.url, **plain) as small:
        assert server.budget.try_reserve(BUDGET)  # other connections' messages being read
        large.send(_initialize(rid=7, padding=200 * 1024))
        small.send(_initialize(rid=1))
        assert _answer(small)["id"] == 1  # under 64 KiB: admitted at once
        with pytest.raises(TimeoutError):  # not read, not answered, while the budget is used
            large.recv(0.3)
        server.budget.release(BUDGET)
        assert _answer(large)["id"] == 7
        assert wait_until(lambda: server.budget.in_use == 0)  # released once parsed


def test_a_compressed_message_reserves_what_it_can_inflate_to_not_its_size_on_the_wire(
    server: WebSocketAcpAgentServer,
) -> None:
    with connect(server.url, compression="deflate") as ws:
        assert server.budget.try_reserve(BUDGET // 2)
        ws.send(_initialize(rid=3, padding=400 * 1024))  # a few KiB on the wire
        with pytest.raises(TimeoutError):
            ws.recv(0.3)
        assert server.budget.in_use == BUDGET // 2  # it waits for more than is left
        server.budget.release(BUDGET // 2)
        assert _answer(ws)["id"] == 3
        assert wait_until(lambda: server.budget.in_use == 0)


def test_a_message_that_cannot_get_the_budget_in_time_closes_its_connection_with_1013() -> None:
    srv = reference_server("sync", budget_bytes=BUDGET, budget_timeout=0.2)
    try:
        with connect(srv.url) as ws:
            assert srv.budget.try_reserve(BUDGET)
            ws.send(_initialize(padding=200 * 1024))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(WAIT)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1013
            assert "server busy" in closed.value.rcvd.reason
            srv.budget.release(BUDGET)
            assert srv.budget.in_use == 0
        with connect(srv.url) as ws:  # the server serves on
            ws.send(_initialize(rid=2))
            assert _answer(ws)["id"] == 2
    finally:
        srv.close()


def _half_open(port: int) -> socket.socket:
    """A TCP connection that starts a handshake and never finishes it."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(4096) == b""  # EOF (websockets sends nothing to a timed-out handshake)
    except ConnectionResetError:
        return True


def test_half_open_handshakes_count_against_the_limit_and_are_closed_after_open_timeout() -> None:
    srv = reference_server("sync", max_connections=5, open_timeout=1.5)
    sockets = [_half_open(srv.port) for _ in range(40)]
    try:
        assert wait_until(lambda: srv.open_connection_count >= 40)
        # refused with a clear code at once
        with connect(srv.url, open_timeout=WAIT) as ws, pytest.raises(ConnectionClosed) as refused:
            ws.recv(WAIT)
        assert refused.value.rcvd is not None and refused.value.rcvd.code == 1013
        assert "too many connections" in refused.value.rcvd.reason
        assert all(_closed_by_server(sock) for sock in sockets)  # after open_timeout
        assert wait_until(lambda: srv.open_connection_count == 0)
        with connect(srv.url) as ws:  # a legitimate client is served again
            ws.send(_initialize(rid=5))
            assert _answer(ws)["id"] == 5
    finally:
        for sock in sockets:
            sock.close()
        srv.close()


_PARSE_SERVER = r"""
import asyncio, json, sys, threading
sys.path.insert(0, sys.argv[1])
from rxacp.transport.websocket import WebSocketAcpAgentServer
loop = asyncio.new_event_loop()
threading.Thread(target=loop.run_forever, daemon=True).start()
class Parse:  # each message parsed and answered: the transport's memory alone, no engine
    def __init__(self, t):
        self.t = t
        asyncio.run_coroutine_threadsafe(t.start(loop, self), loop).result()
    def on_frame(self, frame):
        rid = json.loads(frame)["id"]
        self.t.send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode())
    def on_frame_too_large(self, size): pass
    def on_closed(self, info): pass
    def on_write_paused(self): pass
    def on_write_resumed(self): pass
server = WebSocketAcpAgentServer(Parse, port=0, budget_bytes=int(sys.argv[2])).start()
print(server.url, flush=True)
sys.stdin.read()
"""


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def test_many_connections_sending_large_messages_at_once_take_about_one_messages_memory() -> None:
    """16 connections x one 8 MiB message: without admission each connection reads its frame
    at once (about 16 x 9 MiB); admitted into an 8 MiB budget, they are read one after the
    other (about one frame's three copies plus its parse)."""
    import asyncio
    import os
    import subprocess
    import sys

    from websockets.asyncio.client import connect as connect_async

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = [sys.executable, "-c", _PARSE_SERVER, root, str(8 << 20)]
    child = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        idle = _peak_kib(child.pid)
        message = _initialize(rid=9, padding=8 << 20)

        async def one() -> int:
            async with connect_async(url, max_size=None, compression=None) as ws:
                await ws.send(message)
                return int(json.loads(await asyncio.wait_for(ws.recv(), 60))["id"])

        async def all_at_once() -> list[int]:
            return list(await asyncio.gather(*(one() for _ in range(16))))

        assert asyncio.run(all_at_once()) == [9] * 16  # every message served
        growth_mib = (_peak_kib(child.pid) - idle) / 1024
        # measured: 43-54 MiB admitted, 148-153 MiB without admission
        assert growth_mib < 96, f"the server grew {growth_mib:.0f} MiB"
    finally:
        child.kill()
        child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
        if child.stdin is not None:
            child.stdin.close()
