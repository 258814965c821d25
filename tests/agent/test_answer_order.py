"""An answer produced on another thread never overtakes what that thread sent before it.

A handler's Observable may emit its answer on a worker thread (``session.run_blocking``, the
decorator API's plain ``def`` methods). The updates that thread sent first are queued for the
loop; the answer must leave after them, also when the Observable settled before the engine
subscribed to its outcome (the fast path), which is what a quick worker does.
"""

from __future__ import annotations

import threading
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from rxacp.agent import AcpAgent, AcpAsyncAgent
from rxacp.client import AcpClient
from rxacp.schema import (
    AgentMessageChunk,
    LoadSessionRequest,
    LoadSessionResponse,
    NewSessionResponse,
    SessionNotification,
    TextContent,
)
from rxacp.testing.memory import InMemoryTransportPair

SID = "s1"


def _answered_by_a_thread_before_subscribe_returns(
    agent: list[AcpAsyncAgent], texts: list[str]
) -> reactivex.Observable[LoadSessionResponse]:
    """An Observable whose subscription runs a thread that sends ``texts`` as updates, emits
    the answer and completes, all before ``subscribe`` returns (a worker quicker than the
    engine's subscription)."""

    def subscribe(
        observer: abc.ObserverBase[LoadSessionResponse], _s: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        def work() -> None:
            for text in texts:
                agent[0].send_session_update(
                    SessionNotification(
                        session_id=SID, update=AgentMessageChunk(content=TextContent(text=text))
                    )
                )
            observer.on_next(LoadSessionResponse())
            observer.on_completed()

        thread = threading.Thread(target=work)
        thread.start()
        thread.join(30)
        return Disposable()

    return reactivex.create(subscribe)


def test_an_answer_settled_on_a_worker_before_the_engine_subscribed_leaves_after_its_updates() -> (
    None
):
    texts = [f"replayed {i}" for i in range(5)]
    holder: list[AcpAsyncAgent] = []

    def load(_request: LoadSessionRequest) -> reactivex.Observable[LoadSessionResponse]:
        return _answered_by_a_thread_before_subscribe_returns(holder, texts)

    pair = InMemoryTransportPair.create()
    agent = (
        AcpAgent.async_(pair.agent_transport)
        .new_session_handler(lambda _r: NewSessionResponse(session_id=SID))
        .load_session_handler(load)
        .build()
    )
    holder.append(agent)
    agent.start()
    seen: list[str] = []

    def record(note: SessionNotification) -> None:
        update: Any = note.update
        seen.append(update.content.text)

    client = AcpClient.sync(pair.client_transport).session_update_consumer(record).build()
    try:
        client.initialize()
        for _ in range(3):
            seen.clear()
            client.load_session({"sessionId": SID, "cwd": "/tmp", "mcpServers": []})
            assert seen == texts
    finally:
        client.close()
        agent.close()
        pair.close()
