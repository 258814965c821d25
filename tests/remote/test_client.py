"""``HttpAcpClientTransport``: cookies kept for the connection, a refused request answered
locally, and every pending request settled when the server goes away."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxacp.client import AcpClient
from rxacp.errors import AcpConnectionException, AcpProtocolException
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.transport.http import AcpAsgiApp, HttpAcpClientTransport
from rxacp.transport.http._serve import UvicornThread
from tests.polling import wait_until

from .conftest import reference_app


class CookieJarCheck:
    """Sets a cookie on the first response and records the Cookie header of every request."""

    def __init__(self, app: AcpAsgiApp) -> None:
        self.app, self.path = app, app.path
        self.cookies: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        cookie = headers.get(b"cookie")
        self.cookies.append(cookie.decode() if cookie else None)

        async def with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start" and len(self.cookies) == 1:
                message = dict(message)
                message["headers"] = [*message["headers"], (b"set-cookie", b"affinity=w1; Path=/")]
            await send(message)

        await self.app(scope, receive, with_cookie)

    async def aclose(self) -> None:
        await self.app.aclose()


def test_cookies_the_server_sets_are_sent_back_on_every_later_request() -> None:
    proxy = CookieJarCheck(reference_app("sync"))
    with (
        UvicornThread(proxy) as server,
        AcpClient.sync(HttpAcpClientTransport(server.url)).build() as client,
    ):
        client.initialize()
        sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
        client.prompt(PromptRequest.text(sid, "echo x"))
    assert proxy.cookies[0] is None  # initialize: nothing set yet
    later = proxy.cookies[1:]
    assert len(later) >= 4  # GET streams, POSTs, DELETE
    assert all(c == "affinity=w1" for c in later), later


def test_a_refused_request_fails_alone_with_the_http_status_and_the_next_one_works() -> None:
    app = reference_app("sync", budget_bytes=4096, budget_wait=0.1)
    with (
        UvicornThread(app) as server,
        AcpClient.sync(HttpAcpClientTransport(server.url)).build() as client,
    ):
        client.initialize()
        assert wait_until(lambda: app.budget.in_use == 0)
        assert app.budget.try_reserve(4096)
        with pytest.raises(AcpProtocolException) as refused:
            client.new_session(NewSessionRequest.of("/tmp"))
        assert refused.value.code == -32603
        assert "HTTP 503" in str(refused.value)
        app.budget.release(4096)
        assert client.new_session(NewSessionRequest.of("/tmp")).session_id


def test_a_server_that_goes_away_mid_turn_fails_the_pending_prompt_at_once() -> None:
    server = UvicornThread(reference_app("sync")).start()
    errors: list[BaseException] = []
    try:
        with AcpClient.sync(HttpAcpClientTransport(server.url)).build() as client:
            client.initialize()
            sid = client.new_session(NewSessionRequest.of("/tmp")).session_id

            def turn() -> None:
                try:
                    client.prompt(PromptRequest.text(sid, "slow 30"))
                except BaseException as exc:
                    errors.append(exc)

            worker = threading.Thread(target=turn)
            worker.start()
            server.close()  # the whole server stops
            worker.join(15)
            assert not worker.is_alive()
    finally:
        server.close()
    assert len(errors) == 1 and isinstance(errors[0], AcpConnectionException)


def test_a_url_that_is_not_http_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="http:// or https://"):
        HttpAcpClientTransport("ws://127.0.0.1:1/acp")


def test_more_sessions_than_httpx_pools_by_default_all_stream_and_answer() -> None:
    with (
        UvicornThread(reference_app("sync")) as server,
        AcpClient.sync(HttpAcpClientTransport(server.url)).build() as client,
    ):
        client.initialize()
        sessions = [client.new_session(NewSessionRequest.of("/tmp")).session_id for _ in range(120)]
        answers = [client.prompt(PromptRequest.text(sid, "echo hi")) for sid in sessions[-3:]]
    assert [a.stop_reason for a in answers] == ["end_turn"] * 3
