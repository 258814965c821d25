"""WorkspaceFileSystem: fs/* handlers confined to the workspace roots (security helper)."""

from __future__ import annotations

import contextlib
import os
import random
import threading
from pathlib import Path
from typing import Any

import pytest
import reactivex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rxacp.client import AcpClient, WorkspaceFileSystem
from rxacp.errors import AcpProtocolException
from rxacp.schema import ReadTextFileRequest, WriteTextFileRequest
from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import Figure, scaled

SECRET = "TOP-SECRET-OUTSIDE"


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    """root/ with files and links, plus root-evil/ and outside/ holding secrets."""
    root = tmp_path / "root"
    evil = tmp_path / "root-evil"
    outside = tmp_path / "outside"
    for d in (root / "sub", evil, outside):
        d.mkdir(parents=True)
    (root / "a.txt").write_text("one\ntwo\r\nthree\nfour")
    (root / "sub" / "b.txt").write_text("inside b\n")
    (evil / "secret.txt").write_text(SECRET)
    (outside / "secret.txt").write_text(SECRET)
    (root / "link_out").symlink_to(outside / "secret.txt")
    (root / "link_dir_out").symlink_to(outside)
    (root / "link_evil").symlink_to(evil)
    (root / "link_in").symlink_to(root / "a.txt")
    (root / "dangling_out").symlink_to(outside / "new.txt")
    (root / "loop").symlink_to(root / "loop")
    return {"tmp": tmp_path, "root": root, "evil": evil, "outside": outside}


def read(fs: WorkspaceFileSystem, path: str, **kw: Any) -> str:
    return fs.read_text_file(ReadTextFileRequest(session_id="s", path=path, **kw)).content


def code_of(fn: Any) -> int:
    with pytest.raises(AcpProtocolException) as info:
        fn()
    return info.value.code


def test_line_is_one_based_and_limit_counts_lines_keeping_their_terminators(
    workspace: dict[str, Path],
) -> None:
    fs = WorkspaceFileSystem(workspace["root"])
    a = str(workspace["root"] / "a.txt")
    assert read(fs, a) == "one\ntwo\r\nthree\nfour"
    assert read(fs, a, line=1, limit=1) == "one\n"
    assert read(fs, a, line=2, limit=2) == "two\r\nthree\n"
    assert read(fs, a, line=3) == "three\nfour"
    assert read(fs, a, limit=0) == ""
    assert read(fs, a, line=99) == ""
    assert code_of(lambda: read(fs, a, line=0)) == -32602
    # A negative limit is already refused by the model (uint32, schema 2.4.0); the file system
    # refuses it too when handed an unvalidated request.
    with pytest.raises(ValidationError, match="limit"):
        ReadTextFileRequest(session_id="s", path=a, limit=-1)
    unchecked = ReadTextFileRequest.model_construct(session_id="s", path=a, limit=-1)
    assert code_of(lambda: fs.read_text_file(unchecked)) == -32602


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("a.txt", -32602),  # relative
        ("", -32602),
        ("{root}/../root/a.txt", -32602),  # '..' refused even when it resolves inside
        ("{root}/sub/../../outside/secret.txt", -32602),
        ("{root}/a.txt\x00.png", -32602),
        ("{evil}/secret.txt", -32602),  # sibling prefix /root-evil
        ("{root}-evil/secret.txt", -32602),
        ("{root}/link_out", -32602),  # symlink escapes
        ("{root}/link_dir_out/secret.txt", -32602),
        ("{root}/link_evil/secret.txt", -32602),
        ("{root}/loop", -32602),
        ("{root}/sub", -32602),  # a directory
        ("{root}/missing.txt", -32002),
        ("{tmp}/outside/missing.txt", -32602),  # outside wins over missing: no probing
    ],
)
def test_hostile_or_bad_paths_are_refused_with_a_typed_error(
    workspace: dict[str, Path], path: str, code: int
) -> None:
    fs = WorkspaceFileSystem([workspace["root"]])
    p = path.format(root=workspace["root"], evil=workspace["evil"], tmp=workspace["tmp"])
    assert code_of(lambda: read(fs, p)) == code


