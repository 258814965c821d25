"""WebSocketAcpAgentServer: one agent per connection, 20 concurrent clients, the connection
limit, the idle timeout (virtual time), oversized messages and shutdown."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

import pytest
from reactivex.testing import TestScheduler

from rxacp.errors import AcpConnectionException
from rxacp.schema import PromptRequest
from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport
from rxacp.transport.websocket import WebSocketAcpAgentServer

from .conftest import GRACE, WAIT, Conversation, reference_server


class Agents:
    """An agent factory (reference agent, sync API) that records the agents it built and
    tells when the server closed them."""

    def __init__(self) -> None:
        self.built = 0
        self.closed = 0
        self.any_closed = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, transport: AcpTransport) -> Any:
        agent = build_agent("sync", transport, ReferenceOptions(cancel_grace=GRACE))
        with self._lock:
            self.built += 1
        return _Tracked(agent, self)


class _Tracked:
    def __init__(self, agent: Any, owner: Agents) -> None:
        self._agent, self._owner = agent, owner

    def start(self) -> None:
        self._agent.start()

    def close(self) -> None:
        self._agent.close()
        with self._owner._lock:
            self._owner.closed += 1
        self._owner.any_closed.set()


def test_twenty_concurrent_clients_each_get_their_own_agent_and_session() -> None:
    agents = Agents()
    server = WebSocketAcpAgentServer(agents).start()
    count = 20
    barrier = threading.Barrier(count)
    results: dict[int, tuple[str, list[str]]] = {}
    errors: list[BaseException] = []

    def client(i: int) -> None:
        try:
            conv = Conversation(server.url).initialize()
            barrier.wait(WAIT)
            sid = conv.new_session()
            response = conv.client.prompt(PromptRequest.text(sid, f"echo client {i}"))
            assert response.stop_reason == "end_turn"
            results[i] = (sid, conv.chunks(sid))
            conv.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 2)
    server.close()
    assert not errors, errors
    assert agents.built == count
    # every connection has its own agent, each with its own process-unique session id
    assert len({sid for sid, _ in results.values()}) == count
    assert {i: chunks for i, (_, chunks) in results.items()} == {
        i: [f"client {i}"] for i in range(count)
    }


def test_a_connection_over_the_limit_is_refused_with_1013_and_a_reason() -> None:
    agents = Agents()
    server = WebSocketAcpAgentServer(agents, max_connections=2).start()
    first, second = Conversation(server.url).initialize(), Conversation(server.url).initialize()
    extra = Conversation(server.url)
    try:
        with pytest.raises(AcpConnectionException) as info:
            extra.initialize()
        assert "1013" in str(info.value)
        assert "too many connections" in str(info.value)
        assert "at most 2" in str(info.value)
        assert agents.built == 2  # the refused connection got no agent
        sid = second.new_session()
        assert second.client.prompt(PromptRequest.text(sid, "echo still here"))
        assert second.chunks(sid) == ["still here"]
        first.close()
        assert agents.any_closed.wait(WAIT)  # the server let go of the first connection
        third = Conversation(server.url).initialize()
        assert third.new_session().startswith("ref-")
        third.close()
    finally:
        extra.close()
        second.close()
        server.close()


def test_idle_timeout_closes_a_silent_connection_with_1001_in_virtual_time() -> None:
    clock = TestScheduler()
    server = reference_server("sync", idle_timeout=30, scheduler=clock)
    quiet, busy = Conversation(server.url).initialize(), Conversation(server.url).initialize()
    try:
        clock.advance_by(29)
        busy.new_session()  # activity at t=29 s
        clock.advance_by(29)  # t=58: quiet has been silent 58 s... but only checked at 30
        assert quiet.client.session.wait_closed(WAIT)
        with pytest.raises(AcpConnectionException) as info:
            quiet.new_session()
        assert "1001" in str(info.value)
        assert "idle timeout: no message for 30 s" in str(info.value)
        busy.new_session()  # activity at t=58 keeps busy open
        assert busy.client.session.is_open
        clock.advance_by(40)  # t=98: busy silent since t=58
        assert busy.client.session.wait_closed(WAIT)
    finally:
        quiet.close()
        busy.close()
        server.close()


def test_an_oversized_message_closes_only_that_connection_with_1009() -> None:
    server = reference_server("sync", max_message_size=64 * 1024)
    offender, bystander = Conversation(server.url).initialize(), Conversation(server.url)
    bystander.initialize()
    try:
        with pytest.raises(AcpConnectionException) as info:
            offender.client.ext_method("_upload", {"data": "x" * 100_000})
        assert "1009" in str(info.value)
        assert "exceeds limit of 65536 bytes" in str(info.value)
        sid = bystander.new_session()
        bystander.client.prompt(PromptRequest.text(sid, "echo unaffected"))
        assert bystander.chunks(sid) == ["unaffected"]
        newcomer = Conversation(server.url).initialize()  # still accepting
        assert newcomer.new_session().startswith("ref-")
        newcomer.close()
    finally:
        offender.close()
        bystander.close()
        server.close()


def test_a_client_closes_with_1009_when_the_agent_sends_more_than_its_limit() -> None:
    server = reference_server("sync")
    conv = Conversation(server.url, max_message_size=4096).initialize()
    try:
        sid = conv.new_session()
        with pytest.raises(AcpConnectionException) as info:
            conv.client.prompt(PromptRequest.text(sid, "echo " + "y" * 10_000))
        assert "max_message_size (4096 bytes)" in str(info.value)
        assert "1009" in str(info.value)
        assert server.is_serving
    finally:
        conv.close()
        server.close()


def test_closing_the_server_ends_every_pending_prompt_promptly_and_closes_every_agent() -> None:
    agents = Agents()
    server = WebSocketAcpAgentServer(agents).start()
    convs = [Conversation(server.url).initialize() for _ in range(3)]
    outcomes: list[BaseException | None] = [None] * 3
    done = [threading.Event() for _ in range(3)]

    def ended(i: int) -> tuple[Any, Any]:
        def on_error(error: Exception) -> None:
            outcomes[i] = error
            done[i].set()

        return on_error, done[i].set

    for i, conv in enumerate(convs):
        sid = conv.new_session()
        on_error, on_completed = ended(i)
        conv.client.async_client.prompt(PromptRequest.text(sid, "slow 30")).subscribe(
            on_error=on_error, on_completed=on_completed
        )
    for conv in convs:
        assert conv.wait_for(partial(bool, conv.updates))  # each turn is under way
    server.close()
    try:
        for event in done:  # each ends with the shutdown's 1001, not its turn's own end
            assert event.wait(WAIT)
        assert all(isinstance(o, AcpConnectionException) for o in outcomes), outcomes
        assert all("1001" in str(o) and "server shutting down" in str(o) for o in outcomes)
        assert agents.closed == 3
        assert server.connection_count == 0 and not server.is_serving
    finally:
        for conv in convs:
            conv.close()
