"""A client stdio start that fails after the spawn ends the agent and says why.

``StdioAcpClientTransport.start`` spawns the agent, then connects its pipes. When a step after
the spawn failed (here: the loop cannot connect the stdout pipe, as when the process is out of
file descriptors), the raw ``OSError`` escaped and the agent kept running, orphaned; uvloop's
``loop.close()`` waits for such a process forever. Now the agent is ended as by ``close()``
(bounded) and the error is an ``AcpConnectionException`` naming the agent and the cause.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from rxacp.errors import AcpConnectionException
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from ._support import Recorder, process_state

pytestmark = pytest.mark.selector_loop  # a subclass of asyncio.SelectorEventLoop

_SLEEPER = "import time; time.sleep(120)"
"""An agent that would outlive the test by far if nobody ended it."""


class _NoPipesLoop(asyncio.SelectorEventLoop):
    """Spawns processes (asyncio connects their pipes), then cannot connect the transport's
    own stdout pipe."""

    async def connect_read_pipe(self, protocol_factory: Any, pipe: Any) -> Any:
        if type(protocol_factory()).__module__ == StdioAcpClientTransport.__module__:
            raise OSError(24, "Too many open files (simulated)")
        return await super().connect_read_pipe(protocol_factory, pipe)


def test_a_start_that_fails_after_the_spawn_ends_the_agent_and_names_the_cause() -> None:
    transport = StdioAcpClientTransport(
        AgentParameters(sys.executable, ["-c", _SLEEPER], close_timeout=0.2)
    )
    rec: list[Recorder] = []

    async def main() -> None:
        rec.append(Recorder().bind())
        await transport.start(asyncio.get_running_loop(), rec[0])

    with asyncio.Runner(loop_factory=_NoPipesLoop) as runner:
        with pytest.raises(AcpConnectionException) as caught:
            runner.run(main())
        pid = transport.pid
        assert pid is not None
        assert process_state(pid) in (None, "Z")  # ended (a zombie at most until reaped)
        assert transport.exit_code is not None and transport.exit_code < 0  # ended by a signal
        runner.run(transport.close())  # idempotent after the failed start
    message = str(caught.value)
    assert "cannot connect to agent" in message and "Too many open files" in message
    assert isinstance(caught.value.__cause__, OSError)
    assert rec[0].closed == []  # the failure is the start's exception, not a second report
