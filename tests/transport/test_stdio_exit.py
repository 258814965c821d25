"""An agent that exits while it is still being spawned keeps its exit status (forced ordering).

asyncio may deliver ``process_exited()`` to the protocol before ``loop.subprocess_exec()`` has
returned the transport to its caller (an agent that exits at once, on a busy loop). The client
transport must read the exit status then, from the transport ``connection_made()`` gave it; it
used to have no transport yet, and reported "agent closed its stdout" with no exit code. Here a
loop holds ``subprocess_exec()`` back until the exit was delivered, every time.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest

from rxacp.transport import AgentParameters, StdioAcpClientTransport, TransportClosed

from ._support import Recorder

pytestmark = pytest.mark.selector_loop  # a subclass of asyncio.SelectorEventLoop


class _ExitSeenFirst(asyncio.SubprocessProtocol):
    """Wraps the transport's protocol; tells when ``process_exited()`` was delivered."""

    def __init__(self, inner: asyncio.SubprocessProtocol, events: list[str]) -> None:
        self.inner = inner
        self.events = events
        self.exited = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.inner.pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.inner.pipe_connection_lost(fd, exc)

    def process_exited(self) -> None:
        try:
            self.inner.process_exited()
        finally:  # (the old code raised here: it had no transport to ask for the status)
            self.events.append("process_exited")
            if not self.exited.done():
                self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class _ExitBeforeSpawnReturnsLoop(asyncio.SelectorEventLoop):
    """``subprocess_exec()`` returns only after the process's exit reached the protocol."""

    events: list[str]

    async def subprocess_exec(  # type: ignore[override]
        self, protocol_factory: Callable[[], asyncio.SubprocessProtocol], *args: Any, **kw: Any
    ) -> tuple[asyncio.SubprocessTransport, asyncio.SubprocessProtocol]:
        made: list[_ExitSeenFirst] = []

        def factory() -> asyncio.SubprocessProtocol:
            made.append(_ExitSeenFirst(protocol_factory(), self.events))
            return made[0]

        transport, _ = await super().subprocess_exec(factory, *args, **kw)
        await asyncio.wait_for(made[0].exited, 30)
        self.events.append("subprocess_exec returned")
        return transport, made[0].inner


def test_an_agent_that_exits_before_its_spawn_returns_reports_its_exit_code() -> None:
    async def main() -> TransportClosed:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, _ExitBeforeSpawnReturnsLoop)
        loop.events = []
        rec = Recorder().bind()
        transport = StdioAcpClientTransport(
            AgentParameters(sys.executable, ["-c", "import sys; sys.exit(7)"])
        )
        await transport.start(loop, rec)
        assert loop.events == ["process_exited", "subprocess_exec returned"]  # the race, forced
        try:
            return await rec.wait_closed(timeout=30)
        finally:
            await transport.close()

    with asyncio.Runner(loop_factory=_ExitBeforeSpawnReturnsLoop) as runner:
        info = runner.run(main())
    assert (info.reason, info.exit_code) == ("agent exited", 7)
