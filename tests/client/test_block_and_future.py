"""The Java idioms ``.block()`` and ``.toFuture()`` on the async client's Observables:
``AcpObservable.block(timeout=None)`` and ``pipe(ops.to_future(concurrent.futures.Future))``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import sys
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from rxacp.errors import AcpProtocolException, AcpTimeoutException
from rxacp.schema import PromptRequest, PromptResponse
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST
from tests.polling import wait_until

from .conftest import Rig, to_concurrent_future

pytestmark = pytest.mark.timeout(30)

SID = "sess-1"


def _client(rig: Rig) -> Any:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    return client


def _cancelled_ids(rig: Rig) -> list[Any]:
    rig.agent.wait_for_method(CANCEL_REQUEST)
    return [msg["params"]["requestId"] for msg in rig.agent.messages(CANCEL_REQUEST)]


def _main_thread_waits() -> bool:
    """Whether the main thread is blocked in ``threading`` waiting (inside ``wait_for``)."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return bool(names) and names[0] == "wait" and "wait_for" in names


# ------------------------------------------------------------------------------ block()
def test_block_returns_the_answer_of_a_request(rig: Rig) -> None:
    client = _client(rig)
    assert client.prompt(PromptRequest.text(SID, "echo hi")).block() == PromptResponse.end_turn()
    assert client.ext_method("_test/echo", {"x": 1}).block(timedelta(seconds=5)) == {"x": 1}


def test_block_raises_the_error_the_peer_answered(rig: Rig) -> None:
    client = _client(rig)
    with pytest.raises(AcpProtocolException) as info:
        client.ext_method("_test/unknown", {}).block(5)
    assert info.value.code == -32601


def test_block_times_out_with_acp_timeout_and_cancels_the_request_on_the_wire(rig: Rig) -> None:
    client = _client(rig)
    with pytest.raises(AcpTimeoutException, match=r"block\(\) timed out after 0\.2 s"):
        client.ext_method("_test/hang", {}).block(0.2)
    hang_id = rig.agent.messages("_test/hang")[0]["id"]
    assert _cancelled_ids(rig) == [hang_id]


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """A shell's background job (CI, nohup) starts with SIGINT ignored: make Ctrl-C raise."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_during_block_cancels_the_prompt_on_the_wire(rig: Rig) -> None:
    assert threading.current_thread() is threading.main_thread()
    client = _client(rig)

    def press_ctrl_c() -> None:
        rig.agent.wait_for_method(m.SESSION_PROMPT)
        # Ctrl-C while block() waits (not while it is still subscribing): poll, bounded
        assert wait_until(_main_thread_waits), "block() never waited"
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    with pytest.raises(KeyboardInterrupt):
        client.prompt(PromptRequest.text(SID, "hang")).block()
    presser.join(10)
    prompt_id = rig.agent.messages(m.SESSION_PROMPT)[0]["id"]
    assert prompt_id in _cancelled_ids(rig)


def test_block_on_a_thread_running_an_event_loop_refuses_instead_of_stalling_it(
    rig: Rig,
) -> None:
    client = _client(rig)

    async def main() -> None:
        client.ext_method("_test/echo", {}).block(5)

    with pytest.raises(RuntimeError, match="await the Observable instead"):
        asyncio.run(main())
    assert rig.agent.count("_test/echo") == 0


# ------------------------------------------------------------------------------ toFuture()
def test_to_future_resolves_with_the_answer_from_any_thread(rig: Rig) -> None:
    client = _client(rig)
    future = to_concurrent_future(client.prompt(PromptRequest.text(SID, "echo hi")))
    assert isinstance(future, concurrent.futures.Future)
    assert future.result(timeout=10) == PromptResponse.end_turn()


def test_to_future_fails_with_the_peers_error(rig: Rig) -> None:
    client = _client(rig)
    future = to_concurrent_future(client.ext_method("_test/unknown", {}))
    with pytest.raises(AcpProtocolException):
        future.result(timeout=10)


def test_cancelling_the_future_cancels_the_request_on_the_wire(rig: Rig) -> None:
    client = _client(rig)
    future = to_concurrent_future(client.prompt(PromptRequest.text(SID, "hang")))
    rig.agent.wait_for_method(m.SESSION_PROMPT)
    assert future.cancel()
    prompt_id = rig.agent.messages(m.SESSION_PROMPT)[0]["id"]
    assert prompt_id in _cancelled_ids(rig)
