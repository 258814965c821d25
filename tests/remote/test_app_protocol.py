"""``AcpAsgiApp`` on the wire: the Streamable HTTP routing of the RFD (status codes, headers,
which stream carries what), driven by plain ``httpx`` requests against uvicorn on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from rxacp.transport.http import CONNECTION_ID_HEADER, SESSION_ID_HEADER
from rxacp.transport.http._serve import UvicornThread

from .conftest import reference_app

TIMEOUT = httpx.Timeout(10.0)
JSON = {"Content-Type": "application/json"}


def rpc(method: str, id_: int | None = None, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return message


INITIALIZE = rpc("initialize", 0, protocolVersion=1, clientCapabilities={})


class Stream:
    """One SSE GET, read event by event (``data:`` payloads decoded)."""

    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str]) -> None:
        self._cm = client.stream("GET", url, headers={"Accept": "text/event-stream", **headers})
        self.response = self._cm.__enter__()
        self._lines = self.response.iter_lines()

    def next(self) -> Any:
        for line in self._lines:
            if line.startswith("data: "):
                return json.loads(line[6:])
        return None  # the stream ended

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


class Connection:
    """An initialized Streamable HTTP connection, by hand."""

    def __init__(self, client: httpx.Client, url: str, **headers: str) -> None:
        self.client, self.url, self.extra = client, url, headers
        response = client.post(url, json=INITIALIZE, headers={**JSON, **headers})
        assert response.status_code == 200, response.text
        self.init = response
        self.id = response.headers[CONNECTION_ID_HEADER]
        self.stream = Stream(client, url, {CONNECTION_ID_HEADER: self.id, **headers})

    def post(self, message: Any, session: str | None = None, **headers: str) -> httpx.Response:
        sent = {**JSON, CONNECTION_ID_HEADER: self.id, **self.extra, **headers}
        if session is not None:
            sent[SESSION_ID_HEADER] = session
        return self.client.post(self.url, json=message, headers=sent)

    def new_session(self, id_: int = 1) -> str:
        assert self.post(rpc("session/new", id_, cwd="/tmp", mcpServers=[])).status_code == 202
        answer = self.stream.next()
        assert answer["id"] == id_
        return str(answer["result"]["sessionId"])

    def session_stream(self, sid: str) -> Stream:
        return Stream(
            self.client, self.url, {CONNECTION_ID_HEADER: self.id, SESSION_ID_HEADER: sid}
        )


@pytest.fixture(scope="module")
def served() -> Iterator[UvicornThread]:
    with UvicornThread(reference_app("sync", max_message_size=64 * 1024)) as server:
        yield server


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=TIMEOUT) as client:
        yield client


def test_initialize_is_answered_200_with_an_unguessable_connection_id_and_the_answer(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    assert conn.init.headers["content-type"].startswith("application/json")
    assert conn.init.json()["id"] == 0
    assert conn.init.json()["result"]["agentInfo"]["name"] == "rxacp-reference"
    assert len(conn.id) * 6 >= 128  # url-safe base64 characters carry 6 bits each
    other = Connection(http, served.url)
    assert other.id != conn.id


def test_a_turn_streams_every_update_then_its_answer_on_the_session_stream(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    sid = conn.new_session()
    session = conn.session_stream(sid)
    prompt = rpc("session/prompt", 2, sessionId=sid, prompt=[{"type": "text", "text": "stream 5"}])
    accepted = conn.post(prompt, session=sid)
    assert accepted.status_code == 202 and accepted.content == b""
    seen = [session.next() for _ in range(6)]
    assert [m.get("method") for m in seen[:5]] == ["session/update"] * 5
    assert seen[5]["id"] == 2 and seen[5]["result"]["stopReason"] == "end_turn"
    session.close()


def _permission_turn(conn: Connection, sid: str) -> tuple[Stream, dict[str, Any]]:
    """Start a ``permission`` turn on ``sid``: its session stream and the answer selecting the
    first option of the agent's ``session/request_permission``."""
    session = conn.session_stream(sid)
    text = [{"type": "text", "text": "permission"}]
    assert conn.post(rpc("session/prompt", 2, sessionId=sid, prompt=text), sid).status_code == 202
    ask = session.next()
    while ask.get("method") != "session/request_permission":
        ask = session.next()
    option = ask["params"]["options"][0]["optionId"]
    outcome = {"outcome": "selected", "optionId": option}
    return session, {"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": outcome}}


