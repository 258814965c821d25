"""Items 6 and 7: the stdout guard, a client facing a misbehaving agent, and back-pressure.

Back-pressure policy (docs/reliability.md): the agent's stdout buffer is bounded by the
transport's high-water mark; a blocking producer (a sync handler calling ``send_update``) waits
until it drains; nothing is dropped or reordered. The agent's RSS is sampled while the client
reads nothing, then the client reads everything and checks count and order.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import termios
import threading
from typing import Any

import reactivex

from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.transport import AgentParameters, StdioAcpAgentTransport, StdioAcpClientTransport

from .conftest import (
    FLOOD,
    Figure,
    reference_agent_argv,
    rss_kib,
    scaled,
    send_json,
    spawn_agent,
    wait_until,
)

PEERS = os.path.join(os.path.dirname(__file__), "peers")
NOISY = os.path.join(PEERS, "noisy_agent.py")
UPDATES = scaled(20_000, 200_000)
UPDATE_SIZE = 512
RSS_BOUND_KIB = 24 * 1024  # growth allowed over the idle agent while the client is not reading


def spawn_flood(*args: str) -> subprocess.Popen[bytes]:
    return spawn_agent([sys.executable, FLOOD, *args], stderr=subprocess.PIPE)


def test_print_inside_an_agent_handler_goes_to_stderr_and_the_stream_stays_valid(
    figure: Figure,
) -> None:
    proc = spawn_flood()
    assert proc.stdout is not None and proc.stderr is not None
    send_json(proc, {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
    text = [{"type": "text", "text": "print"}]
    send_json(
        proc, {"id": 2, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": text}}
    )
    lines = [proc.stdout.readline() for _ in range(3)]
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(30.0) == 0
    messages = [json.loads(line) for line in lines]  # every stdout line is JSON-RPC
    assert [m.get("id") for m in messages] == [1, None, 2]
    assert proc.stdout.read() == b""
    stderr = proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    assert "hello from print() inside a handler" in stderr and "{not json either" in stderr
    figure("non_json_lines_on_agent_stdout", 0)


def test_a_client_skips_and_counts_non_json_lines_from_a_misbehaving_agent(
    figure: Figure,
) -> None:
    session = AcpSession(
        StdioAcpClientTransport(AgentParameters(sys.executable, [NOISY])), role="client"
    )
    updates: list[Any] = []
    session.set_notification_handler("session/update", lambda n: updates.append(n.params))
    try:
        wait_for(session.send_request("initialize", {"protocolVersion": 1}), 30.0)
        wait_for(session.send_request("session/new", {"cwd": "/", "mcpServers": []}), 30.0)
        answer = wait_for(session.send_request("session/prompt", {"sessionId": "s1"}), 30.0)
        assert answer == {"stopReason": "end_turn"} and len(updates) == 1
        # 5 junk lines at start-up, 5 per request and 5 more inside the prompt: 25 lines
        assert wait_until(lambda: session.stats.parse_errors == 25, 30.0), session.stats
        assert session.is_open
    finally:
        session.close()
    figure("non_json_lines_skipped_and_counted", session.stats.parse_errors)


def _pipe_full(fd: int) -> bool:
    size = fcntl.fcntl(fd, 1032)  # F_GETPIPE_SZ
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, sys.byteorder) >= size - 4096  # lines do not fill the last page


def test_agent_memory_stays_bounded_while_the_client_stops_reading_a_long_stream(
    figure: Figure,
) -> None:
    proc = spawn_flood()
    assert proc.stdout is not None
    drain_stderr = threading.Thread(target=lambda: proc.stderr and proc.stderr.read(), daemon=True)
    drain_stderr.start()
    send_json(proc, {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
    assert b'"id":1' in proc.stdout.readline()
    idle = rss_kib(proc.pid)
    text = [{"type": "text", "text": f"flood {UPDATES} {UPDATE_SIZE}"}]
    send_json(
        proc, {"id": 2, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": text}}
    )
    fd = proc.stdout.fileno()
    assert wait_until(lambda: _pipe_full(fd), 10.0), "the agent never filled its stdout pipe"
    # the producer now fills the agent's write buffer to the high-water mark and blocks: its
    # CPU time stops growing. Sample RSS until it is flat for a while.
    peak = idle
    cpu: list[int] = []

    def cpu_ticks() -> int:
        with open(f"/proc/{proc.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def settled() -> bool:
        nonlocal peak
        peak = max(peak, rss_kib(proc.pid))
        cpu.append(cpu_ticks())
        return len(cpu) > 20 and cpu[-1] == cpu[-20]

    blocked = wait_until(settled, 20.0)
    growth = peak - idle
    # now read everything: every update, in order, then the answer
    expected = 0
    for line in proc.stdout:
        msg = json.loads(line)
        if msg.get("id") == 2:
            break
        chunk = msg["params"]["update"]["content"]["text"]
        assert int(chunk[:9]) == expected, (chunk[:9], expected)
        expected += 1
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(10.0) == 0
    drain_stderr.join(5.0)
    proc.stdout.close()
    if proc.stderr is not None:
        proc.stderr.close()
    figure("updates_streamed", UPDATES)
    figure("update_bytes", UPDATE_SIZE)
    figure("agent_rss_idle_kib", idle)
    figure("agent_rss_growth_while_client_not_reading_kib", growth)
    figure("producer_blocked", blocked)
    assert msg["result"] == {"stopReason": "end_turn"}
    assert expected == UPDATES  # nothing dropped, nothing reordered
    assert blocked, "the producer kept running while the client did not read"
    assert growth < RSS_BOUND_KIB, growth


def test_write_buffer_marks_are_validated() -> None:
    cases: list[dict[str, Any]] = [
        {"write_buffer_high": -1},
        {"write_buffer_high": 10, "write_buffer_low": 20},
    ]
    for kwargs in cases:
        try:
            StdioAcpAgentTransport(**kwargs)
        except ValueError as exc:
            assert "write_buffer" in str(exc)
        else:
            raise AssertionError(f"{kwargs} accepted")


def test_a_producer_thread_blocks_while_the_outbound_buffer_is_paused_and_close_releases_it(
    figure: Figure,
) -> None:
    from tests.session.conftest import ScriptedTransport

    peer = ScriptedTransport()
    session = AcpSession(peer, role="agent", max_queued_writes=4)
    session.start()
    receiver: Any = peer.receiver  # what the stdio transport calls past its high-water mark
    try:
        receiver.on_write_paused()
        assert session.outbound_paused
        sent = threading.Event()

        def producer() -> None:
            session.send_notification("n", {"i": 1})
            sent.set()

        worker = threading.Thread(target=producer)
        worker.start()
        assert not sent.wait(0.2), "a producer thread was not held back"
        assert peer._sent.empty()  # (flush() would queue from this thread and wait as well)
        receiver.on_write_resumed()
        assert sent.wait(30.0) and peer.sent(5.0)["params"] == {"i": 1}
        worker.join(5.0)
        receiver.on_write_paused()
        worker = threading.Thread(target=producer)
        sent.clear()
        worker.start()
        assert not sent.wait(0.1)
        session.close()  # closing releases every waiting producer
        assert sent.wait(30.0)
        worker.join(5.0)
        figure("producer_waits", session.stats.producer_waits)
        assert session.stats.producer_waits == 2
    finally:
        session.close()


def test_loop_thread_producers_are_never_held_back_and_requests_wait_for_the_peer_to_read() -> None:
    """Issue 30: a request that arrives while the peer does not read is held (its answer is
    what would pile up) and answered, in order, once the buffer drained."""
    from tests.session.conftest import ScriptedTransport

    peer = ScriptedTransport()
    session = AcpSession(peer, role="agent")
    session.set_request_handler("x", lambda req: reactivex.just({"ok": req.id}))
    session.start()
    receiver: Any = peer.receiver
    try:
        receiver.on_write_paused()
        session.run_on_loop(lambda: session.send_notification("from_loop", {}))
        peer.inject({"jsonrpc": "2.0", "id": 1, "method": "x"})
        peer.inject({"jsonrpc": "2.0", "id": 2, "method": "x"})
        assert peer.sent(5.0)["method"] == "from_loop"
        assert wait_until(lambda: session.incoming_request_count == 2, 10.0)
        assert peer._sent.empty()  # held while paused (flush() would wait on the gate too)
        session.run_on_loop(receiver.on_write_resumed)
        assert peer.sent(5.0) == {"jsonrpc": "2.0", "id": 1, "result": {"ok": 1}}
        assert peer.sent(5.0) == {"jsonrpc": "2.0", "id": 2, "result": {"ok": 2}}
    finally:
        session.close()


REQUESTS = scaled(100_000, 2_000_000)


def test_an_agent_stops_reading_requests_while_the_client_leaves_its_answers_unread(
    figure: Figure,
) -> None:
    """Issue 17 item 5. A client writes cheap requests as fast as it can and reads nothing.
    Before: the agent kept reading and queued every answer (2M requests: +187 MiB). Now it stops
    reading stdin while stdout is over the high-water mark: its RSS stays flat and the client's
    writes block. Then the client reads: every request is answered, none dropped."""
    proc = spawn_agent(reference_agent_argv())
    assert proc.stdin is not None and proc.stdout is not None
    send_json(proc, {"id": "init", "method": "initialize", "params": {"protocolVersion": 1}})
    assert b'"init"' in proc.stdout.readline()
    idle = rss_kib(proc.pid)
    written = [0]

    def flood() -> None:
        assert proc.stdin is not None
        batch = b"".join(
            b'{"jsonrpc":"2.0","id":%d,"method":"x/nothing","params":{}}\n' % i
            for i in range(REQUESTS)
        )
        step = 64 * 1024
        with contextlib.suppress(BrokenPipeError):
            for start in range(0, len(batch), step):
                proc.stdin.write(batch[start : start + step])
                written[0] = start + step
            proc.stdin.flush()
            proc.stdin.close()

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    fd = proc.stdout.fileno()
    assert wait_until(lambda: _pipe_full(fd), 30.0), "the agent never filled its stdout pipe"
    peak = idle
    progress: list[int] = []

    def settled() -> bool:  # the client's writes stopped advancing: the agent stopped reading
        nonlocal peak
        peak = max(peak, rss_kib(proc.pid))
        progress.append(written[0])
        return len(progress) > 40 and progress[-1] == progress[-40]

    stopped_reading = wait_until(settled, 60.0) and writer.is_alive()
    growth = peak - idle
    answered = 0
    for line in proc.stdout:
        if b'"error"' in line:
            answered += 1
    writer.join(30.0)
    assert proc.wait(30.0) == 0
    proc.stdout.close()
    figure("requests", REQUESTS)
    figure("agent_rss_growth_while_answers_unread_kib", growth)
    figure("agent_stopped_reading", stopped_reading)
    assert answered == REQUESTS  # nothing dropped
    assert stopped_reading, "the agent read every request although nobody read its answers"
    assert growth < RSS_BOUND_KIB, growth
