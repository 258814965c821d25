"""Issue 19.2: the sync client's consumers run one at a time in arrival order, off the connection's
loop: on the thread blocked in one of the client's calls while there is one (issue 21: no hop to
another thread), else on the client's consumer thread (the async client keeps running them on
the loop)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxacp.client import CancellationSignal
from rxacp.schema import PromptRequest, SessionNotification
from rxacp.schema import methods as m

from .._notes import chunk_text
from ..polling import wait_until
from .conftest import Rig, texts

pytestmark = pytest.mark.timeout(30)

SID = "sess-1"
WAIT = 10.0


def test_sync_consumers_run_in_order_off_the_loop_before_prompt_returns(rig: Rig) -> None:
    seen: list[tuple[str, str, int]] = []

    def first(note: SessionNotification) -> None:
        seen.append(("first", threading.current_thread().name, len(seen)))

    def second(note: SessionNotification) -> None:
        seen.append(("second", threading.current_thread().name, len(seen)))

    updates: list[Any] = []
    client = (
        rig.sync_builder()
        .session_update_consumer(updates.append)
        .session_update_consumer(first)
        .session_update_consumer(second)
        .build()
    )
    rig.on_close(client.close)
    answer = client.prompt(PromptRequest.text(SID, "stream 50"))
    assert answer.stop_reason == "end_turn"
    # every update of the turn was consumed, in order, before prompt() returned
    assert texts(updates) == [str(i) for i in range(50)]
    assert [name for name, _, _ in seen] == ["first", "second"] * 50
    caller = threading.current_thread().name
    for _, thread, _ in seen:  # the caller while it waited, or the consumer thread
        assert thread == caller or thread.startswith("rxacp-client-consumer-"), thread


def test_a_caller_blocked_in_prompt_runs_the_consumers_itself(rig: Rig) -> None:
    ran_on: list[str] = []
    client = (
        rig.sync_builder()
        .session_update_consumer(lambda n: ran_on.append(threading.current_thread().name))
        .build()
    )
    rig.on_close(client.close)
    client.initialize()
    stop = CancellationSignal()
    answers: list[Any] = []
    turn = threading.Thread(
        target=lambda: answers.append(client.prompt(PromptRequest.text(SID, "wait"), stop)),
        name="caller",
    )
    turn.start()
    consumers = client._consumers
    assert consumers is not None
    assert wait_until(lambda: consumers.waiting_callers == 1, WAIT), "prompt() is not waiting"
    # cancelled before the prompt is written, the turn would end locally with nothing sent
    assert wait_until(lambda: m.SESSION_PROMPT in rig.agent.methods(), WAIT), "prompt not sent"
    stop.cancel()  # the agent now sends one update, then its answer
    turn.join(WAIT)
    assert answers and answers[0].stop_reason == "cancelled"
    assert ran_on == ["caller"], "the update went to another thread instead"


def test_a_blocking_sync_consumer_does_not_stall_the_connection(rig: Rig) -> None:
    consuming, release = threading.Event(), threading.Event()

    def slow(note: SessionNotification) -> None:
        consuming.set()
        assert release.wait(WAIT)

    client = rig.sync_builder().session_update_consumer(slow).build()
    rig.on_close(client.close)
    answers: list[Any] = []
    turn = threading.Thread(
        target=lambda: answers.append(client.prompt(PromptRequest.text(SID, "echo hi")))
    )
    turn.start()
    assert consuming.wait(WAIT)
    # the loop still writes while the consumer blocks (on the loop, this would wait for it)
    client.ext_notification("_test/marker", {})
    rig.agent.wait_for_method("_test/marker")
    assert not answers, "the answer came before its update was consumed"
    release.set()
    turn.join(WAIT)
    assert answers and answers[0].stop_reason == "end_turn"


def test_two_sync_clients_have_a_consumer_thread_each_for_updates_nobody_waits_for() -> None:
    names: list[str] = []
    rigs = [Rig(), Rig()]
    try:
        for r in rigs:
            consumed = threading.Event()

            def consume(_note: SessionNotification, consumed: threading.Event = consumed) -> None:
                names.append(threading.current_thread().name)
                consumed.set()

            client = r.sync_builder().session_update_consumer(consume).build()
            r.on_close(client.close)
            # no blocking call of the client waits: the update goes to its consumer thread
            client.async_client.prompt(PromptRequest.text(SID, "echo hi")).block(WAIT)
            assert consumed.wait(WAIT)
    finally:
        for r in rigs:
            r.close()
    assert len(names) == 2 and names[0] != names[1]
    assert all(name.startswith("rxacp-client-consumer-") for name in names)


def test_async_client_consumers_still_run_on_the_connection_loop(rig: Rig) -> None:
    on_loop: list[bool] = []
    holder: list[Any] = []
    client = (
        rig.async_builder()
        .session_update_consumer(lambda n: on_loop.append(holder[0].session.in_loop()))
        .build()
    )
    holder.append(client)
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "echo hi")).block(WAIT)
    assert on_loop == [True]


def test_a_failing_sync_consumer_is_logged_and_the_next_one_still_runs(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    after: list[Any] = []

    def broken(note: SessionNotification) -> None:
        raise ValueError("consumer bug")

    client = (
        rig.sync_builder().session_update_consumer(broken).session_update_consumer(after.append)
    ).build()
    rig.on_close(client.close)
    with caplog.at_level("ERROR", logger="rxacp.client"):
        client.prompt(PromptRequest.text(SID, "stream 3"))
    assert texts(after) == ["0", "1", "2"]
    assert "consumer bug" in caplog.text


def test_an_async_def_consumer_of_the_sync_client_is_awaited_on_the_loop(rig: Rig) -> None:
    seen: list[tuple[str, bool]] = []
    holder: list[Any] = []

    async def consumer(note: SessionNotification) -> None:
        seen.append((chunk_text(note), holder[0].session.in_loop()))

    client = rig.sync_builder().session_update_consumer(consumer).build()
    holder.append(client)
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "stream 3"))
    assert seen == [("0", True), ("1", True), ("2", True)]
