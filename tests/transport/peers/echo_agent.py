"""Test peer: an agent on StdioAcpAgentTransport that echoes every frame back.

Frames that are JSON objects with a "cmd" key do something first:
  {"cmd": "print", "text": T}     print(T) (the stdout guard must send it to stderr), then echo
  {"cmd": "stderr", "mb": N}      a thread writes N MiB of text lines to stderr, then sends
                                  {"stderr_done": N} (frames keep being echoed meanwhile)
  {"cmd": "exit", "code": C}      exit immediately with status C
Oversized lines (cap from $ECHO_MAX_FRAME_BYTES) are answered with {"too_large": size}.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from rxacp.transport import (
    DEFAULT_MAX_FRAME_BYTES,
    FrameReceiver,
    StdioAcpAgentTransport,
    TransportClosed,
)
from rxacp.transport.base import Frame


def _spam_stderr(
    mb: int, loop: asyncio.AbstractEventLoop, transport: StdioAcpAgentTransport
) -> None:
    line = ("e" * 1023 + "\n").encode()
    chunk = line * 1024  # 1 MiB
    err = sys.stderr.buffer
    for _ in range(mb):
        err.write(chunk)
    err.flush()
    loop.call_soon_threadsafe(transport.send, json.dumps({"stderr_done": mb}).encode())


async def main() -> None:
    loop = asyncio.get_running_loop()
    cap = int(os.environ.get("ECHO_MAX_FRAME_BYTES", DEFAULT_MAX_FRAME_BYTES))
    transport = StdioAcpAgentTransport(max_frame_bytes=cap)
    done: asyncio.Future[TransportClosed] = loop.create_future()

    class Receiver(FrameReceiver):
        def on_frame(self, frame: Frame) -> None:
            assert isinstance(frame, bytes)  # a byte transport
            if frame.startswith(b'{"cmd"'):
                msg = json.loads(frame)
                if msg["cmd"] == "print":
                    print(msg["text"])
                    sys.stdout.flush()
                elif msg["cmd"] == "stderr":
                    threading.Thread(
                        target=_spam_stderr, args=(msg["mb"], loop, transport), daemon=True
                    ).start()
                elif msg["cmd"] == "exit":
                    sys.stderr.flush()
                    os._exit(msg["code"])
            transport.send(frame)

        def on_frame_too_large(self, size: int) -> None:
            transport.send(json.dumps({"too_large": size}).encode())

        def on_closed(self, info: TransportClosed) -> None:
            if not done.done():
                done.set_result(info)

    await transport.start(loop, Receiver())
    print("echo agent started", file=sys.stderr, flush=True)
    await done
    await transport.drain()
    await transport.close()


if __name__ == "__main__":
    asyncio.run(main())
