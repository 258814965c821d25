"""The Rx-native client surface (issue 14 item 3): ``prompt_turn``, ``updates``, and ``async
def`` consumers and handlers awaited in every builder of both roles."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient, CancellationSignal
from rxacp.schema import (
    AcpModel,
    AgentMessageChunk,
    InitializeResponse,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileResponse,
    SessionNotification,
    TextContent,
)
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST
from rxacp.testing.memory import InMemoryTransportPair

from .._notes import chunk_text
from .conftest import Rig, stdio_transport, texts
from .test_prompt_cancel import Outcome

SID = "sess-1"


def _chunk_texts(values: list[Any]) -> list[str]:
    return [
        v.content.text
        for v in values
        if isinstance(v, AgentMessageChunk) and isinstance(v.content, TextContent)
    ]


def _stop_reason(item: AcpModel) -> str:
    """The stop reason of a turn's last item (asserts it is the ``PromptResponse``)."""
    assert isinstance(item, PromptResponse), item
    return item.stop_reason


# ---------------------------------------------------------------------------- prompt_turn
def test_prompt_turn_emits_every_update_in_order_then_the_answer_then_completes(
    rig: Rig,
) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    values = client.prompt_turn(PromptRequest.text(SID, "stream 50")).pipe(ops.to_list()).run()
    assert _chunk_texts(values) == [str(i) for i in range(50)]
    assert isinstance(values[-1], PromptResponse) and values[-1].stop_reason == "end_turn"
    assert len(values) == 51


