"""The CLI's building blocks: the confined file system, the wire log and the update renderer."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from rxacp.cli.fs import ConfinedFileSystem
from rxacp.cli.render import Style, UpdateRenderer
from rxacp.cli.wirelog import WireLogTransport
from rxacp.errors import AcpProtocolException
from rxacp.schema import ReadTextFileRequest, SessionNotification, WriteTextFileRequest
from rxacp.transport.base import AcpTransport, Frame, FrameReceiver, TransportClosed


def read(fs: ConfinedFileSystem, path: str, **kw: Any) -> str:
    return fs.read_text_file(ReadTextFileRequest(session_id="s", path=path, **kw)).content


def test_confined_fs_reads_inside_and_honours_line_and_limit(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nc\nd\n")
    fs = ConfinedFileSystem(str(tmp_path))
    assert read(fs, f"{tmp_path}/f.txt") == "a\nb\nc\nd\n"
    assert read(fs, f"{tmp_path}/f.txt", line=2, limit=2) == "b\nc\n"


@pytest.mark.parametrize("path", ["relative.txt", "/etc/passwd", "{root}/../escape.txt"])
def test_confined_fs_refuses_relative_and_outside_paths_with_invalid_params(
    tmp_path: Path, path: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    fs = ConfinedFileSystem(str(root))
    with pytest.raises(AcpProtocolException) as info:
        read(fs, path.format(root=root))
    assert info.value.code == -32602


def test_confined_fs_refuses_a_symlink_that_escapes_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret").write_text("x")
    os.symlink(tmp_path / "secret", root / "link")
    with pytest.raises(AcpProtocolException) as info:
        read(ConfinedFileSystem(str(root)), f"{root}/link")
    assert info.value.code == -32602


def test_confined_fs_missing_file_is_resource_not_found(tmp_path: Path) -> None:
    with pytest.raises(AcpProtocolException) as info:
        read(ConfinedFileSystem(str(tmp_path)), f"{tmp_path}/missing")
    assert info.value.code == -32002


def test_confined_fs_writes_inside_and_refuses_outside(tmp_path: Path) -> None:
    fs = ConfinedFileSystem(str(tmp_path / "root"))
    (tmp_path / "root").mkdir()
    fs.write_text_file(
        WriteTextFileRequest(session_id="s", path=f"{tmp_path}/root/n.txt", content="1")
    )
    assert (tmp_path / "root" / "n.txt").read_text() == "1"
    with pytest.raises(AcpProtocolException):
        fs.write_text_file(
            WriteTextFileRequest(session_id="s", path=f"{tmp_path}/n.txt", content="1")
        )
    assert not (tmp_path / "n.txt").exists()


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


class _Receiver:
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
    wire = WireLogTransport(inner, log)

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
    assert out.getvalue() == "Hello there\n"
    assert "⚙ tool Search [pending]" in side.getvalue()
    assert "✔ Step" in side.getvalue()
    assert "[something_new]" in side.getvalue()
    assert (render.message_chunks, render.message_text) == (2, "Hello there")