def test_a_link_that_stays_inside_the_root_is_followed(workspace: dict[str, Path]) -> None:
    fs = WorkspaceFileSystem(str(workspace["root"]))
    assert read(fs, str(workspace["root"] / "link_in")).startswith("one")


def test_writes_create_files_and_parents_inside_and_never_follow_links_out(
    workspace: dict[str, Path],
) -> None:
    root, outside = workspace["root"], workspace["outside"]
    fs = WorkspaceFileSystem([root])

    def write(path: str, content: str = "x") -> None:
        fs.write_text_file(WriteTextFileRequest(session_id="s", path=path, content=content))

    write(str(root / "new" / "deep" / "c.txt"), "héllo\n")
    assert (root / "new" / "deep" / "c.txt").read_text() == "héllo\n"
    write(str(root / "a.txt"), "short")
    assert (root / "a.txt").read_text() == "short"  # truncated, not overwritten in place
    for bad in ("link_out", "dangling_out", "link_dir_out/x.txt", "link_evil/secret.txt"):
        assert code_of(lambda b=bad: write(str(root / b))) == -32602
    assert code_of(lambda: write(str(root))) == -32602
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET
    ro = WorkspaceFileSystem([root], read_only=True)
    assert (
        code_of(
            lambda: ro.write_text_file(
                WriteTextFileRequest(session_id="s", path=str(root / "z"), content="")
            )
        )
        == -32602
    )


def test_a_path_swapped_for_a_link_after_the_check_is_refused_at_open(
    workspace: dict[str, Path],
) -> None:
    root, outside = workspace["root"], workspace["outside"]
    fs = WorkspaceFileSystem([root])
    target = root / "swap.txt"
    target.write_text("inside")
    real = fs.resolve(str(target))
    target.unlink()
    target.symlink_to(outside / "secret.txt")  # the race: swapped after resolve()
    assert code_of(lambda: fs._open(str(target), real, os.O_RDONLY)) == -32602


def test_bad_roots_are_rejected_with_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="absolute"):
        WorkspaceFileSystem("relative/dir")
    with pytest.raises(ValueError, match="existing directory"):
        WorkspaceFileSystem(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="at least one"):
        WorkspaceFileSystem([])


