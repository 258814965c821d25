"""``AcpAsgiApp`` on an open port: browser origins, credentials bound to the connection, the
server-wide parse budget, the connection cap and idle connections (virtual time)."""

from __future__ import annotations

import json
import socket
import urllib.parse
from collections.abc import Iterator, Mapping

import httpx
import pytest
from reactivex.testing import TestScheduler

from rxacp.transport.http._serve import UvicornThread
from tests.polling import wait_until

from .conftest import reference_app
from .test_app_protocol import INITIALIZE, JSON, TIMEOUT, Connection, rpc


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=TIMEOUT) as client:
        yield client


def test_a_browser_origin_is_refused_403_unless_allowed(http: httpx.Client) -> None:
    with UvicornThread(reference_app(allowed_origins=["https://editor.example"])) as server:
        refused = http.post(
            server.url, json=INITIALIZE, headers={**JSON, "Origin": "https://evil.example"}
        )
        assert refused.status_code == 403
        assert "evil.example" in refused.text
        allowed = http.post(
            server.url, json=INITIALIZE, headers={**JSON, "Origin": "https://editor.example"}
        )
        assert allowed.status_code == 200
        assert http.post(server.url, json=INITIALIZE, headers=JSON).status_code == 200  # no Origin


def test_a_websocket_upgrade_from_a_browser_origin_is_refused() -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with UvicornThread(reference_app()) as server:
        url = "ws" + server.url.removeprefix("http")
        with pytest.raises(InvalidStatus) as refused:
            connect(url, additional_headers={"Origin": "https://evil.example"}, open_timeout=10)
        assert refused.value.response.status_code == 403


def test_a_token_is_required_before_initialize(http: httpx.Client) -> None:
    with UvicornThread(reference_app(token="s3cret")) as server:
        missing = http.post(server.url, json=INITIALIZE, headers=JSON)
        assert missing.status_code == 401
        assert "s3cret" not in missing.text
        wrong = {**JSON, "Authorization": "Bearer nope"}
        assert http.post(server.url, json=INITIALIZE, headers=wrong).status_code == 401
        conn = Connection(http, server.url, Authorization="Bearer s3cret")
        assert conn.new_session()
        assert Connection(http, server.url, Authorization="bearer s3cret").new_session()
        prefix = {**JSON, "Authorization": "Bearer s3cre"}
        assert http.post(server.url, json=INITIALIZE, headers=prefix).status_code == 401


def test_a_connection_id_only_works_with_the_credentials_that_opened_it(
    http: httpx.Client,
) -> None:
    users = {"Bearer alice-key": "alice", "Bearer bob-key": "bob"}

    def authenticate(headers: Mapping[str, str]) -> str | None:
        return users.get(headers.get("authorization", ""))

    with UvicornThread(reference_app(authenticate=authenticate)) as server:
        conn = Connection(http, server.url, Authorization="Bearer alice-key")
        new = rpc("session/new", 1, cwd="/tmp", mcpServers=[])
        stolen = conn.post(new, Authorization="Bearer bob-key")
        assert stolen.status_code == 404  # bob cannot use (or even see) alice's connection
        assert conn.post(new, Authorization="Bearer nobody").status_code == 401
        assert conn.post(new).status_code == 202  # alice's own credentials


def test_a_post_waits_then_is_503_while_the_server_wide_parse_budget_is_used_up(
    http: httpx.Client,
) -> None:
    app = reference_app(budget_bytes=4096, budget_wait=0.2)
    with UvicornThread(app) as server:
        conn = Connection(http, server.url)
        assert wait_until(lambda: app.budget.in_use == 0)  # initialize was parsed
        assert app.budget.try_reserve(4096)  # others' messages are being parsed
        busy = conn.post(rpc("session/new", 1, cwd="/tmp", mcpServers=[]))
        assert busy.status_code == 503
        assert busy.headers["retry-after"] == "1"
        app.budget.release(4096)
        assert conn.new_session(2)
        assert wait_until(lambda: app.budget.in_use == 0)  # released once the agent parsed it


