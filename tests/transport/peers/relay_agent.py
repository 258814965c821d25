"""Test peer: relay frames between this process's stdio and a Unix socket (path in argv[1]).

Both ends use StdioAcpAgentTransport (stdio with the stdout guard, the socket with
close_streams=True); when either end closes, the other is closed and the process exits.
Used to build an in-process (StdioAcpClientTransport, StdioAcpAgentTransport) pair.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from rxacp.transport import FrameReceiver, StdioAcpAgentTransport, TransportClosed
from rxacp.transport.base import Frame


class _Forward(FrameReceiver):
    def __init__(self, done: asyncio.Future[None]) -> None:
        self.target: StdioAcpAgentTransport | None = None
        self.done = done

    def on_frame(self, frame: Frame) -> None:
        assert self.target is not None
        self.target.send(frame)

    def on_frame_too_large(self, size: int) -> None:
        print(f"relay: dropped a frame of {size} bytes", file=sys.stderr)

    def on_closed(self, info: TransportClosed) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def main(path: str) -> None:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    fd = sock.detach()
    net = StdioAcpAgentTransport(
        open(fd, "rb", buffering=0),  # noqa: SIM115
        open(os.dup(fd), "wb", buffering=0),  # noqa: SIM115
        guard_stdout=False,
        close_streams=True,
    )
    stdio = StdioAcpAgentTransport()
    done: asyncio.Future[None] = loop.create_future()
    to_net, to_stdio = _Forward(done), _Forward(done)
    to_net.target, to_stdio.target = net, stdio
    await net.start(loop, to_stdio)
    await stdio.start(loop, to_net)
    await done
    await asyncio.wait_for(asyncio.gather(net.drain(), stdio.drain()), 10)
    await net.close()
    await stdio.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
