"""stdio transports: spawning, stderr, exit reporting, process-group cleanup, the agent side."""

from __future__ import annotations

import asyncio
import io
import json
import os
import select
import signal
import sys
import threading
from typing import Any

import pytest

from rxacp.errors import AcpConnectionException
from rxacp.transport import AgentParameters, StdioAcpAgentTransport, StdioAcpClientTransport
from rxacp.transport.base import Frame

from ._support import ECHO_AGENT, PYTHON, Recorder, async_test, child_pids, process_state


def echo_params(**options: Any) -> AgentParameters:
    return AgentParameters(PYTHON, [ECHO_AGENT], **options)


async def started(params: AgentParameters) -> tuple[StdioAcpClientTransport, Recorder]:
    rec = Recorder().bind()
    transport = StdioAcpClientTransport(params)
    await transport.start(asyncio.get_running_loop(), rec)
    return transport, rec


def test_builder_and_constructor_produce_the_same_parameters() -> None:
    built = (
        AgentParameters.builder("agent")
        .args("--a", "1")
        .arg("--b")
        .env("K", "v")
        .env({"K2": "v2"})
        .cwd("/tmp")
        .close_timeout(0.5)
        .terminate_timeout(0.25)
        .max_frame_bytes(4096)
        .build()
    )
    direct = AgentParameters(
        "agent",
        args=["--a", "1", "--b"],
        env={"K": "v", "K2": "v2"},
        cwd="/tmp",
        close_timeout=0.5,
        terminate_timeout=0.25,
        max_frame_bytes=4096,
    )
    for name in ("command", "args", "env", "cwd", "close_timeout", "terminate_timeout"):
        assert getattr(built, name) == getattr(direct, name), name
    env = built.child_env()
    assert env is not None and env["K"] == "v" and env["PATH"] == os.environ["PATH"]


def test_bad_parameters_are_rejected_with_clear_errors() -> None:
    with pytest.raises(ValueError, match="command"):
        AgentParameters("")
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="list of strings"):
        AgentParameters("agent", args="--one-string")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="close_timeout"):
        AgentParameters("agent", close_timeout=-1)


@async_test
async def test_spawn_failure_raises_a_connection_error_naming_the_command() -> None:
    transport = StdioAcpClientTransport(AgentParameters("/nonexistent/rxacp-agent"))
    with pytest.raises(AcpConnectionException, match="rxacp-agent"):
        await transport.start(asyncio.get_running_loop(), Recorder())
    await transport.close()  # still safe


@async_test
async def test_frames_round_trip_through_a_spawned_agent_and_bad_frames_are_refused() -> None:
    transport, rec = await started(echo_params())
    frames = [b'{"n":%d,"t":"\xc3\xa9"}' % i for i in range(100)]
    for f in frames:
        transport.send(f)
    with pytest.raises(ValueError, match="newline"):
        transport.send(b"{}\n{}")
    with pytest.raises(TypeError, match="bytes"):
        transport.send({"a": 1})
    await transport.drain()
    await rec.frames_at_least(100)
    assert rec.frames == frames
    await transport.close()
    transport.send(b'{"after":"close"}')  # dropped silently
    assert [c.reason for c in rec.closed] == ["closed"] and rec.closed[0].exit_code == 0


@async_test
async def test_an_agent_writing_100_mb_to_stderr_does_not_stall_the_frames() -> None:
    lines: list[str] = []
    transport, rec = await started(echo_params(on_stderr_line=lines.append))
    transport.send(json.dumps({"cmd": "stderr", "mb": 100}).encode())
    for i in range(1000):
        transport.send(b'{"i":%d}' % i)
    await rec.until(lambda: b'{"stderr_done": 100}' in rec.frames, timeout=10)
    await rec.frames_at_least(1002)
    assert [f for f in rec.lines if f.startswith(b'{"i"')] == [b'{"i":%d}' % i for i in range(1000)]
    await transport.close()
    assert len([line for line in lines if line.startswith("eee")]) == 100 * 1024
    tail = rec.closed[0].stderr_tail
    assert tail is not None and 1000 < len(tail) <= 8192 and tail.endswith("e" * 100)