def test_more_connections_than_max_connections_are_refused_503(http: httpx.Client) -> None:
    with UvicornThread(reference_app(max_connections=2)) as server:
        Connection(http, server.url)
        Connection(http, server.url)
        third = http.post(server.url, json=INITIALIZE, headers=JSON)
        assert third.status_code == 503
        assert "at most 2" in third.text


def test_an_idle_connection_is_closed_and_its_id_then_unknown(http: httpx.Client) -> None:
    clock = TestScheduler()
    app = reference_app(idle_timeout=60, scheduler=clock)
    with UvicornThread(app) as server:
        conn = Connection(http, server.url)
        assert app.connection_count == 1
        clock.advance_by(59.0)
        assert app.connection_count == 1
        clock.advance_by(2.0)
        assert wait_until(lambda: app.connection_count == 0)
        assert conn.stream.next() is None  # its stream ended
        assert conn.post(rpc("session/new", 1, cwd="/tmp")).status_code == 404


def test_activity_keeps_a_connection_open_past_the_idle_timeout(http: httpx.Client) -> None:
    clock = TestScheduler()
    app = reference_app(idle_timeout=60, scheduler=clock)
    with UvicornThread(app) as server:
        conn = Connection(http, server.url)
        clock.advance_by(50.0)
        conn.new_session()
        clock.advance_by(50.0)  # 100 s since it opened, 50 s since its last message
        assert app.connection_count == 1
        clock.advance_by(11.0)
        assert wait_until(lambda: app.connection_count == 0)


def test_a_post_waiting_for_the_budget_proceeds_when_it_frees_up(http: httpx.Client) -> None:
    import threading

    app = reference_app(budget_bytes=4096, budget_wait=30)
    with UvicornThread(app) as server:
        conn = Connection(http, server.url)
        assert wait_until(lambda: app.budget.in_use == 0)
        assert app.budget.try_reserve(4096)
        statuses: list[int] = []
        posted = threading.Thread(
            target=lambda: statuses.append(
                conn.post(rpc("session/new", 1, cwd="/tmp", mcpServers=[])).status_code
            )
        )
        posted.start()
        posted.join(0.3)
        assert statuses == []  # held while the budget is used up
        app.budget.release(4096)
        posted.join(10)
        assert statuses == [202]
        assert conn.stream.next()["id"] == 1


def test_a_websocket_upgrade_past_max_connections_is_closed_1013_with_the_limit(
    http: httpx.Client,
) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with UvicornThread(reference_app(max_connections=1)) as server:
        Connection(http, server.url)
        url = "ws" + server.url.removeprefix("http")
        with connect(url, open_timeout=10) as ws, pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1013
        assert "at most 1" in closed.value.rcvd.reason


def test_a_body_is_admitted_whole_or_not_at_all_and_a_refusal_leaks_no_budget(
    http: httpx.Client,
) -> None:
    app = reference_app(budget_bytes=4096, budget_wait=0.2)
    with UvicornThread(app) as server:
        conn = Connection(http, server.url)
        assert wait_until(lambda: app.budget.in_use == 0)
        assert app.budget.try_reserve(1000)
        body = rpc("session/new", 1, cwd="/tmp/" + "x" * 3300, mcpServers=[])
        assert conn.post(body).status_code == 503  # 3.3 KB do not fit beside 1000 bytes
        assert app.budget.in_use == 1000  # nothing of it was kept
        app.budget.release(1000)
        assert conn.post(body).status_code == 202


def test_a_silent_websocket_connection_is_closed_after_first_message_timeout() -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    clock = TestScheduler()
    app = reference_app(first_message_timeout=10, scheduler=clock)
    with UvicornThread(app) as server:
        url = "ws" + server.url.removeprefix("http")
        with connect(url, open_timeout=10) as ws, pytest.raises(ConnectionClosed) as closed:
            assert wait_until(lambda: app.connection_count == 1)
            clock.advance_by(9.0)
            assert app.connection_count == 1
            clock.advance_by(2.0)
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1001
        assert "no first message within 10 s" in closed.value.rcvd.reason
        assert wait_until(lambda: app.connection_count == 0)


