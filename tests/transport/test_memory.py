"""InMemoryTransportPair: bytes and object modes, cross-loop delivery, queued frames, close."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from rxacp.testing.memory import InMemoryTransportPair
from rxacp.transport.base import JsonValue

from ._support import Recorder, async_test

T = TypeVar("T")


class LoopThread:
    """An event loop running in its own thread (as a client or agent connection would)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 5.0) -> T:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def two_loops() -> Iterator[tuple[LoopThread, LoopThread]]:
    a, b = LoopThread(), LoopThread()
    yield a, b
    a.stop()
    b.stop()


@async_test
async def test_a_byte_frame_arrives_as_the_same_bytes() -> None:
    pair = InMemoryTransportPair.create()
    ra, rb = Recorder().bind(), Recorder().bind()
    loop = asyncio.get_running_loop()
    await pair.client_transport.start(loop, ra)
    await pair.agent_transport.start(loop, rb)
    frame = '{"text":"héllo 日本"}'.encode()
    pair.client_transport.send(frame)
    pair.agent_transport.send(b'{"back":1}')
    await rb.frames_at_least(1)
    await ra.frames_at_least(1)
    assert rb.frames == [frame] and ra.frames == [b'{"back":1}']
    assert not pair.client_transport.carries_objects


@async_test
async def test_serializing_pair_rejects_frames_stdio_could_not_carry() -> None:
    pair = InMemoryTransportPair.create()
    with pytest.raises(ValueError, match="newline"):
        pair.client_transport.send(b'{"a":\n1}')
    with pytest.raises(TypeError, match="bytes"):
        pair.client_transport.send({"a": 1})


@async_test
async def test_receiving_side_applies_the_stdio_line_rules() -> None:
    pair = InMemoryTransportPair.create(max_frame_bytes=8)
    rb = Recorder().bind()
    loop = asyncio.get_running_loop()
    await pair.client_transport.start(loop, Recorder())
    await pair.agent_transport.start(loop, rb)
    for frame in (b"12345678\r", b"   ", b"123456789", b"ok"):
        pair.client_transport.send(frame)
    await rb.frames_at_least(2)
    assert rb.frames == [b"12345678", b"ok"]
    assert rb.too_large == [9]


@async_test
async def test_object_mode_passes_the_same_object_without_serializing() -> None:
    pair = InMemoryTransportPair.create(serialize=False)
    rb = Recorder().bind()
    loop = asyncio.get_running_loop()
    await pair.client_transport.start(loop, Recorder())
    await pair.agent_transport.start(loop, rb)
    msg: JsonValue = {"jsonrpc": "2.0", "method": "x", "params": {"text": "a\nb"}}
    pair.client_transport.send(msg)
    await rb.frames_at_least(1)
    assert rb.frames[0] is msg
    assert pair.client_transport.carries_objects and pair.agent_transport.carries_objects


def test_sides_on_different_loops_receive_in_order_on_their_own_loop_thread(
    two_loops: tuple[LoopThread, LoopThread],
) -> None:
    client_loop, agent_loop = two_loops
    pair = InMemoryTransportPair.create()
    rc, ra = Recorder(), Recorder()

    async def start_client() -> None:
        await pair.client_transport.start(asyncio.get_running_loop(), rc.bind())

    async def start_agent() -> None:
        await pair.agent_transport.start(asyncio.get_running_loop(), ra.bind())

    client_loop.run(start_client())
    agent_loop.run(start_agent())

    async def send_many() -> None:
        for i in range(5000):
            pair.client_transport.send(b'{"i":%d}' % i)

    client_loop.run(send_many())
    agent_loop.run(ra.frames_at_least(5000))
    assert ra.frames == [b'{"i":%d}' % i for i in range(5000)]
    assert ra.threads == {agent_loop.thread.ident}
    client_loop.run(pair.client_transport.close())
    agent_loop.run(ra.wait_closed())
    assert ra.closed[0].reason == "peer closed"
    agent_loop.run(pair.agent_transport.close())
    assert len(rc.closed) == 1 and len(ra.closed) == 1


@async_test
async def test_frames_sent_before_the_peer_starts_are_delivered_on_start_then_the_close() -> None:
    pair = InMemoryTransportPair.create()
    loop = asyncio.get_running_loop()
    await pair.client_transport.start(loop, Recorder())
    pair.client_transport.send(b'{"early":1}')
    pair.client_transport.send(b'{"early":2}')
    await pair.client_transport.close()
    rb = Recorder().bind()
    await pair.agent_transport.start(loop, rb)
    await rb.wait_closed()
    assert rb.frames == [b'{"early":1}', b'{"early":2}']
    assert [c.reason for c in rb.closed] == ["peer closed"]


@async_test
async def test_closing_one_side_reaches_the_other_after_every_frame_sent_before() -> None:
    pair = InMemoryTransportPair.create()
    ra, rb = Recorder().bind(), Recorder().bind()
    loop = asyncio.get_running_loop()
    await pair.client_transport.start(loop, ra)
    await pair.agent_transport.start(loop, rb)
    for i in range(100):
        pair.agent_transport.send(b'{"i":%d}' % i)
    await pair.agent_transport.close()
    pair.agent_transport.send(b'{"after":1}')  # dropped
    await ra.wait_closed()
    assert len(ra.frames) == 100 and ra.frames[-1] == b'{"i":99}'
    assert [c.reason for c in rb.closed] == ["closed"]
    assert [c.reason for c in ra.closed] == ["peer closed"]


def test_invalid_cap_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_frame_bytes"):
        InMemoryTransportPair.create(max_frame_bytes=0)