@async_test
async def test_a_killed_agent_is_reported_with_exit_code_and_stderr_tail() -> None:
    transport, rec = await started(echo_params())
    transport.send(b'{"ping":1}')
    await rec.frames_at_least(1)
    os.kill(transport.pid or 0, signal.SIGKILL)
    # the transport has no timer: only the exit ends it
    info = await rec.wait_closed(timeout=30.0)
    assert info.exit_code in (-9, 137)
    assert info.stderr_tail is not None and "echo agent started" in info.stderr_tail
    await transport.close()
    assert len(rec.closed) == 1


@async_test
async def test_an_agent_exiting_on_its_own_reports_its_exit_code() -> None:
    transport, rec = await started(echo_params())
    transport.send(b'{"cmd":"exit","code":3}')
    info = await rec.wait_closed(timeout=2.0)
    assert (info.reason, info.exit_code) == ("agent exited", 3)
    await transport.close()
    assert transport.pid not in child_pids()


@async_test
async def test_close_kills_a_grandchild_that_ignores_sigterm_and_leaves_no_zombie() -> None:
    seen = asyncio.Event()
    grandchild: list[int] = []

    def on_line(line: str) -> None:
        if line.startswith("grandchild "):
            grandchild.append(int(line.split()[1]))
            seen.set()

    script = (
        f'(trap "" TERM; exec sleep 1000) & echo "grandchild $!" >&2; exec {PYTHON} {ECHO_AGENT}'
    )
    params = AgentParameters(
        "sh", ["-c", script], close_timeout=1.0, terminate_timeout=0.2, on_stderr_line=on_line
    )
    transport, rec = await started(params)
    transport.send(b'{"ping":1}')
    await rec.frames_at_least(1)
    await asyncio.wait_for(seen.wait(), 2)
    assert process_state(grandchild[0]) not in (None, "Z")
    await asyncio.wait_for(transport.close(), 3)
    assert process_state(grandchild[0]) in (None, "Z")  # dead (maybe not yet reaped by init)
    assert child_pids() == []  # the agent itself was reaped: no zombie of ours
    assert rec.closed[0].exit_code == 0  # the agent left on stdin close; only sleep remained


@async_test
async def test_close_escalates_to_sigkill_for_an_agent_ignoring_stdin_and_sigterm() -> None:
    params = AgentParameters(
        "sh", ["-c", 'trap "" TERM; exec sleep 1000'], close_timeout=0.1, terminate_timeout=0.1
    )
    transport, rec = await started(params)
    await asyncio.wait_for(transport.close(), 3)
    assert rec.closed[0].exit_code == -signal.SIGKILL
    assert child_pids() == []


@async_test
async def test_twenty_spawn_close_cycles_leak_no_file_descriptors_or_children() -> None:
    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def cycle() -> None:
        transport, rec = await started(AgentParameters("cat"))
        transport.send(b'{"x":1}')
        await rec.frames_at_least(1)
        await transport.close()

    await cycle()  # warm up lazily created loop resources (self-pipe, watcher)
    before = fds()
    for _ in range(20):
        await cycle()
    assert fds() == before
    assert child_pids() == []


@async_test
async def test_oversized_lines_are_reported_on_both_sides_and_the_next_line_arrives() -> None:
    transport, rec = await started(AgentParameters("cat", max_frame_bytes=1024))
    transport.send(b'{"big":"' + b"x" * 2000 + b'"}')
    transport.send(b'{"next":1}')
    await rec.frames_at_least(1)
    assert rec.frames == [b'{"next":1}'] and rec.too_large == [2010]
    await transport.close()

    agent, rec2 = await started(echo_params(env={"ECHO_MAX_FRAME_BYTES": "1024"}))
    agent.send(b'{"big":"' + b"x" * 2000 + b'"}')
    agent.send(b'{"next":2}')
    await rec2.frames_at_least(2)
    assert rec2.frames == [b'{"too_large": 2010}', b'{"next":2}']
    await agent.close()


@async_test
async def test_crlf_line_ends_and_blank_lines_from_the_agent_are_tolerated() -> None:
    script = r'printf "{\"a\":1}\r\n\n   \n\r\n{\"b\":2}\r\n"; exec cat'
    transport, rec = await started(AgentParameters("sh", ["-c", script]))
    await rec.frames_at_least(2)
    assert rec.frames == [b'{"a":1}', b'{"b":2}']
    await transport.close()