def test_a_second_subscription_of_prompt_turn_is_a_second_turn(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    turn = client.prompt_turn(PromptRequest.text(SID, "stream 3"))
    first = turn.pipe(ops.to_list()).run()
    second = turn.pipe(ops.to_list()).run()
    assert _chunk_texts(first) == _chunk_texts(second) == ["0", "1", "2"]
    assert rig.agent.count(m.SESSION_PROMPT) == 2


def test_prompt_turn_can_be_awaited_for_its_answer(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)

    async def main() -> Any:
        return await client.prompt_turn(PromptRequest.text(SID, "echo hi"))

    assert asyncio.run(main()).stop_reason == "end_turn"


def test_prompt_turns_of_two_sessions_see_only_their_own_updates(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    both = reactivex.merge(
        client.prompt_turn(PromptRequest.text("sess-a", "echo a")).pipe(
            ops.to_list(), ops.map(lambda v: ("a", v))
        ),
        client.prompt_turn(PromptRequest.text("sess-b", "echo b")).pipe(
            ops.to_list(), ops.map(lambda v: ("b", v))
        ),
    )
    results = dict(both.pipe(ops.to_list()).run())
    assert _chunk_texts(results["a"]) == ["a"] and _chunk_texts(results["b"]) == ["b"]


def test_disposing_prompt_turn_cancels_the_turn_once_each_way(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    stop: Subject[int] = Subject()
    outcome = Outcome()
    client.prompt_turn(PromptRequest.text(SID, "hang")).pipe(ops.take_until(stop)).subscribe(
        outcome.on_next, outcome.on_error, outcome.on_completed
    )
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    stop.on_next(1)
    outcome.wait()
    rig.agent.wait_for_method(CANCEL_REQUEST)
    assert client.prompt(PromptRequest.text(SID, "echo next")).run().stop_reason == "end_turn"
    assert rig.agent.count(m.SESSION_CANCEL) == 1 and rig.agent.count(CANCEL_REQUEST) == 1


def test_prompt_turn_with_a_stop_signal_still_emits_the_late_updates_and_the_answer(
    rig: Rig,
) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    stop = CancellationSignal()
    values: list[Any] = []
    done = threading.Event()
    client.prompt_turn(PromptRequest.text(SID, "wait"), stop).subscribe(
        values.append, lambda e: done.set(), done.set
    )
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    stop.cancel()
    assert done.wait(5)
    assert _chunk_texts(values) == ["after-cancel"]
    assert values[-1].stop_reason == "cancelled" and rig.agent.count(m.SESSION_CANCEL) == 1


# ---------------------------------------------------------------------------- updates()
def test_updates_is_hot_in_arrival_order_and_a_late_subscriber_sees_only_later_ones(
    rig: Rig,
) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    early: list[SessionNotification] = []
    of_b: list[SessionNotification] = []
    client.updates().subscribe(early.append)
    client.updates("sess-b").subscribe(of_b.append)
    client.prompt(PromptRequest.text("sess-a", "stream 3")).run()
    late: list[SessionNotification] = []
    client.updates().subscribe(late.append)
    client.prompt(PromptRequest.text("sess-b", "echo b")).run()
    assert texts(early) == ["0", "1", "2", "b"]
    assert texts(late) == ["b"] and texts(of_b) == ["b"]
    assert {n.session_id for n in of_b} == {"sess-b"}


def test_updates_completes_when_the_connection_ends(rig: Rig) -> None:
    client = rig.async_builder().build()
    completed = threading.Event()
    client.updates().subscribe(on_completed=completed.set)
    client.prompt(PromptRequest.text(SID, "echo x")).run()
    client.close()
    assert completed.wait(5)
    again = threading.Event()
    client.updates().subscribe(on_completed=again.set)
    assert again.is_set()


def test_a_failing_updates_subscriber_does_not_stop_the_others_or_the_consumers(
    rig: Rig,
) -> None:
    consumed: list[Any] = []
    client = rig.async_builder().session_update_consumer(consumed.append).build()
    rig.on_close(client.close)
    seen: list[Any] = []

    def boom(_: Any) -> None:
        raise RuntimeError("subscriber bug")

    client.updates().subscribe(boom)
    client.updates().subscribe(seen.append)
    client.prompt(PromptRequest.text(SID, "stream 2")).run()
    assert texts(seen) == texts(consumed) == ["0", "1"]


# ---------------------------------------------------------------------------- async def
def test_an_async_def_consumer_is_awaited_for_every_update_in_order(rig: Rig) -> None:
    got: list[str] = []
    active = [0]
    overlaps = [0]

    async def consume(note: SessionNotification) -> None:
        active[0] += 1
        overlaps[0] = max(overlaps[0], active[0])
        await asyncio.sleep(0)
        got.append(chunk_text(note))
        active[0] -= 1

    client = rig.async_builder().session_update_consumer(consume).build()
    rig.on_close(client.close)
    answer = client.prompt(PromptRequest.text(SID, "stream 2000")).run()
    assert answer.stop_reason == "end_turn"
    assert got == [str(i) for i in range(2000)]  # all delivered, before the answer
    assert overlaps[0] == 1  # one finished before the next started


def test_async_def_request_handlers_are_awaited_in_the_blocking_client(rig: Rig) -> None:
    async def read(req: Any) -> ReadTextFileResponse:
        await asyncio.sleep(0)
        return ReadTextFileResponse(content=f"async {req.path}")

    updates: list[Any] = []
    client = (
        rig.sync_builder().session_update_consumer(updates.append).read_text_file_handler(read)
    ).build()
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "read /x"))
    assert texts(updates) == ["read:async /x"]


def test_async_def_ext_notification_handlers_are_awaited_in_order(rig: Rig) -> None:
    got: list[int] = []
    done = threading.Event()

    async def on_note(params: Any) -> None:
        await asyncio.sleep(0)
        got.append(params["n"])
        if params["n"] == 99:
            done.set()

    client = rig.async_builder().ext_notification_handler("_test/note", on_note).build()
    rig.on_close(client.close)
    client.initialize().run()
    for n in range(100):
        rig.agent.session.send_notification("_test/note", {"n": n})
    assert done.wait(5) and got == list(range(100))


@pytest.mark.parametrize("api", ["sync", "async"])
def test_async_def_handlers_are_awaited_by_both_agent_apis(api: str) -> None:
    pair = InMemoryTransportPair.create()

    async def new_session(req: Any) -> NewSessionResponse:
        await asyncio.sleep(0)
        return NewSessionResponse(session_id="from-async")

    async def prompt(req: Any, ctx: Any) -> PromptResponse:
        await asyncio.sleep(0)
        return PromptResponse.end_turn()

    end = pair.agent_transport
    builder = AcpAgent.sync(end) if api == "sync" else AcpAgent.async_(end)
    agent = (
        builder.initialize_handler(lambda req: InitializeResponse.ok())
        .new_session_handler(new_session)
        .prompt_handler(prompt)
        .build()
    )
    agent.start()
    client = AcpClient.sync(pair.client_transport).build()
    try:
        client.initialize()
        assert client.new_session({"cwd": "/tmp", "mcpServers": []}).session_id == "from-async"
        assert client.prompt(PromptRequest.text("from-async", "hi")).stop_reason == "end_turn"
    finally:
        client.close()
        agent.close()


# ---------------------------------------------------------------------------- real stdio
def test_over_stdio_prompt_turn_streams_the_turn_and_updates_sees_it_too() -> None:
    client = AcpClient.async_(stdio_transport()).build()
    seen: list[Any] = []
    try:
        client.initialize().run()
        client.updates(SID).subscribe(seen.append)
        values = client.prompt_turn(PromptRequest.text(SID, "stream 300")).pipe(ops.to_list())
        result = values.run()
    finally:
        client.close()
    assert _chunk_texts(result) == [str(i) for i in range(300)]
    answer = result[-1]
    assert isinstance(answer, PromptResponse) and answer.stop_reason == "end_turn"
    assert texts(seen) == [str(i) for i in range(300)]


# ---------------------------------------------------------------------------- blocking iterator
def test_the_blocking_prompt_turn_yields_every_update_then_the_answer(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    items = list(client.prompt_turn(PromptRequest.text(SID, "stream 20")))
    assert _chunk_texts(items) == [str(i) for i in range(20)]
    assert isinstance(items[-1], PromptResponse) and items[-1].stop_reason == "end_turn"
    assert rig.agent.count(m.SESSION_PROMPT) == 1


def test_breaking_out_of_a_streaming_blocking_turn_sends_both_cancels_once(rig: Rig) -> None:
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    unused = client.prompt_turn(PromptRequest.text(SID, "never sent"))
    del unused  # nothing is sent before iterating
    for item in client.prompt_turn(PromptRequest.text(SID, "hang-after 3")):
        assert _chunk_texts([item]) == ["0"]
        break  # the iterator is closed here (CPython frees it): the turn is cancelled
    rig.agent.wait_for_method(CANCEL_REQUEST)
    assert rig.agent.count(m.SESSION_CANCEL) == 1 and rig.agent.count(CANCEL_REQUEST) == 1
    assert rig.agent.count(m.SESSION_PROMPT) == 1
    nxt = list(client.prompt_turn(PromptRequest.text(SID, "echo next")))
    assert _chunk_texts(nxt) == ["next"] and _stop_reason(nxt[-1]) == "end_turn"


def test_a_slow_blocking_iteration_holds_the_connection_instead_of_buffering(rig: Rig) -> None:
    from .conftest import flush

    client = rig.sync_builder().build()
    rig.on_close(client.close)
    turn = client.prompt_turn(PromptRequest.text(SID, "stream 2000"))
    first = next(turn)
    for _ in range(500):  # bounded: until the stream arrived while nobody iterates
        if client.session.stats.read_pauses:
            break
        flush(client.session)
    assert client.session.stats.read_pauses >= 1  # the iterator's buffer filled: reading paused
    rest = list(turn)
    assert _chunk_texts([first, *rest]) == [str(i) for i in range(2000)]
    assert _stop_reason(rest[-1]) == "end_turn"


def test_over_stdio_the_blocking_prompt_turn_streams_the_turn() -> None:
    client = AcpClient.sync(stdio_transport()).build()
    try:
        client.initialize()
        items = list(client.prompt_turn(PromptRequest.text(SID, "stream 300")))
    finally:
        client.close()
    assert _chunk_texts(items) == [str(i) for i in range(300)]
    assert _stop_reason(items[-1]) == "end_turn"
