"""The race-free open behind :class:`~rxacp.client.WorkspaceFileSystem`: a path already
resolved inside a root is opened ``openat``-style (walked from the root's descriptor with
``O_NOFOLLOW``, the file opened under its verified parent) and the opened descriptor checked
again; anything that is not a regular file is refused (see ``fs.py``'s docstring).

This module is *not* responsible for resolving or confining the path (``fs.py``) or for
reading and writing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import TYPE_CHECKING

from ..errors import AcpProtocolException, peer_echo

if TYPE_CHECKING:
    from .fs import WorkspaceFileSystem

__all__ = ["invalid", "missing", "open_in"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_OPENAT = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.mkdir in os.supports_dir_fd
    and bool(_NOFOLLOW and _DIRECTORY)
)
_PROC_FD = "/proc/self/fd"


def missing(path: str) -> AcpProtocolException:
    """``-32002`` for a missing file, with the standard message (the TS SDK's resourceNotFound):
    agents tell a missing file from a failure by it (gemini-cli 0.61 matches "Resource not
    found")."""
    return AcpProtocolException.resource_not_found(
        f"Resource not found: {peer_echo(path, quote=False)}",
        {"path": peer_echo(path, quote=False)},
    )


def invalid(message: str) -> AcpProtocolException:
    return AcpProtocolException.invalid_params(message)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISLNK, "a symbolic link"),
)


def _require_regular(path: str, mode: int) -> None:
    """Refuse (``-32602``, naming what it is) anything but a regular file."""
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise invalid(f"{peer_echo(path, quote=False)} is {kind}, not a regular file")


def _check_open(fs: WorkspaceFileSystem, fd: int, path: str, real: str | None) -> None:
    """Re-check the file actually opened (defeats a swap after :meth:`resolve`)."""
    opened: str | None = None
    try:
        opened = os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        opened = None
    if opened is not None:
        if not fs.contains(opened):
            raise invalid(f"refused: {peer_echo(path)} is outside the workspace roots")
        return
    if real is None:  # opened under a verified parent descriptor: nothing more to compare
        return
    try:  # no /proc: the descriptor must be the file the checked path names now
        same = os.path.samestat(os.fstat(fd), os.stat(real, follow_symlinks=False))
    except OSError:
        same = False
    if not same:
        raise invalid(f"refused: {peer_echo(path)} changed while it was being opened")


def open_in(fs: WorkspaceFileSystem, path: str, real: str, flags: int) -> int:
    """Open ``real`` (already resolved and inside a root) for ``flags``, race-free.

    Where the platform has ``openat`` (``dir_fd``), the path is walked from the root's
    directory descriptor one component at a time, each with ``O_NOFOLLOW``, and the file is
    opened (or created) under its verified parent's descriptor: a directory swapped for a
    symbolic link meanwhile makes the walk fail instead of leading outside the roots.
    Anything that is not a regular file (FIFO, socket, device, directory) is refused after
    an ``lstat`` and again after a non-blocking open, so a FIFO never blocks a thread.
    """
    if not _OPENAT:
        return _open_by_path(fs, path, real, flags)
    root = next(r for r in fs.roots if fs.contains_in(r, real))
    rel = os.path.relpath(real, root)
    parts = [] if rel == os.curdir else rel.split(os.sep)
    if not parts:
        raise invalid(f"{peer_echo(path, quote=False)} is a directory")
    create = bool(flags & os.O_CREAT)
    dir_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts[:-1]:
            sub = _open_dir(path, name, dir_fd, create)
            os.close(dir_fd)
            dir_fd = sub
        return _open_leaf(fs, path, parts[-1], dir_fd, flags)
    finally:
        os.close(dir_fd)


def _open_dir(path: str, name: str, dir_fd: int, create: bool) -> int:
    dir_flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    for attempt in (0, 1):
        try:
            return os.open(name, dir_flags, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise missing(path) from None
            if attempt:
                break
            try:
                os.mkdir(name, 0o777, dir_fd=dir_fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise invalid(
                    f"cannot create the parent directory of {peer_echo(path, quote=False)}"
                ) from exc
        except OSError as exc:  # ELOOP / ENOTDIR: a link or a file where a directory was
            raise invalid(
                f"refused: a parent of {peer_echo(path)} is not a directory inside the "
                "workspace "
                f"({os.strerror(exc.errno or 0)})"
            ) from None
    raise invalid(f"refused: {peer_echo(path)} changed while it was being opened")


def _open_leaf(fs: WorkspaceFileSystem, path: str, name: str, dir_fd: int, flags: int) -> int:
    try:
        before: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise invalid(
            f"cannot open {peer_echo(path, quote=False)}: {os.strerror(exc.errno or 0)}"
        ) from None
    if before is None and not flags & os.O_CREAT:
        raise missing(path)
    if before is not None:
        _require_regular(path, before.st_mode)
    try:
        fd = os.open(name, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, 0o666, dir_fd=dir_fd)
    except OSError as exc:
        raise _open_error(path, exc) from None
    try:
        _require_regular(path, os.fstat(fd).st_mode)
        _check_open(fs, fd, path, None)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        if before is None:  # we created it: leave nothing behind where we refused it
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
        raise
    return fd


def _open_by_path(fs: WorkspaceFileSystem, path: str, real: str, flags: int) -> int:
    """Without ``openat``: open by path, then check the opened descriptor."""
    try:
        before = os.stat(real, follow_symlinks=False)
    except OSError:
        before = None
    if before is not None:
        _require_regular(path, before.st_mode)
    if flags & os.O_CREAT:
        parent = os.path.dirname(real)
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise invalid(
                f"cannot create the parent directory of {peer_echo(path, quote=False)}"
            ) from exc
        if not fs.contains(os.path.realpath(parent)):  # a link appeared meanwhile
            raise invalid(f"refused: {peer_echo(path)} is outside the workspace roots")
    try:
        fd = os.open(real, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, 0o666)
    except OSError as exc:
        raise _open_error(path, exc) from None
    try:
        _check_open(fs, fd, path, real)
        _require_regular(path, os.fstat(fd).st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_error(path: str, exc: OSError) -> AcpProtocolException:
    if isinstance(exc, FileNotFoundError):
        return missing(path)
    if isinstance(exc, IsADirectoryError):
        return invalid(f"{peer_echo(path, quote=False)} is a directory")
    if exc.errno == errno.ELOOP:
        return invalid(f"refused: {peer_echo(path)} is a symbolic link")
    if exc.errno == errno.ENXIO:  # a FIFO without a reader, opened for writing
        return invalid(f"{peer_echo(path, quote=False)} is a FIFO, not a regular file")
    return invalid(f"cannot open {peer_echo(path, quote=False)}: {os.strerror(exc.errno or 0)}")