def _turn_ends(session: Stream) -> None:
    last = session.next()
    while "id" not in last:
        last = session.next()
    assert last["id"] == 2 and last["result"]["stopReason"] == "end_turn"
    session.close()


def test_a_permission_answer_without_acp_session_id_is_accepted_by_its_request_id(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    session, answer = _permission_turn(conn, conn.new_session())
    assert conn.post(answer).status_code == 202  # no Acp-Session-Id (the Python SDK's client)
    _turn_ends(session)


def test_a_permission_answer_naming_another_session_is_400_and_the_right_one_settles_it(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    sid, other = conn.new_session(1), conn.new_session(3)
    session, answer = _permission_turn(conn, sid)
    wrong = conn.post(answer, other)
    assert wrong.status_code == 400
    assert "not the session this answers about" in wrong.text
    assert conn.post(answer, sid).status_code == 202
    _turn_ends(session)


def test_delete_ends_the_connection_and_its_id_is_then_unknown(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    gone = http.delete(served.url, headers={CONNECTION_ID_HEADER: conn.id})
    assert gone.status_code == 202
    assert conn.stream.next() is None  # the connection stream ended
    assert conn.post(rpc("session/new", 1, cwd="/tmp", mcpServers=[])).status_code == 404
    assert http.delete(served.url, headers={CONNECTION_ID_HEADER: conn.id}).status_code == 404
    again = http.get(
        served.url, headers={"Accept": "text/event-stream", CONNECTION_ID_HEADER: conn.id}
    )
    assert again.status_code == 404


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({}, rpc("session/new", 1, cwd="/tmp"), 400),  # no Acp-Connection-Id
        ({CONNECTION_ID_HEADER: "made-up"}, rpc("session/new", 1, cwd="/tmp"), 404),
        ({"Content-Type": "text/plain"}, INITIALIZE, 415),
        ({}, [INITIALIZE], 501),  # a batch
        ({}, "not an object", 400),
    ],
)
def test_a_malformed_post_gets_the_status_the_rfd_names(
    served: UvicornThread, http: httpx.Client, headers: dict[str, str], body: Any, status: int
) -> None:
    response = http.post(served.url, content=json.dumps(body), headers={**JSON, **headers})
    assert response.status_code == status


def test_a_get_without_event_stream_in_accept_is_406_and_without_an_id_400(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    assert http.get(served.url, headers={CONNECTION_ID_HEADER: conn.id}).status_code == 406
    assert http.get(served.url, headers={"Accept": "text/event-stream"}).status_code == 400


def test_session_scoped_posts_need_a_matching_acp_session_id(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    sid = conn.new_session()
    prompt = rpc("session/prompt", 2, sessionId=sid, prompt=[{"type": "text", "text": "x"}])
    assert conn.post(prompt).status_code == 400  # missing
    assert conn.post(prompt, session="other").status_code == 400  # mismatched
    cancel = rpc("session/cancel", sessionId="never-made")
    assert conn.post(cancel, session="never-made").status_code == 404  # unknown session


def test_initialize_on_an_existing_connection_is_400(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    assert conn.post(INITIALIZE).status_code == 400


def test_a_second_reader_of_one_stream_is_refused_409(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    second = http.get(
        served.url, headers={"Accept": "text/event-stream", CONNECTION_ID_HEADER: conn.id}
    )
    assert second.status_code == 409


def test_a_body_over_max_message_size_is_413_and_the_server_keeps_serving(
    served: UvicornThread, http: httpx.Client
) -> None:
    conn = Connection(http, served.url)
    sid = conn.new_session()
    big = rpc("session/prompt", 2, sessionId=sid, prompt=[{"type": "text", "text": "x" * 70000}])
    assert conn.post(big, session=sid).status_code == 413
    assert conn.new_session(3)  # the same connection still works


def test_the_websocket_upgrade_on_the_same_path_returns_an_acp_connection_id(
    served: UvicornThread,
) -> None:
    from websockets.sync.client import connect

    with connect("ws" + served.url.removeprefix("http"), open_timeout=10) as ws:
        assert ws.response is not None
        assert len(ws.response.headers[CONNECTION_ID_HEADER]) * 6 >= 128
        ws.send(json.dumps(INITIALIZE))
        answer = json.loads(ws.recv(timeout=10))
        assert answer["id"] == 0 and "result" in answer


def test_another_path_is_404(served: UvicornThread, http: httpx.Client) -> None:
    response = http.post(served.url + "/elsewhere", json=INITIALIZE, headers=JSON)
    assert response.status_code == 404
    assert "/acp" in response.text
