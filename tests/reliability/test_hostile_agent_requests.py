"""Issue 30 item 2: an agent's requests for sessions the client never created, permission
floods, and one kind of request starving another.

Before: 5,000 ``session/request_permission`` for unknown session ids reached the application's
handler; with a handler that blocks like a dialog they held all 32 workers, and a following
``fs/read_text_file`` waited for minutes (the official Python SDK 0.12.1 also hands them to the
application, but answers the read at once: it has no worker pool). Now a request naming a
session this client did not create, load or use is answered ``-32002`` (the spec's "resource
not found", as its unstable ``session/status`` answers an unknown session) without reaching the
application; at most ``MAX_PENDING_PERMISSIONS`` permission requests of one session wait at
once (more: ``-32600``); and each request method has its own worker lane.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import ReplaySubject

from rxacp.client import AcpClient
from rxacp.client.handlers import MAX_PENDING_PERMISSIONS
from rxacp.errors import AcpProtocolException
from rxacp.schema import ReadTextFileResponse, RequestPermissionResponse
from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import Figure, scaled

UNKNOWN_FLOOD = scaled(2_000, 5_000)
WAIT = 30.0


def _permission(session_id: str) -> dict[str, Any]:
    return {
        "sessionId": session_id,
        "toolCall": {"toolCallId": "t1", "title": "run"},
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
    }


class Pair:
    """A client (sync or async) and a raw agent engine over memory; the agent answers
    ``session/new`` with ``s1``, ``s2``... in turn."""

    def __init__(self, builder: Any) -> None:
        self.calls: dict[str, int] = {"read": 0, "permission": 0}
        self.blocking = builder is AcpClient.sync
        self.dialog = threading.Event()  # the permission handler's "user" (set: answer)
        self._answered: ReplaySubject[bool] = ReplaySubject()
        self._lock = threading.Lock()
        pair = InMemoryTransportPair.create()
        made = [0]

        def new_session(_req: Any) -> reactivex.Observable[Any]:
            made[0] += 1
            return reactivex.just({"sessionId": f"s{made[0]}"})

        self.agent = AcpSession(pair.agent_transport, role="agent")
        self.agent.set_request_handler("session/new", new_session)
        self.client: Any = (
            builder(pair.client_transport)
            .read_text_file_handler(self._read)
            .request_permission_handler(self._permission)
            .build()
        )
        self.client.session.start()
        self.agent.start()

    def _count(self, what: str) -> None:
        with self._lock:
            self.calls[what] += 1

    def _read(self, req: Any) -> Any:
        self._count("read")
        return ReadTextFileResponse(content=f"read {req.path}")

    def _permission(self, _req: Any) -> Any:
        """A dialog the user has not answered yet: blocks its worker (sync), or answers
        later (async)."""
        self._count("permission")
        if not self.blocking:
            return self._answered.pipe(
                ops.take(1), ops.map(lambda _: RequestPermissionResponse.selected("allow"))
            )
        self.dialog.wait(WAIT)
        return RequestPermissionResponse.selected("allow")

    def answer_dialogs(self) -> None:
        self.dialog.set()
        self._answered.on_next(True)

    def new_session(self) -> str:
        created = self.client.new_session({"cwd": "/", "mcpServers": []})
        if isinstance(created, reactivex.Observable):
            created = created.run()
        return str(created.session_id)

    def call(self, method: str, params: dict[str, Any]) -> Any:
        return wait_for(self.agent.send_request(method, params), WAIT)

    def close(self) -> None:
        self.answer_dialogs()
        self.agent.close()
        self.client.close()


@pytest.fixture(params=["sync", "async"])
def pair(request: pytest.FixtureRequest) -> Iterator[Pair]:
    rig = Pair(AcpClient.sync if request.param == "sync" else AcpClient.async_)
    yield rig
    rig.close()


def test_requests_for_sessions_the_client_never_created_are_refused_without_calling_the_app(
    pair: Pair, figure: Figure
) -> None:
    known = pair.new_session()
    for method, params in (
        ("fs/read_text_file", {"sessionId": "not-mine", "path": "/etc/hostname"}),
        ("session/request_permission", _permission("not-mine")),
        ("fs/read_text_file", {"sessionId": "x" * 10_000, "path": "/etc/hostname"}),
    ):
        with pytest.raises(AcpProtocolException) as info:
            pair.call(method, params)
        assert info.value.code == -32002 and "unknown session" in info.value.message
        assert len(info.value.message) < 600  # a long id is echoed as a bounded prefix
    assert pair.calls == {"read": 0, "permission": 0}
    started = time.monotonic()
    floods = [
        pair.agent.send_request("session/request_permission", _permission(f"forged-{i}"))
        for i in range(UNKNOWN_FLOOD)
    ]
    codes = wait_for(
        reactivex.merge(
            *(
                f.pipe(ops.catch(lambda e, _s: reactivex.just(getattr(e, "code", e))))
                for f in floods
            )
        ).pipe(ops.to_list()),
        WAIT * 4,
    )
    figure("forged_permission_requests", UNKNOWN_FLOOD)
    figure("forged_permission_flood_seconds", round(time.monotonic() - started, 2))
    assert codes == [-32002] * UNKNOWN_FLOOD
    assert pair.calls["permission"] == 0
    # the session the client created is served
    assert pair.call("fs/read_text_file", {"sessionId": known, "path": "/a"}) == {
        "content": "read /a"
    }


def test_permission_requests_of_one_session_past_the_cap_are_refused_at_once(
    pair: Pair,
) -> None:
    sid = pair.new_session()
    waiting = [
        pair.agent.send_request("session/request_permission", _permission(sid)).pipe(
            ops.map(lambda r: cast(dict[str, Any], r)["outcome"]["optionId"])
        )
        for _ in range(MAX_PENDING_PERMISSIONS)
    ]
    answers: list[Any] = []
    done = threading.Event()

    def all_answered(values: list[Any]) -> None:
        answers.extend(values)
        done.set()

    reactivex.merge(*waiting).pipe(ops.to_list()).subscribe(all_answered)
    assert _wait(lambda: pair.calls["permission"] == MAX_PENDING_PERMISSIONS)
    with pytest.raises(AcpProtocolException) as info:
        pair.call("session/request_permission", _permission(sid))
    assert info.value.code == -32600 and f"limit is {MAX_PENDING_PERMISSIONS}" in info.value.message
    assert pair.calls["permission"] == MAX_PENDING_PERMISSIONS  # the app never saw it
    other = pair.new_session()  # another session has its own allowance
    extra = pair.agent.send_request("session/request_permission", _permission(other)).subscribe()
    assert _wait(lambda: pair.calls["permission"] == MAX_PENDING_PERMISSIONS + 1)
    pair.answer_dialogs()  # the user answers: every waiting one is answered
    assert done.wait(WAIT) and answers == ["allow"] * MAX_PENDING_PERMISSIONS
    extra.dispose()
    assert pair.call("session/request_permission", _permission(sid))["outcome"]["optionId"] == (
        "allow"
    )


def test_blocking_permission_dialogs_filling_every_worker_do_not_delay_a_file_read(
    figure: Figure,
) -> None:
    pair = Pair(AcpClient.sync)
    try:
        sessions = [pair.new_session(), pair.new_session()]
        answered: list[Any] = []
        dialogs = [
            pair.agent.send_request("session/request_permission", _permission(sid)).subscribe(
                answered.append, lambda _e: None
            )
            for sid in sessions
            for _ in range(MAX_PENDING_PERMISSIONS)
        ]
        assert _wait(lambda: pair.calls["permission"] == 2 * MAX_PENDING_PERMISSIONS)
        lane = pair.client.session.worker_stats("session/request_permission")
        assert lane is not None and lane.busy == 32  # every worker of the lane is in a dialog
        started = time.monotonic()
        read = pair.call("fs/read_text_file", {"sessionId": sessions[0], "path": "/b"})
        figure("read_while_32_dialogs_wait_seconds", round(time.monotonic() - started, 3))
        assert read == {"content": "read /b"}
        assert answered == []  # while every dialog still waits (before: only after they ended)
        for dialog in dialogs:
            dialog.dispose()
    finally:
        pair.close()


def _wait(condition: Any) -> bool:
    from tests.polling import wait_until

    return wait_until(condition, WAIT)