@async_test
async def test_print_in_an_agent_goes_to_stderr_and_the_protocol_stream_stays_valid() -> None:
    lines: list[str] = []
    transport, rec = await started(echo_params(on_stderr_line=lines.append))
    transport.send(b'{"cmd":"print","text":"stray output"}')
    transport.send(b'{"after":1}')
    await rec.frames_at_least(2)
    assert rec.frames == [b'{"cmd":"print","text":"stray output"}', b'{"after":1}']
    await transport.close()
    assert "stray output" in lines
    assert rec.too_large == []


@async_test
async def test_agent_transport_reads_a_regular_file_as_stdin_through_a_thread(
    tmp_path: object,
) -> None:
    path = os.path.join(str(tmp_path), "stdin.jsonl")
    with open(path, "wb") as f:
        f.write(b'{"a":1}\n\n{"b":2}\r\n{"c":3}')
    out = io.BytesIO()
    rec = Recorder().bind()
    with open(path, "rb") as stdin:
        transport = StdioAcpAgentTransport(stdin, out, guard_stdout=False)
        await transport.start(asyncio.get_running_loop(), rec)
        info = await rec.wait_closed()
        transport.send(b'{"reply":1}')
        await transport.close()
    assert rec.frames == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    assert info.reason == "stdin closed"
    assert out.getvalue() == b'{"reply":1}\n'
    assert len(rec.closed) == 1


@async_test
async def test_agent_transport_on_pipes_reads_frames_and_writes_lines() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    rec = Recorder().bind()
    with open(in_r, "rb", buffering=0) as stdin, open(out_w, "wb", buffering=0) as stdout:
        transport = StdioAcpAgentTransport(stdin, stdout)
        await transport.start(asyncio.get_running_loop(), rec)
        big = b'{"x":"' + b"y" * 300_000 + b'"}\n'  # bigger than a pipe buffer
        writer = asyncio.ensure_future(asyncio.to_thread(os.write, in_w, big))
        await rec.frames_at_least(1)
        assert await writer == len(big)
        transport.send(b'{"ok":true}')
        await transport.drain()
        assert os.read(out_r, 100) == b'{"ok":true}\n'
        os.close(in_w)
        info = await rec.wait_closed()
        await transport.close()
        assert os.get_blocking(stdin.fileno())  # blocking mode restored on the shared fd
    os.close(out_r)
    assert len(rec.lines[0]) == 300_008 and info.reason == "stdin closed"
    assert sys.stdout is sys.__stdout__ or sys.stdout is not sys.stderr


@async_test
async def test_killed_agent_whose_grandchild_holds_stdout_is_still_reported_within_a_second() -> (
    None
):
    seen = asyncio.Event()
    grandchild: list[int] = []

    def on_line(line: str) -> None:
        if line.startswith("grandchild "):
            grandchild.append(int(line.split()[1]))
            seen.set()

    script = f'sleep 1000 & echo "grandchild $!" >&2; exec {PYTHON} {ECHO_AGENT}'
    transport, rec = await started(AgentParameters("sh", ["-c", script], on_stderr_line=on_line))
    transport.send(b'{"ping":1}')
    await rec.frames_at_least(1)
    await asyncio.wait_for(seen.wait(), 2)
    os.kill(transport.pid or 0, signal.SIGKILL)
    # a grandchild holds stdout open: only the exit itself ends the transport
    info = await rec.wait_closed(timeout=30.0)
    assert (info.reason, info.exit_code) == ("agent exited", -9)
    await asyncio.wait_for(transport.close(), 3)
    assert process_state(grandchild[0]) in (None, "Z")
    assert child_pids() == []


@async_test
async def test_frames_sent_before_start_are_written_once_the_agent_is_spawned() -> None:
    transport = StdioAcpClientTransport(AgentParameters("cat"))
    transport.send(b'{"early":1}')
    rec = Recorder().bind()
    await transport.start(asyncio.get_running_loop(), rec)
    transport.send(b'{"late":2}')
    await rec.frames_at_least(2)
    assert rec.frames == [b'{"early":1}', b'{"late":2}']
    await transport.close()


