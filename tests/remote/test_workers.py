"""Several workers behind a proxy: ``connection_id_prefix`` makes a connection's requests
routable to the worker that opened it, and a worker that goes away ends its connections
(streams end, the client's pending requests fail at once, the ids are then unknown).

The "proxy" here is an ASGI router in front of two app instances in one uvicorn (each app is
one worker's state): it routes on the ``Acp-Connection-Id`` prefix and spreads ``initialize``
(no id yet) round-robin, as ``docs/remote.md`` tells a real proxy to."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest

from rxacp.client import AcpClient
from rxacp.errors import AcpConnectionException
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.transport.http import AcpAsgiApp, HttpAcpClientTransport
from rxacp.transport.http._serve import UvicornThread
from rxacp.transport.websocket import WebSocketAcpClientTransport

from .conftest import reference_app


class PrefixProxy:
    """Routes each request to the worker whose prefix starts its ``Acp-Connection-Id``."""

    path = "/acp"

    def __init__(self, workers: dict[str, AcpAsgiApp]) -> None:
        self.workers = workers
        self._next = itertools.cycle(list(workers.values()))
        self.seen: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.workers[next(iter(self.workers))](scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        cid = headers.get(b"acp-connection-id", b"").decode()
        worker = next((w for p, w in self.workers.items() if cid.startswith(p)), None)
        if worker is None:
            worker = next(self._next)  # initialize (or a WebSocket upgrade): any worker
        self.seen.append(worker.connection_id_prefix)
        await worker(scope, receive, send)

    async def aclose(self) -> None:
        for worker in self.workers.values():
            await worker.aclose()


def test_connections_through_a_prefix_routing_proxy_each_stay_on_their_worker() -> None:
    workers = {p: reference_app("sync", connection_id_prefix=p) for p in ("w1.", "w2.")}
    proxy = PrefixProxy(workers)
    with UvicornThread(proxy) as server:
        clients = [AcpClient.sync(HttpAcpClientTransport(server.url)).build() for _ in range(4)]
        try:
            for client in clients:
                client.initialize()
                sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
                assert client.prompt(PromptRequest.text(sid, "stream 3")).stop_reason == "end_turn"
            assert workers["w1."].connection_count == 2 == workers["w2."].connection_count
        finally:
            for client in clients:
                client.close()


def test_a_worker_that_goes_away_fails_its_clients_pending_requests_at_once() -> None:
    import asyncio

    workers = {p: reference_app("sync", connection_id_prefix=p) for p in ("w1.", "w2.")}
    proxy = PrefixProxy(workers)
    server = UvicornThread(proxy).start()
    try:
        with AcpClient.sync(HttpAcpClientTransport(server.url)).build() as client:
            client.initialize()
            sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
            owner = next(w for w in workers.values() if w.connection_count == 1)
            errors: list[BaseException] = []
            started = threading.Event()

            def long_turn() -> None:
                started.set()
                try:
                    client.prompt(PromptRequest.text(sid, "slow 30"))
                except BaseException as exc:
                    errors.append(exc)

            turn = threading.Thread(target=long_turn)
            turn.start()
            assert started.wait(10)
            loop = server._loop  # the worker "restarts": its state is gone
            assert loop is not None
            asyncio.run_coroutine_threadsafe(owner.aclose(), loop).result(10)
            turn.join(10)
            assert not turn.is_alive()
            assert len(errors) == 1 and isinstance(errors[0], AcpConnectionException)
            assert "ended" in str(errors[0])
    finally:
        server.close()


@pytest.mark.parametrize("prefix", ["w 1", "w/1", "ü"])
def test_a_connection_id_prefix_that_is_not_header_safe_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="connection_id_prefix"):
        reference_app(connection_id_prefix=prefix)


def test_a_websocket_connection_needs_no_affinity() -> None:
    workers = {p: reference_app("sync", connection_id_prefix=p) for p in ("w1.", "w2.")}
    with UvicornThread(PrefixProxy(workers)) as server:
        url = "ws" + server.url.removeprefix("http")
        with AcpClient.sync(WebSocketAcpClientTransport(url)).build() as client:
            client.initialize()
            sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
            assert client.prompt(PromptRequest.text(sid, "echo one socket")).stop_reason
