"""The CLI's building blocks: the wire log and the update renderer (the workspace file system
is rxacp.client.WorkspaceFileSystem, tested in tests/reliability/test_workspace_fs.py)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from rxacp.cli.render import Style, UpdateRenderer
from rxacp.schema import SessionNotification
from rxacp.transport import WireTapTransport
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed


class _Inner(AcpTransport):
    def __init__(self) -> None:
        self.sent: list[Frame] = []
        self.receiver: FrameReceiver | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        self.receiver = receiver

    def send(self, frame: Frame) -> None:
        self.sent.append(frame)

    async def close(self) -> None:
        if self.receiver is not None:
            self.receiver.on_closed(TransportClosed("closed"))


class _Receiver(FrameReceiver):
    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.closed = False

    def on_frame(self, frame: Frame) -> None:
        self.frames.append(frame)

    def on_frame_too_large(self, size: int) -> None:
        pass

    def on_closed(self, info: TransportClosed) -> None:
        self.closed = True


def test_wire_log_passes_frames_through_unchanged_and_logs_each_as_a_json_line(
    tmp_path: Path,
) -> None:
    log = tmp_path / "w.jsonl"
    inner, receiver = _Inner(), _Receiver()
    wire = WireTapTransport(inner, log)

    async def scenario() -> None:
        await wire.start(asyncio.get_running_loop(), receiver)
        wire.send(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}')
        assert inner.receiver is not None
        inner.receiver.on_frame(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        inner.receiver.on_frame(b"not json")
        await wire.close()

    asyncio.run(scenario())
    assert inner.sent == [b'{"jsonrpc":"2.0","id":1,"method":"initialize"}']
    assert receiver.frames[-1] == b"not json" and receiver.closed
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["direction"] for e in entries] == ["out", "in", "in"]
    assert entries[0]["message"]["method"] == "initialize"
    assert entries[2]["raw"] == "not json"
    assert (wire.sent, wire.received) == (1, 2)


def _note(update: dict[str, Any]) -> SessionNotification:
    return SessionNotification.of("s", update)


def test_renderer_streams_text_inline_and_puts_the_rest_on_the_side() -> None:
    out, side = io.StringIO(), io.StringIO()
    render = UpdateRenderer(out, side, Style(False))
    for word in ("Hello ", "there"):
        render(
            _note(
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": word}}
            )
        )
    render(
        _note(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "Search",
                "status": "pending",
            }
        )
    )
    render(
        _note(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "Step", "priority": "low", "status": "completed"}],
            }
        )
    )
    render(_note({"sessionUpdate": "something_new", "x": 1}))
    assert out.getvalue() == "Hello there"  # no line break inserted into another stream
    render.end()
    assert out.getvalue() == "Hello there\n"
    assert "⚙ tool Search [pending]" in side.getvalue()
    assert "✔ Step" in side.getvalue()
    assert "[something_new]" in side.getvalue()
    assert (render.message_chunks, render.message_text) == (2, "Hello there")
