"""rxacp on uvloop: both stdio ends and a whole client ↔ agent conversation.

uvloop's transports are duck-typed: they do not subclass ``asyncio.WriteTransport`` and
friends. The client stdio transport used to assert that its agent's stdin was one, so on a
uvloop loop every spawn failed with ``transport failed to start: `` (an empty
``AssertionError``) and left the agent running, which uvloop's ``loop.close()`` then waited
for forever. ``.ci/run`` also runs the behaviour suites once more with uvloop as the event
loop policy (``RXACP_TEST_LOOP=uvloop``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

import uvloop

from rxacp.client import AcpClient
from rxacp.schema import AgentMessageChunk, NewSessionRequest, PromptRequest, SessionNotification
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from ..reference_agent.conftest import ROOT, agent_env
from ._support import ECHO_AGENT, Recorder

_ON_UVLOOP = (
    "import asyncio, runpy, uvloop; asyncio.set_event_loop_policy(uvloop.EventLoopPolicy()); "
    "runpy.run_module('rxacp.testing.reference_agent', run_name='__main__')"
)
"""The reference agent with uvloop as its process's event loop policy (its own loop thread)."""


def _on_uvloop(main: Coroutine[Any, Any, None]) -> None:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert isinstance(runner.get_loop(), uvloop.Loop)
        runner.run(main)


def test_the_stdio_client_transport_spawns_and_round_trips_frames_on_a_uvloop_loop() -> None:
    async def main() -> None:
        rec = Recorder().bind()
        transport = StdioAcpClientTransport(AgentParameters(sys.executable, [ECHO_AGENT]))
        await transport.start(asyncio.get_running_loop(), rec)
        try:
            for i in range(3):
                transport.send(b'{"n": %d}' % i)
            await rec.frames_at_least(3, timeout=30)
            assert rec.lines == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}']
        finally:
            await transport.close()
        assert rec.closed and rec.closed[0].reason == "closed"
        assert transport.exit_code is not None  # the agent is gone, not left to the loop

    _on_uvloop(main())


def test_an_async_client_on_uvloop_talks_to_the_reference_agent_on_uvloop() -> None:
    chunks: list[SessionNotification] = []
    slow_started = asyncio.Event()

    def consume(note: SessionNotification) -> None:
        if isinstance(note.update, AgentMessageChunk):
            chunks.append(note)
            if len(chunks) > 50:
                slow_started.set()

    async def main() -> None:
        params = AgentParameters(
            sys.executable, ["-c", _ON_UVLOOP, "--api", "async"], env=agent_env(), cwd=ROOT
        )
        builder = AcpClient.async_(StdioAcpClientTransport(params))
        builder.session_update_consumer(consume).request_timeout(60)
        client = builder.event_loop(asyncio.get_running_loop()).build()
        async with client:
            await client.initialize()
            sid = (await client.new_session(NewSessionRequest(cwd=ROOT, mcp_servers=[]))).session_id
            answer = await client.prompt(PromptRequest.text(sid, "stream 50"))
            assert answer.stop_reason == "end_turn"
            assert len(chunks) == 50
            # a turn cancelled midway still gets its one answer, on both uvloops
            turn = asyncio.ensure_future(client.prompt(PromptRequest.text(sid, "slow 30")))
            await asyncio.wait_for(slow_started.wait(), 30)  # the agent is in the turn
            await client.cancel(sid)
            assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"

    _on_uvloop(main())


def test_a_blocking_client_runs_its_own_loop_on_uvloop_when_that_is_the_policy() -> None:
    """The loop rxacp starts on its own thread comes from ``asyncio.new_event_loop()``, so an
    installed policy (uvloop's, as servers install it) applies to it."""
    params = AgentParameters(
        sys.executable, ["-c", _ON_UVLOOP, "--api", "sync"], env=agent_env(), cwd=ROOT
    )
    before = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        builder = AcpClient.sync(StdioAcpClientTransport(params)).request_timeout(60)
        with builder.build() as client:
            client.initialize()
            assert isinstance(client.session.loop, uvloop.Loop)
            sid = client.new_session(NewSessionRequest(cwd=ROOT, mcp_servers=[])).session_id
            answer = client.prompt(PromptRequest.text(sid, "echo on uvloop"))
            assert answer.stop_reason == "end_turn"
    finally:
        asyncio.set_event_loop_policy(before)
