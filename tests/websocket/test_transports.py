"""The WebSocket transports on their own: connect errors, handshake headers, argument checks,
the Java-style one-client agent transport, and the optional-extra import rules."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from typing import Any

import pytest

from rxacp.agent import AcpAgent
from rxacp.errors import AcpConnectionException
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.transport import AcpTransport
from rxacp.transport.websocket import (
    DEFAULT_MAX_MESSAGE_SIZE,
    WebSocketAcpAgentServer,
    WebSocketAcpAgentTransport,
    WebSocketAcpClientTransport,
)

from .conftest import WAIT, Conversation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def echo_factory(transport: AcpTransport) -> Any:
    """A minimal agent: one session id, every prompt echoed back."""

    def prompt(req: PromptRequest, ctx: Any) -> PromptResponse:
        ctx.send_message(req.prompt_text())
        return PromptResponse.end_turn()

    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(prompt)
        .build()
    )


def test_connection_refused_raises_a_connection_error_naming_the_uri() -> None:
    uri = f"ws://127.0.0.1:{free_port()}/acp"
    conv = Conversation(uri)
    with pytest.raises(AcpConnectionException) as info:
        conv.initialize()
    assert f"cannot connect to {uri}" in str(info.value)
    conv.close()


def test_a_wrong_path_is_refused_with_http_404_naming_the_right_one() -> None:
    with WebSocketAcpAgentServer(echo_factory, path="/acp") as server:
        conv = Conversation(f"ws://127.0.0.1:{server.port}/elsewhere")
        with pytest.raises(AcpConnectionException) as info:
            conv.initialize()
        assert "HTTP 404" in str(info.value)
        assert "use /acp" in str(info.value)
        conv.close()


def test_a_peer_that_never_completes_the_handshake_times_out_at_connect_timeout() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts TCP, never answers
        uri = f"ws://127.0.0.1:{silent.getsockname()[1]}/acp"
        conv = Conversation(uri, connect_timeout=0.2)
        with pytest.raises(AcpConnectionException) as info:
            conv.initialize()
        assert f"cannot connect to {uri}: no WebSocket handshake within 0.2 s" in str(info.value)
        conv.close()


def test_handshake_headers_reach_the_agent_factory() -> None:
    seen: list[str | None] = []

    def factory(transport: Any) -> Any:
        seen.append(transport.request_headers.get("Authorization"))
        return echo_factory(transport)

    with WebSocketAcpAgentServer(factory) as server:
        conv = Conversation(server.url, headers={"Authorization": "Bearer t0ken"}).initialize()
        conv.close()
    assert seen == ["Bearer t0ken"]


def test_a_failing_agent_factory_closes_that_connection_with_1011() -> None:
    def factory(transport: Any) -> Any:
        raise PermissionError("no token")

    with WebSocketAcpAgentServer(factory) as server:
        conv = Conversation(server.url)
        with pytest.raises(AcpConnectionException) as info:
            conv.initialize()
        assert "1011" in str(info.value) and "PermissionError" in str(info.value)
        conv.close()
        assert server.is_serving


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: WebSocketAcpClientTransport("http://x/acp"), "ws:// or wss://"),
        (lambda: WebSocketAcpClientTransport("ws://x/acp", max_message_size=0), "positive"),
        (lambda: WebSocketAcpClientTransport("ws://x/acp", connect_timeout=0), "connect_timeout"),
        (lambda: WebSocketAcpAgentServer(echo_factory, path="acp"), "start with '/'"),
        (lambda: WebSocketAcpAgentServer(echo_factory, max_connections=0), "max_connections"),
        (lambda: WebSocketAcpAgentServer(echo_factory, idle_timeout=-1), "idle_timeout"),
        # deliberately the wrong type: proves the runtime refusal
        (lambda: WebSocketAcpAgentServer("not callable"), "callable"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_raise_a_clear_error(make: Any, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_the_default_message_cap_is_at_least_16_mib() -> None:
    assert DEFAULT_MAX_MESSAGE_SIZE >= 16 * 1024 * 1024


def test_a_directly_constructed_agent_transport_serves_one_client_like_the_java_sdk() -> None:
    transport = WebSocketAcpAgentTransport(port=0)
    assert transport.url == f"ws://127.0.0.1:{transport.port}/acp" and transport.port > 0
    agent = echo_factory(transport)
    runner = threading.Thread(target=agent.run, daemon=True)  # start() waits for the client
    runner.start()
    conv = Conversation(transport.url).initialize()
    second = Conversation(transport.url)
    with pytest.raises(AcpConnectionException) as info:
        second.initialize()
    assert "1013" in str(info.value) and "serves one client" in str(info.value)
    conv.client.prompt(PromptRequest.text(conv.new_session(), "java style"))
    assert conv.chunks("s1") == ["java style"]
    conv.close()
    runner.join(WAIT)
    assert not runner.is_alive()  # the agent ended with its only connection
    second.close()


def test_importing_the_package_does_not_need_websockets_and_the_module_says_how_to_get_it() -> None:
    code = (
        "import sys; sys.modules['websockets'] = None\n"
        "import rxacp.transport, rxacp.client, rxacp.agent\n"
        "try:\n"
        "    import rxacp.transport.websocket\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    env = {**os.environ, "PYTHONPATH": ROOT}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30
    )
    assert out.returncode == 0, out.stderr
    assert 'pip install "rxacp[websocket]"' in out.stdout