def test_several_roots_are_each_served(workspace: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("other")
    fs = WorkspaceFileSystem([workspace["root"], other])
    assert read(fs, str(other / "o.txt")) == "other"
    assert read(fs, str(workspace["root"] / "sub" / "b.txt")) == "inside b\n"


# ---------------------------------------------------------------------------- over the wire
def _known_session(client: Any) -> None:
    """``session/new`` (answered ``s``): the client refuses requests for sessions it never
    created (issue 30)."""
    created = client.new_session({"cwd": "/", "mcpServers": []})
    if isinstance(created, reactivex.Observable):
        created = created.run()
    assert created.session_id == "s"


@pytest.mark.parametrize("style", ["sync", "async"])
def test_install_serves_both_builders_over_the_wire_with_the_right_codes(
    workspace: dict[str, Path], style: str
) -> None:
    root = workspace["root"]
    fs = WorkspaceFileSystem([root])
    pair = InMemoryTransportPair.create()
    builder: Any = (AcpClient.sync if style == "sync" else AcpClient.async_)(pair.client_transport)
    client = fs.install(builder).build()
    agent = AcpSession(pair.agent_transport, role="agent")
    try:
        agent.set_request_handler("session/new", lambda _req: reactivex.just({"sessionId": "s"}))
        client.session.start()
        agent.start()
        _known_session(client)

        def call(method: str, params: dict[str, Any]) -> Any:
            from rxacp.session.blocking import wait_for

            return wait_for(agent.send_request(method, {"sessionId": "s", **params}), 30.0)

        assert call("fs/read_text_file", {"path": str(root / "a.txt"), "line": 2, "limit": 1}) == {
            "content": "two\r\n"
        }
        call("fs/write_text_file", {"path": str(root / "w.txt"), "content": "w"})
        assert (root / "w.txt").read_text() == "w"
        for path, code in ((str(root / "link_out"), -32602), (str(root / "nope"), -32002)):
            with pytest.raises(AcpProtocolException) as info:
                call("fs/read_text_file", {"path": path})
            assert info.value.code == code
            assert SECRET not in str(info.value)
    finally:
        agent.close()
        client.close()


# ---------------------------------------------------------------------------- fuzz
_ATOMS = [
    "..",
    ".",
    "",
    "a.txt",
    "sub",
    "b.txt",
    "link_out",
    "link_dir_out",
    "link_evil",
    "link_in",
    "dangling_out",
    "loop",
    "secret.txt",
    "root",
    "root-evil",
    "outside",
    "..\\..",
    "%2e%2e",
    "\x00",
    "é",
    "x" * 300,
    "~",
]
_PREFIXES = ["{root}", "{root}/", "{tmp}", "{root}-evil", "", "/", "//", "{root}/sub"]


def hostile_path(rnd: random.Random, root: Path, tmp: Path) -> str:
    prefix = rnd.choice(_PREFIXES).format(root=root, tmp=tmp)
    parts = [
        rnd.choice(_ATOMS) if rnd.random() < 0.85 else "".join(rnd.choices(_CHARS, k=4))
        for _ in range(rnd.randint(0, 6))
    ]
    return prefix + "/" + "/".join(parts)


_CHARS = "./\\-_~a\x00é\u202e%"
PATHS_PER_EXAMPLE = 50
FUZZ_EXAMPLES = 200  # x 50 paths = 10,000 hostile paths, each read and written


def test_ten_thousand_hostile_paths_give_zero_escapes(
    workspace: dict[str, Path], figure: Figure
) -> None:
    root, tmp = workspace["root"], workspace["tmp"]

    def outside_files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file() and root not in p.parents}

    before = outside_files()
    fs = WorkspaceFileSystem([root])
    counts = {"paths": 0, "served": 0, "refused": 0, "escapes": 0}

    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.integers(0, 2**32))
    def check(seed: int) -> None:
        rnd = random.Random(seed)
        for _ in range(PATHS_PER_EXAMPLE):
            path = hostile_path(rnd, root, tmp)
            counts["paths"] += 1
            for op in ("read", "write"):
                try:
                    if op == "read":
                        if SECRET in read(fs, path):
                            counts["escapes"] += 1
                    else:
                        fs.write_text_file(
                            WriteTextFileRequest(session_id="s", path=path, content="fuzz")
                        )
                        if not fs.contains(os.path.realpath(path)):
                            counts["escapes"] += 1
                    counts["served"] += 1
                except AcpProtocolException as exc:
                    assert exc.code in (-32602, -32002), (path, exc)
                    counts["refused"] += 1

    check()
    figure("hostile_paths", counts["paths"])
    figure("escapes", counts["escapes"])
    figure("served_inside", counts["served"])
    figure("refused", counts["refused"])
    assert counts["paths"] >= 10_000
    assert counts["escapes"] == 0
    assert outside_files() == before  # nothing outside the root was created or changed
    assert counts["served"] > 0 and counts["refused"] > 0


# ---------------------------------------------------------------------------- issue 17 items 6-7
FIFOS = 40  # more than the client's 32 worker threads