@pytest.mark.selector_loop  # asyncio's own pipe transports
@async_test
async def test_both_stdio_ends_ask_the_os_for_at_most_64_kib_per_read() -> None:
    # asyncio's default 256 KiB read buffer is mmap-allocated on every read; a bounded read
    # keeps a small line cheap and still moves a 300 KB line (in several reads).
    sizes: list[int] = []
    real_read = os.read

    def recording_read(fd: int, n: int) -> bytes:
        sizes.append(n)
        return real_read(fd, n)

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    rec = Recorder().bind()
    os.read = recording_read
    try:
        with open(in_r, "rb", buffering=0) as stdin, open(out_w, "wb", buffering=0) as stdout:
            agent_side = StdioAcpAgentTransport(stdin, stdout)
            await agent_side.start(asyncio.get_running_loop(), rec)
            big = b'{"x":"' + b"y" * 300_000 + b'"}\n'
            writer = asyncio.ensure_future(asyncio.to_thread(os.write, in_w, big))
            await rec.frames_at_least(1)
            await writer
            os.close(in_w)
            await rec.wait_closed()
            await agent_side.close()
        client_side, client_rec = await started(echo_params())
        client_side.send(b'{"ping":1}')
        await client_rec.frames_at_least(1)
        await client_side.close()
    finally:
        os.read = real_read
        os.close(out_r)
    assert len(rec.lines[0]) == 300_008 and client_rec.frames[0] == b'{"ping":1}'
    assert sizes and max(sizes) <= 64 * 1024, sorted(set(sizes))


@pytest.mark.selector_loop  # asyncio's own pipe transports
@async_test
async def test_agent_stdout_frames_reach_the_receiver_in_the_read_callback_itself() -> None:
    # asyncio's subprocess transport would defer each read to a later loop turn; the client
    # transport delivers in the turn that read the data (one loop iteration less per message).
    import inspect

    callers: list[set[str]] = []

    class CallerRecorder(Recorder):
        def on_frame(self, frame: Frame) -> None:
            callers.append({f.function for f in inspect.stack()[1:12]})
            super().on_frame(frame)

    rec = CallerRecorder().bind()
    transport = StdioAcpClientTransport(echo_params())
    await transport.start(asyncio.get_running_loop(), rec)
    transport.send(b'{"ping":1}')
    await rec.frames_at_least(1)
    await transport.close()
    assert rec.frames == [b'{"ping":1}']
    assert "_read_ready" in callers[0], callers[0]


def test_closing_the_agent_side_hands_every_queued_frame_to_stdout_before_it_returns() -> None:
    """Before: ``close()`` gave stdout's buffered frames to asyncio and returned at once; the
    agent's loop then ended and the unflushed tail was lost (a CI run: 98,131 of 100,000
    answers reached a client that read them only after closing the agent's stdin). Now
    ``close()`` waits, bounded, until stdout has taken them."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    frames = 2_000  # ~400 KB: several pipe buffers
    reading = threading.Event()
    received: list[bytes] = []

    def read_all() -> None:  # until EOF, or 20 s without data (the old code left the fd open)
        reading.wait(60.0)
        data = b""
        while select.select([out_r], [], [], 20.0)[0]:
            chunk = os.read(out_r, 65536)
            if not chunk:
                break
            data += chunk
        os.close(out_r)
        received.extend(data.splitlines())

    async def agent_side() -> None:
        with open(in_r, "rb", buffering=0) as stdin, open(out_w, "wb", buffering=0) as stdout:
            transport = StdioAcpAgentTransport(stdin, stdout)
            await transport.start(asyncio.get_running_loop(), Recorder().bind())
            for i in range(frames):
                transport.send(b'{"i":%d,"pad":"%s"}' % (i, b"p" * 180))
            reading.set()  # the client reads only now
            await transport.close()

    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        asyncio.run(agent_side())  # the loop ends right after close(), as an agent's does
    finally:
        reading.set()
        os.close(in_w)
        reader.join(60.0)
    assert len(received) == frames
    assert received[-1].startswith(b'{"i":%d,' % (frames - 1))