def test_a_websocket_message_that_cannot_get_the_budget_in_time_closes_with_1013() -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    app = reference_app(budget_bytes=4096, budget_wait=0.2)
    with UvicornThread(app) as server:
        url = "ws" + server.url.removeprefix("http")
        with connect(url, open_timeout=10) as ws:
            ws.send(json.dumps(INITIALIZE))
            ws.recv(timeout=10)
            assert wait_until(lambda: app.budget.in_use == 0)
            assert app.budget.try_reserve(4096)  # other connections' messages
            ws.send(json.dumps(rpc("session/new", 1, cwd="/tmp/" + "x" * 3000, mcpServers=[])))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1013
        assert "server busy" in closed.value.rcvd.reason
        app.budget.release(4096)
        assert wait_until(lambda: app.budget.in_use == 0)  # nothing of the refused one kept


def test_uvicorn_reads_websocket_frames_up_to_the_apps_message_cap_and_never_inflates() -> None:
    from rxacp.transport.http._serve import _config

    app = reference_app(max_message_size=123_456)
    config = _config(app, "127.0.0.1", 0)
    assert config.ws_max_size == 123_456  # a larger frame is refused before it is read
    assert config.ws_per_message_deflate is False


def _stalled_post(url: str, declared: int) -> socket.socket:
    """A POST whose headers declare ``declared`` body bytes, of which one is sent."""
    parts = urllib.parse.urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=TIMEOUT.read)
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n{{"
    )
    sock.sendall(head.encode())
    return sock


def test_a_stalled_body_holds_its_budget_only_until_body_timeout_then_is_408() -> None:
    clock = TestScheduler()
    app = reference_app(budget_bytes=4096, body_timeout=30, scheduler=clock)
    with UvicornThread(app) as server, _stalled_post(server.url, 4000) as sock:
        assert wait_until(lambda: app.budget.in_use == 4000)  # reserved, then nothing came
        clock.advance_by(29.0)
        assert app.budget.in_use == 4000
        clock.advance_by(2.0)
        answer = ""
        while "\r\n\r\n" not in answer or not answer.endswith(")\n"):
            chunk = sock.recv(4096).decode()
            assert chunk, f"the connection closed after {answer!r}"
            answer += chunk
        assert answer.startswith("HTTP/1.1 408")
        assert "body_timeout (30 s)" in answer
        assert wait_until(lambda: app.budget.in_use == 0)


def test_initialize_with_an_id_its_answer_cannot_be_matched_by_is_refused_at_once(
    http: httpx.Client,
) -> None:
    app = reference_app()
    unmatchable: tuple[object, ...] = (None, 1.5, True, {}, [1])
    with UvicornThread(app) as server:
        for bad in unmatchable:
            refused = http.post(server.url, json={**INITIALIZE, "id": bad}, headers=JSON)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32600
            assert "string or integer id" in refused.json()["error"]["message"]
        assert app.connection_count == 0  # no slot kept for any of them


def test_loads_of_unknown_sessions_leave_no_session_streams_and_cannot_fill_the_cap(
    http: httpx.Client,
) -> None:
    app = reference_app()
    with UvicornThread(app) as server:
        conn = Connection(http, server.url)
        (transport,) = app._connections.values()
        for n in range(300):  # more than the 256 session streams a connection may have
            load = rpc("session/load", 10 + n, sessionId=f"nope-{n}", cwd="/tmp", mcpServers=[])
            assert conn.post(load).status_code == 202
            assert conn.stream.next()["error"]["code"] == -32002  # answered, unknown session
        assert wait_until(lambda: not transport.session_streams)
        sid = conn.new_session(1)
        session = conn.session_stream(sid)
        assert session.response.status_code == 200  # a real session still gets its stream
        session.close()