def test_fifos_in_the_workspace_are_refused_at_once_and_a_normal_read_still_answers(
    workspace: dict[str, Path], figure: Figure
) -> None:
    """Before: ``open()`` on a FIFO blocked for ever; 40 of them took all 32 workers, so a
    normal read never answered. Now each is refused ``-32602`` naming the FIFO, at once."""
    root = workspace["root"]
    fifos = [root / f"pipe{i}" for i in range(FIFOS)]
    for fifo in fifos:
        os.mkfifo(fifo)
    fs = WorkspaceFileSystem([root])
    pair = InMemoryTransportPair.create()
    client = fs.install(AcpClient.sync(pair.client_transport)).build()
    agent = AcpSession(pair.agent_transport, role="agent")
    try:
        agent.set_request_handler("session/new", lambda _req: reactivex.just({"sessionId": "s"}))
        client.session.start()
        agent.start()
        _known_session(client)
        calls = [
            agent.send_request("fs/read_text_file", {"sessionId": "s", "path": str(f)})
            for f in fifos
        ]
        errors = []
        for call in calls:
            with pytest.raises(AcpProtocolException) as info:
                wait_for(call, 10.0)
            errors.append(info.value)
        normal = {"sessionId": "s", "path": str(root / "a.txt")}
        content = wait_for(agent.send_request("fs/read_text_file", normal), 10.0)["content"]
        write = {"sessionId": "s", "path": str(fifos[0]), "content": "x"}
        with pytest.raises(AcpProtocolException) as info:
            wait_for(agent.send_request("fs/write_text_file", write), 10.0)
        write_error = info.value
    finally:
        for fifo in fifos:  # release any reader still blocked in open() (the bug), then clean up
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        agent.close()
        client.close()
    figure("fifo_reads_refused", sum(e.code == -32602 for e in errors))
    assert all(e.code == -32602 and "is a FIFO, not a regular file" in e.message for e in errors)
    assert content.startswith("one\n")
    assert write_error.code == -32602 and "FIFO" in write_error.message
    assert (root / "pipe0").is_fifo()  # not replaced by a regular file


def _swap_for_link(directory: Path, target: Path) -> None:
    directory.rename(directory.with_name(directory.name + ".moved"))
    directory.symlink_to(target)


def _unswap(directory: Path) -> None:
    directory.unlink()
    directory.with_name(directory.name + ".moved").rename(directory)


def test_a_parent_swapped_for_a_link_just_before_the_create_never_puts_a_file_outside(
    workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race made deterministic: ``sub`` becomes a link to ``outside`` right before the file
    is created. Before: the create followed the link (``O_NOFOLLOW`` covers the last component
    only) and left ``outside/victim.txt`` behind although the request was refused."""
    root, outside = workspace["root"], workspace["outside"]
    fs = WorkspaceFileSystem([root])
    real_open = os.open

    def racing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("victim.txt") and flags & os.O_CREAT:
            _swap_for_link(root / "sub", outside)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", racing_open)
    request = WriteTextFileRequest(
        session_id="s", path=str(root / "sub" / "victim.txt"), content="x"
    )
    with contextlib.suppress(AcpProtocolException):
        fs.write_text_file(request)
    monkeypatch.setattr(os, "open", real_open)
    assert not (outside / "victim.txt").exists()
    _unswap(root / "sub")
    assert (root / "sub" / "victim.txt").read_text() == "x"  # written where it was checked


WRITES = scaled(3_000, 30_000)


def test_writes_racing_a_thread_that_swaps_a_parent_for_a_link_create_nothing_outside(
    workspace: dict[str, Path], figure: Figure
) -> None:
    root, outside = workspace["root"], workspace["outside"]
    fs = WorkspaceFileSystem([root])
    stop = threading.Event()

    sub, moved = root / "sub", root / "sub.moved"

    def swapper() -> None:
        spare = 0
        while not stop.is_set():
            with contextlib.suppress(OSError):
                sub.rename(moved)
                sub.symlink_to(outside)  # the window: sub leads outside
                sub.unlink()
                if sub.exists():  # a write re-created sub meanwhile: keep it aside
                    spare += 1
                    sub.rename(root / f"sub.spare{spare}")
                moved.rename(sub)

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    refused = 0
    try:
        for i in range(WRITES):
            path = str(root / "sub" / f"w{i}.txt")
            try:
                fs.write_text_file(WriteTextFileRequest(session_id="s", path=path, content="x"))
            except AcpProtocolException:
                refused += 1
    finally:
        stop.set()
        thread.join(10.0)
    escaped = [p.name for p in outside.iterdir() if p.name != "secret.txt"]
    figure("writes", WRITES)
    figure("refused_during_swaps", refused)
    figure("files_created_outside", len(escaped))
    assert escaped == []
