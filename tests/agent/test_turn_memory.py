"""A finished prompt turn leaves nothing behind that only the cyclic garbage collector frees.

A prompt may be 16 MiB. If the turn, its request and the engine's incoming request keep each
other alive in a reference cycle, every finished prompt stays in memory until a full collection
runs (measured: 20 WebSocket connections x one 16 MiB prompt peaked 126 MiB higher until one
did). These tests turn the collector off and check the request is gone once the connection is
quiet.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.testing.memory import InMemoryTransportPair
from rxacp.testing.quiesce import quiesce

SID = "s1"


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_finished_prompts_request_is_freed_without_the_cyclic_collector(
    api: str, no_cyclic_gc: None
) -> None:
    requests: list[weakref.ref[PromptRequest]] = []

    def handler(request: PromptRequest, ctx: Any) -> PromptResponse:
        requests.append(weakref.ref(request))
        ctx.send_message("seen")
        return PromptResponse.end_turn()

    pair = InMemoryTransportPair.create()
    build: Callable[..., Any] = AcpAgent.sync if api == "sync" else AcpAgent.async_
    agent = (
        build(pair.agent_transport)
        .new_session_handler(lambda _r: NewSessionResponse(session_id=SID))
        .prompt_handler(handler)
        .build()
    )
    agent.start()
    client = AcpClient.sync(pair.client_transport).build()
    try:
        client.initialize()
        client.new_session({"cwd": "/tmp", "mcpServers": []})
        for _ in range(3):
            answer = client.prompt(PromptRequest.text(SID, "x" * 100_000))
            assert answer.stop_reason == "end_turn"
        quiesce(agent)
        assert len(requests) == 3
        assert [ref() is None for ref in requests] == [True, True, True]
    finally:
        client.close()
        agent.close()
        pair.close()
