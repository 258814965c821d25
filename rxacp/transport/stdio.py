"""stdio transports: a client spawning an agent process (and, re-exported, the agent side).

:class:`StdioAcpClientTransport` launches the agent (:class:`AgentParameters`) in a new process
group, writes frames to its stdin, reads frames from its stdout with :class:`LineFramer` (no
64 KiB line limit), always drains its stderr (keeping a bounded tail for error reports), and on
:meth:`~StdioAcpClientTransport.close` escalates stdin close → SIGTERM → SIGKILL over the whole
process group, reaping everything it started, and (Linux) also ends the descendants that had
left the group (``setsid()``), found below the agent before stdin is closed.
:class:`StdioAcpAgentTransport` (an agent's own stdio) lives in
:mod:`rxacp.transport.stdio_agent` and is re-exported here. Ending the process tree is
:mod:`rxacp.transport._reaping`, the stderr tail :mod:`rxacp.transport._stderr`.

This module is *not* responsible for JSON, JSON-RPC ids or ACP semantics: a frame is one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from typing import cast

from rxacp.errors import AcpConnectionException, exception_text
from rxacp.transport._reaping import ProcessGroup, wait_done
from rxacp.transport._stderr import StderrCollector
from rxacp.transport.agent_parameters import AgentParameters, AgentParametersBuilder
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed
from rxacp.transport.cork import CorkedWrites
from rxacp.transport.flow import WriteFlow
from rxacp.transport.framing import (
    ClosedOnce,
    LineFramer,
    bound_reads,
    call_safely,
    frame_to_line,
)
from rxacp.transport.stdio_agent import StdioAcpAgentTransport

__all__ = [
    "AgentParameters",
    "AgentParametersBuilder",
    "StdioAcpAgentTransport",
    "StdioAcpClientTransport",
]

_log = logging.getLogger("rxacp.transport.stdio")

_EXIT_CODE_WAIT = 1.0  # after stdout EOF, how long to wait for the exit status
_EXIT_STDOUT_GRACE = 0.3  # after exit, how long to wait for stdout EOF (grandchild holds it)
_EXIT_STDOUT_MAX = 5.0  # ... at most, while data keeps arriving


class _StdoutProtocol(asyncio.Protocol):
    """Reads the agent's stdout: a pipe of our own (``os.pipe()`` + ``connect_read_pipe``).

    asyncio's subprocess transport defers every ``pipe_data_received`` to a later turn of the
    loop (one extra loop iteration per read: ~10 % of a round trip's client CPU). Reading the
    pipe with a plain read-pipe transport hands each chunk over in the read callback itself;
    the order data → end of stream is the pipe transport's own.
    """

    def __init__(self, owner: StdioAcpClientTransport) -> None:
        self._owner = owner

    def data_received(self, data: bytes) -> None:
        self._owner._on_pipe_data(1, data)

    def eof_received(self) -> bool | None:
        return None  # close the pipe; connection_lost reports the end

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._on_pipe_lost(1, exc)


class _ClientProtocol(asyncio.SubprocessProtocol):
    """Routes subprocess pipe events to the owning :class:`StdioAcpClientTransport`."""

    def __init__(self, owner: StdioAcpClientTransport) -> None:
        self._owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Known before subprocess_exec returns: an agent that exits at once reports its exit
        # (process_exited) inside that call, and its status must not be lost.
        self._owner._transport = cast(asyncio.SubprocessTransport, transport)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self._owner._on_pipe_data(fd, cast(bytes, data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._owner._on_pipe_lost(fd, exc)

    def process_exited(self) -> None:
        self._owner._on_process_exited()

    def pause_writing(self) -> None:
        self._owner._flow.pause_writing()

    def resume_writing(self) -> None:
        self._owner._flow.resume_writing()


class StdioAcpClientTransport(ClosedOnce, CorkedWrites, AcpTransport):
    """Client side of stdio: spawn the agent and speak newline-delimited frames over its pipes.

    The agent runs in a new session/process group so :meth:`close` can terminate it together
    with anything it started. ``receiver.on_closed`` gets the exit code and the last lines of
    stderr when the agent goes away. Frames sent before :meth:`start` has spawned the process
    are written right after.

    Back-pressure: when more than 256 KiB wait to be written to the agent's stdin (the agent
    is not reading), the receiver's :meth:`~FrameReceiver.on_write_paused` is called, and
    :meth:`~FrameReceiver.on_write_resumed` once stdin drained: the engine then holds the
    agent's requests, its blocking handlers wait to start, and reading stops once too many
    requests are held (``docs/reliability.md``).
    """

    def __init__(self, params: AgentParameters) -> None:
        if not isinstance(params, AgentParameters):
            raise TypeError(f"expected AgentParameters, got {type(params).__name__}")
        self._params = params
        self._framer = LineFramer(params.max_frame_bytes)
        self._stderr = StderrCollector(params.on_stderr_line)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._receiver: FrameReceiver | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._pid: int | None = None
        # stdin's pause/resume, passed on to the receiver (the engine holds the agent's
        # requests while the agent does not read; reading goes on: see _on_write_paused)
        self._flow = WriteFlow(self._on_write_paused, self._on_write_resumed)
        self._exited: asyncio.Future[int] | None = None
        self._stdout_eof: asyncio.Future[None] | None = None
        self._stderr_eof: asyncio.Future[None] | None = None
        self._stdin_lost = False
        self._early: list[bytes] = []  # frames sent before the process was spawned
        self._init_cork()
        self._closing = False  # close() called or the stream ended: drop sends
        self._closed_reported = False
        self._close_task: asyncio.Task[None] | None = None
        self._finish_task: asyncio.Task[None] | None = None
        self._exit_timer: asyncio.TimerHandle | None = None
        self._exit_deadline = 0.0
        self._data_since_exit = False
        self._stdout: asyncio.ReadTransport | None = None
        self._reading_paused = False

    @property
    def pid(self) -> int | None:
        """Process id of the agent (also its process-group id), once started."""
        return self._pid

    @property
    def exit_code(self) -> int | None:
        """The agent's exit status once it exited (negative: killed by that signal)."""
        exited = self._exited
        return exited.result() if exited is not None and exited.done() else None

    @property
    def stderr_tail(self) -> str | None:
        """The last lines the agent wrote to stderr so far (``None``: nothing yet). Read it on
        the connection's loop (it is what ``AcpConnectionException.stderr_tail`` reports)."""
        return self._stderr.tail()

    @property
    def params(self) -> AgentParameters:
        """The launch parameters."""
        return self._params

    def started_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop :meth:`start` was called with (``None`` before it)."""
        return self._loop

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Spawn the agent; raises :class:`AcpConnectionException` if it cannot be started."""
        if self._loop is not None:
            raise RuntimeError("StdioAcpClientTransport.start() called twice")
        self._loop = loop
        self._receiver = receiver
        self._exited = loop.create_future()
        self._stdout_eof = loop.create_future()
        self._stderr_eof = loop.create_future()
        p = self._params
        out_r, out_w = os.pipe()  # stdout: read by our own pipe transport (_StdoutProtocol)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: _ClientProtocol(self),
                p.command,
                *p.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=out_w,
                stderr=asyncio.subprocess.PIPE,
                env=p.child_env(),
                cwd=p.cwd,
                start_new_session=True,
            )
        except BaseException as exc:
            os.close(out_r)
            if not isinstance(exc, OSError | ValueError):
                raise
            self._closing = self._closed_reported = True
            raise AcpConnectionException(f"cannot start agent {p.command!r}: {exc}") from exc
        finally:
            os.close(out_w)  # the agent has its copy: EOF comes when it (and its children) close it
        self._transport = transport
        self._pid = transport.get_pid()
        try:
            await self._connect(loop, transport, out_r)
        except BaseException as exc:
            # the agent must not outlive a start that failed (and a loop such as uvloop would
            # wait for it when closed): end it as close() does, then report why
            await self._abort_start()
            if isinstance(exc, Exception) and not isinstance(exc, AcpConnectionException):
                raise AcpConnectionException(
                    f"cannot connect to agent {p.command!r}: {exception_text(exc)}"
                ) from exc
            raise
        _log.debug("started agent %r pid=%s", p.command, self._pid)

    async def _connect(
        self, loop: asyncio.AbstractEventLoop, transport: asyncio.SubprocessTransport, out_r: int
    ) -> None:
        """Connect the spawned agent's pipes: stdout (``out_r``), stderr and stdin."""
        pipe = open(out_r, "rb", buffering=0)  # noqa: SIM115, ASYNC230 - a pipe, not a disk file
        try:
            stdout, _ = await loop.connect_read_pipe(lambda: _StdoutProtocol(self), pipe)
        except BaseException:
            pipe.close()
            raise
        bound_reads(stdout)
        self._stdout = stdout
        if self._reading_paused:
            stdout.pause_reading()
        if self._close_task is not None:  # close() ran while the pipe was being connected
            stdout.close()
        bound_reads(transport.get_pipe_transport(2))
        # duck-typed: uvloop's pipe transports do not subclass asyncio.WriteTransport
        stdin = cast("asyncio.WriteTransport | None", transport.get_pipe_transport(0))
        if stdin is None:  # a loop that did not make the pipe it was asked for
            raise AcpConnectionException(
                f"agent {self._params.command!r} started without a stdin pipe"
            )
        stdin.set_write_buffer_limits(high=256 * 1024, low=0)
        self._stdin = stdin
        early, self._early = self._early, []
        for line in early:
            stdin.write(line)

    async def _abort_start(self) -> None:
        """End the agent whose start failed after it was spawned: :meth:`close`, without the
        ``on_closed`` report (the failed start itself reports it)."""
        self._closed_reported = True
        with contextlib.suppress(Exception):
            await self.close()

    def send(self, frame: Frame) -> None:
        """Write ``frame`` + newline to the agent's stdin (buffered by asyncio, never blocks)."""
        line = frame_to_line(frame)
        if self._closing or self._stdin_lost:
            return
        if self._stdin is None:  # before start() finished spawning: written right after
            self._early.append(line)
        elif self._hold(line):
            pass
        elif not self._stdin.is_closing():
            self._stdin.write(line)

    def pause_reading(self) -> None:
        """Stop reading the agent's stdout (the client's consumers fell behind); the agent's
        writes then block once the OS pipe is full."""
        self._reading_paused = True
        stdout = self._stdout
        if stdout is not None and not stdout.is_closing():
            stdout.pause_reading()

    def resume_reading(self) -> None:
        """Read the agent's stdout again."""
        self._reading_paused = False
        stdout = self._stdout
        if stdout is not None and not stdout.is_closing():
            stdout.resume_reading()

    def _on_write_paused(self) -> None:
        """stdin is over its high-water mark (the agent is not reading): tell the receiver.

        Reading the agent's stdout goes on: an agent that stops reading stdin while its own
        stdout is full (rxacp's does) would otherwise wait for this client while it waits for
        the agent. The engine holds the agent's *requests* instead (their answers are what
        piles up) and stops reading only once too many are held.
        """
        receiver = self._receiver
        if receiver is not None:
            call_safely(receiver.on_write_paused)

    def _on_write_resumed(self) -> None:
        receiver = self._receiver
        if receiver is not None:
            call_safely(receiver.on_write_resumed)

    def _write_corked(self, data: bytes) -> None:
        stdin = self._stdin
        if stdin is not None and not self._stdin_lost and not stdin.is_closing():
            stdin.write(data)

    async def drain(self) -> None:
        """Wait (bounded by ``close_timeout`` + ``terminate_timeout``) until stdin is flushed."""
        if self._stdin is None:
            return
        if not self._cork_depth:
            self._flush_corked()
        bound = max(1.0, self._params.close_timeout + self._params.terminate_timeout)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drain(), bound)

    async def _drain(self) -> None:
        stdin = self._stdin
        assert stdin is not None
        if not self._stdin_lost:
            await self._flow.drain(stdin)

    async def close(self) -> None:
        """Close stdin, then SIGTERM and SIGKILL the process group as needed; reap; report."""
        if self._close_task is None:
            self._uncork_all()
            self._closing = True
            if self._loop is None or self._transport is None:  # never started, or spawn failed
                self._closed_reported = True
                return
            self._close_task = self._loop.create_task(self._close())
        await asyncio.shield(self._close_task)

    # -- process lifecycle -------------------------------------------------------------------

    async def _close(self) -> None:
        p = self._params
        assert self._exited is not None
        if self._finish_task is not None and not self._finish_task.done():
            self._finish_task.cancel()
        # Descendants that left the process group (setsid(), setpgid()) are found now, while
        # the agent still runs and they still hang below it: once it exits they are orphans.
        group = ProcessGroup(self._pid) if self._pid is not None else None
        escaped = group.escaped_descendants() if group is not None else {}
        if self._stdin is not None:
            self._stdin.close()
        exited = await wait_done(self._exited, p.close_timeout)
        if group is not None and (not exited or group.alive()):
            group.signal(signal.SIGTERM)
            await group.wait_gone(self._exited, p.terminate_timeout)
            if group.signal(signal.SIGKILL):
                await group.wait_gone(self._exited, 2.0)  # SIGKILL is delivered asynchronously
        if escaped:
            await ProcessGroup.end_escaped(escaped, p.terminate_timeout)
        if self._transport is not None:
            self._transport.close()
        if self._stdout is not None:
            self._stdout.close()
        if self._stderr_eof is not None:
            await wait_done(self._stderr_eof, 0.2)
        code = self._exited.result() if self._exited.done() else None
        self._report(TransportClosed("closed", exit_code=code, stderr_tail=self._stderr.tail()))

    # -- protocol callbacks ------------------------------------------------------------------

    def _on_pipe_data(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._data_since_exit = True
            receiver = self._receiver
            if receiver is None or self._closing:
                return
            self._deliver_corked(self._framer, data, receiver)
        elif fd == 2:
            self._stderr.feed(data)

    def _on_pipe_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            self._stdin_lost = True
            self._flow.lost()
        elif fd == 1:
            receiver = self._receiver
            if receiver is not None and not self._closing:
                self._framer.deliver(b"", receiver, eof=True)
            _set(self._stdout_eof)
            self._begin_finish("agent closed its stdout", exc)
        elif fd == 2:
            self._stderr.feed(b"", final=True)
            _set(self._stderr_eof)

    def _on_process_exited(self) -> None:
        assert self._transport is not None and self._loop is not None
        code = self._transport.get_returncode()
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(code if code is not None else -1)
        if self._closing or self._stdout_eof is None or self._stdout_eof.done():
            return
        # stdout may stay open if a grandchild inherited it: give it a short grace period.
        self._exit_deadline = self._loop.time() + _EXIT_STDOUT_MAX
        self._data_since_exit = False
        self._exit_timer = self._loop.call_later(_EXIT_STDOUT_GRACE, self._exit_grace_over)

    def _exit_grace_over(self) -> None:
        assert self._loop is not None
        if self._closing or self._finish_task is not None:
            return
        if self._reading_paused:  # unread output is waiting in the pipe: not the end yet
            self._exit_deadline = self._loop.time() + _EXIT_STDOUT_MAX
            self._exit_timer = self._loop.call_later(_EXIT_STDOUT_GRACE, self._exit_grace_over)
            return
        if self._data_since_exit and self._loop.time() < self._exit_deadline:
            self._data_since_exit = False
            self._exit_timer = self._loop.call_later(_EXIT_STDOUT_GRACE, self._exit_grace_over)
            return
        self._begin_finish("agent exited", None)

    def _begin_finish(self, reason: str, exc: Exception | None) -> None:
        if self._closing or self._finish_task is not None or self._loop is None:
            return
        if self._exit_timer is not None:
            self._exit_timer.cancel()
        self._finish_task = self._loop.create_task(self._finish(reason, exc))

    async def _finish(self, reason: str, exc: Exception | None) -> None:
        """The agent went away on its own: collect exit code and stderr (bounded), report."""
        assert self._exited is not None and self._stderr_eof is not None and self._loop is not None
        deadline = self._loop.time() + _EXIT_CODE_WAIT
        await wait_done(self._exited, _EXIT_CODE_WAIT)
        await wait_done(self._stderr_eof, max(0.0, min(0.2, deadline - self._loop.time())))
        if self._closing:
            return
        self._closing = True
        code = self._exited.result() if self._exited.done() else None
        if code is not None and reason == "agent closed its stdout":
            reason = "agent exited"
        self._report(
            TransportClosed(reason, error=exc, exit_code=code, stderr_tail=self._stderr.tail())
        )


def _set(fut: asyncio.Future[None] | None) -> None:
    if fut is not None and not fut.done():
        fut.set_result(None)
