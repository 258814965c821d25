"""Issue 17 items 2-4: the WebSocket agent server against hostile clients.

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

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from reactivex.testing import TestScheduler
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport
from rxacp.transport.websocket import (
    DEFAULT_FIRST_MESSAGE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    WebSocketAcpAgentServer,
    WebSocketAcpClientTransport,
)

from .conftest import Figure, scaled, wait_until

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
        clock.advance_by(1)
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
