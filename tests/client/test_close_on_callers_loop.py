"""Closing an async client or agent whose connection runs on the caller's own asyncio loop."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from rxacp import AcpAgent
from rxacp.client import AcpClient
from rxacp.transport import AgentParameters, StdioAcpClientTransport, TransportClosed
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver

from ..transport._support import process_state

pytestmark = pytest.mark.timeout(30)

STUBBORN_AGENT = textwrap.dedent(
    """
    import json, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # needs SIGKILL
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {}}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    time.sleep(60)  # ignores the end of stdin
    """
)


def test_leaving_async_with_on_the_callers_loop_waits_until_the_agent_process_is_gone(
    tmp_path: Path,
) -> None:
    script = tmp_path / "stubborn_agent.py"
    script.write_text(STUBBORN_AGENT)
    params = AgentParameters(
        sys.executable, [str(script)], close_timeout=0.2, terminate_timeout=0.2
    )

    async def main() -> int:
        transport = StdioAcpClientTransport(params)
        client = AcpClient.async_(transport).event_loop(asyncio.get_running_loop()).build()
        async with client:
            await client.initialize()
            pid = transport.pid
        assert pid is not None
        return pid

    pid = asyncio.run(main())  # the loop is closed right after the block: nothing may be left
    assert process_state(pid) is None  # killed (stdin EOF and SIGTERM ignored) and reaped


class _SlowClosingTransport(AcpTransport):
    """A transport whose close takes a few loop turns (like reaping a process)."""

    def __init__(self) -> None:
        self.closed = False

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self.receiver = receiver

    def send(self, frame: Frame) -> None:
        pass

    async def close(self) -> None:
        await asyncio.sleep(0.05)
        self.closed = True
        self.receiver.on_closed(TransportClosed("closed"))


def test_leaving_async_with_an_agent_on_the_callers_loop_waits_until_its_transport_closed() -> None:
    transport = _SlowClosingTransport()

    async def main() -> bool:
        agent = AcpAgent.async_(transport).event_loop(asyncio.get_running_loop()).build()
        async with agent:
            await asyncio.sleep(0)
        return transport.closed

    assert asyncio.run(main()) is True
