"""The WebSocket server admits each large message into its byte budget before reading it, and
counts connections still in their handshake against its connection limit.

Messages over 64 KiB wait, not read, while the server-wide budget is used up (a small client
keeps being served), up to ``budget_timeout`` (then close code 1013); a compressed message
reserves what it can inflate to, not its size on the wire. Half-open handshakes count against
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
