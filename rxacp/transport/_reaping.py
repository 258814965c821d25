"""Ending a spawned agent for good: its process group, and the descendants that left the group.

:class:`ProcessGroup` signals the agent's process group (the agent was started in a new session,
so the group id is its pid), tells whether a live (non-zombie) member is left, and ends the
descendants that had moved to another group (``setsid()``), found by walking ``/proc`` while
the agent still runs. A reused pid is never signalled: descendants are identified by pid *and*
start time.

Orphaned group members are not our children (no exit notification), so the waits here re-check
with a backoff from 1 ms to 50 ms, bounded by the caller's timeout.

This module is *not* responsible for spawning, pipes or reporting the exit status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from typing import Any

__all__ = ["ProcessGroup", "fd_identity", "pipe_holders", "wait_done"]

_log = logging.getLogger("rxacp.transport.stdio")


async def wait_done(fut: asyncio.Future[Any], timeout: float) -> bool:
    """Wait up to ``timeout`` s for ``fut`` (never cancelling it); True when it is done."""
    if fut.done():
        return True
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(fut), timeout)
    return fut.done()


class ProcessGroup:
    """The process group led by ``pid`` (loop thread)."""

    __slots__ = ("pid",)

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def alive(self) -> bool:
        """True while a process of the group still runs (zombies do not count)."""
        try:
            os.killpg(self.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return _group_has_live_member(self.pid)

    def signal(self, sig: int) -> bool:
        """Signal the whole group; False if nothing is left in it."""
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def escaped_descendants(self) -> dict[int, bytes]:
        """Descendants of the leader in another group, by pid -> start time (empty without
        ``/proc``). Call it while the leader runs: once it exits they are orphans."""
        return _escaped_descendants(self.pid)

    async def wait_gone(self, exited: asyncio.Future[int], timeout: float) -> None:
        """Wait (bounded) until the leader exited and no live member is left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await wait_done(exited, timeout)
        delay = 0.001
        while self.alive() and loop.time() < deadline:
            await asyncio.sleep(delay)  # orphaned group members are not our children
            delay = min(delay * 2, 0.05)

    @staticmethod
    def signal_escaped(escaped: dict[int, bytes], sig: int) -> dict[int, bytes]:
        """Send ``sig`` to those of ``escaped`` (pid -> start time) still alive (never to a
        reused pid); returns them."""
        alive = {pid: start for pid, start in escaped.items() if _is_live(pid, start)}
        if alive:
            _log.debug("signalling %d descendant(s) outside the process group", len(alive))
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        return alive

    @staticmethod
    async def end_escaped(escaped: dict[int, bytes], timeout: float) -> None:
        """SIGTERM, then SIGKILL, the descendants that had left the group."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = ProcessGroup.signal_escaped(escaped, sig)
            if not alive:
                return
            deadline = loop.time() + (timeout if sig == signal.SIGTERM else 2.0)
            delay = 0.001
            while any(_is_live(p, st) for p, st in alive.items()) and loop.time() < deadline:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.05)
            escaped = alive


def _group_has_live_member(pgid: int) -> bool:
    """Whether process group ``pgid`` has a member that is not a zombie (Linux /proc scan).

    Orphaned zombies stay in the group until init reaps them, which some container inits never
    do; they must not make close() wait. Without /proc, any member counts as live.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        fields = _proc_stat(entry) if entry.isdigit() else None
        if fields is not None and len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _proc_stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _escaped_descendants(root: int) -> dict[int, bytes]:
    """Descendants of ``root`` in another process group than ``root``'s, by pid -> start time
    (so a reused pid is never signalled). Empty without ``/proc``."""
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return {}
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[int, bytes]] = {}
    for pid in entries:
        fields = _proc_stat(pid)
        if fields is None or len(fields) < 20 or fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(pid)
        info[pid] = (int(fields[2]), fields[19])
    found: dict[int, bytes] = {}
    pending = list(children.get(root, ()))
    while pending:
        pid = pending.pop()
        pgid, start = info[pid]
        if pgid != root:
            found[pid] = start
        pending.extend(children.get(pid, ()))
    return found


def fd_identity(fd: int) -> str | None:
    """What ``fd`` refers to, e.g. ``pipe:[123456]`` (``None`` without ``/proc``): take it
    while the descriptor is open, for :func:`pipe_holders`."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def pipe_holders(identity: str | None) -> dict[int, bytes]:
    """Other processes holding the pipe named ``identity`` (:func:`fd_identity`), by pid ->
    start time (empty without ``/proc``): whoever keeps a command's output open after the
    command exited, such as a ``setsid`` descendant whose parent is gone (so it is no longer
    below it)."""
    if identity is None or not identity.startswith("pipe:"):
        return {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return {}
    me = os.getpid()
    found: dict[int, bytes] = {}
    for entry in entries:
        pid = int(entry)
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:  # gone, or not ours to look at
            continue
        for name in fds:
            try:
                held = os.readlink(f"/proc/{entry}/fd/{name}") == identity
            except OSError:
                continue
            if held:
                fields = _proc_stat(pid)
                if fields is not None and len(fields) > 19 and fields[0] != b"Z":
                    found[pid] = fields[19]
                break
    return found


def _is_live(pid: int, start: bytes) -> bool:
    fields = _proc_stat(pid)
    return fields is not None and len(fields) > 19 and fields[19] == start and fields[0] != b"Z"
