"""``WorkspaceFileSystem``: ready-made ``fs/read_text_file`` / ``fs/write_text_file`` handlers
confined to a set of workspace roots.

Every path an agent sends is checked before anything is opened: a non-empty absolute path
without NUL bytes or ``..`` components, inside a root after resolving every symbolic link
(compared component by component: ``/work/root-evil`` is *not* inside ``/work/root``), else
``-32602`` naming the problem. It is then opened race-free (``_confined_open.py``: walked from the
root's descriptor with ``O_NOFOLLOW``, the opened descriptor checked again), so a directory
swapped for a link meanwhile never leads outside; anything but a regular file is refused
``-32602`` without blocking. A missing file is ``-32002`` ``Resource not found: <path>`` (how
agents such as gemini-cli recognise it); a non-UTF-8 file or one over ``max_file_bytes`` is
``-32602``. (``docs/reliability.md``, "Workspace file system".)

``line`` (1-based, as the spec says) and ``limit`` (a number of lines) are honoured; lines end
at ``\\n`` and keep their line terminators. Writes create the file and any missing parent
directories inside the root (the spec: the client MUST create the file).

Use it with either builder::

    fs = WorkspaceFileSystem(["/home/me/project"])
    AcpClient.sync(transport).read_text_file_handler(fs.read_text_file) \\
        .write_text_file_handler(fs.write_text_file)
    AcpClient.async_(transport).read_text_file_handler(fs.read_text_file_async) \\
        .write_text_file_handler(fs.write_text_file_async)      # file I/O off the loop
    fs.install(builder)                                          # the same, for either builder

This module is *not* responsible for asking the user anything, for unsaved editor buffers or for
terminals; nor for a root directory itself being moved or replaced while it serves.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from ..errors import peer_echo
from ..schema import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from ..schema.methods import FS_READ_TEXT_FILE, FS_WRITE_TEXT_FILE
from ._confined_open import invalid as _invalid
from ._confined_open import open_in

__all__ = ["WorkspaceFileSystem"]

_B = TypeVar("_B")
_S = TypeVar("_S")
_Q = TypeVar("_Q")
_R = TypeVar("_R")

DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024
"""Default cap on the bytes read for (or written by) one request: 32 MiB."""


def threaded(method: Callable[[_S, _Q], _R]) -> Callable[[_S, _Q], Coroutine[Any, Any, _R]]:
    """The asyncio twin of the blocking handler ``method``: it runs on a thread
    (``asyncio.to_thread``; looked up on the instance, so an override counts)."""
    name = method.__name__

    async def run(self: _S, request: _Q) -> _R:
        bound: Callable[[_Q], _R] = getattr(self, name)
        return await asyncio.to_thread(bound, request)

    run.__name__ = run.__qualname__ = f"{name}_async"
    run.__doc__ = f":meth:`{name}` on a thread, for ``AcpClient.async_`` builders."
    return run


class WorkspaceFileSystem:
    """Serves the ACP ``fs/*`` requests inside ``roots`` only (see the module docstring).

    Args:
        roots: one directory or several; each must be an existing absolute directory. Symbolic
            links in a root itself are resolved once, here.
        max_file_bytes: largest file content read or written by one request.
        read_only: refuse every write with ``-32602``.
        on_access: called with ``("read" | "write", real_path)`` after each successful access.
    """

    def __init__(
        self,
        roots: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        read_only: bool = False,
        on_access: Callable[[str, str], None] | None = None,
    ) -> None:
        items = [roots] if isinstance(roots, str | os.PathLike) else list(roots)
        if not items:
            raise ValueError("WorkspaceFileSystem needs at least one root directory")
        resolved: list[str] = []
        for root in items:
            text = os.fspath(root)
            if not isinstance(text, str) or not os.path.isabs(text):
                raise ValueError(f"a workspace root must be an absolute path, got {root!r}")
            real = os.path.realpath(text)
            if not os.path.isdir(real):
                raise ValueError(f"a workspace root must be an existing directory: {text}")
            resolved.append(real)
        if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int):
            raise TypeError(f"max_file_bytes must be an int, got {max_file_bytes!r}")
        if max_file_bytes < 1:
            raise ValueError(f"max_file_bytes must be positive, got {max_file_bytes}")
        self.roots: tuple[str, ...] = tuple(dict.fromkeys(resolved))
        """The real paths of the roots."""
        self.max_file_bytes = max_file_bytes
        self.read_only = read_only
        self._on_access = on_access

    # ------------------------------------------------------------------ path checks
    def contains(self, real_path: str) -> bool:
        """True when an already-resolved path is one of the roots or below one."""
        return any(self.contains_in(root, real_path) for root in self.roots)

    @staticmethod
    def contains_in(root: str, real_path: str) -> bool:
        """True when an already-resolved path is ``root`` or below it."""
        prefix = root if root.endswith(os.sep) else root + os.sep
        return real_path == root or real_path.startswith(prefix)

    def resolve(self, path: Any) -> str:
        """The real path of ``path`` if the agent may use it, else ``AcpProtocolException``."""
        if not isinstance(path, str) or not path:
            raise _invalid("path must be a non-empty string")
        if "\x00" in path:
            raise _invalid("path must not contain NUL bytes")
        if not os.path.isabs(path):
            raise _invalid(
                f"path must be absolute (ACP file paths are absolute), got {peer_echo(path)}"
            )
        if ".." in path.replace("\\", "/").split("/"):
            raise _invalid(f"path must not contain '..' components: {peer_echo(path)}")
        try:
            real = os.path.realpath(path, strict=False)
        except (OSError, ValueError) as exc:  # symlink loops, names too long...
            raise _invalid(f"cannot resolve path {peer_echo(path)}: {type(exc).__name__}") from None
        if not self.contains(real):
            raise _invalid(f"refused: {peer_echo(path)} is outside the workspace roots")
        return real

    def _open(self, path: str, real: str, flags: int) -> int:
        """Open ``real`` (resolved, inside a root) race-free: :func:`._confined_open.open_in`."""
        return open_in(self, path, real, flags)

    # ------------------------------------------------------------------ handlers (blocking)
    def read_text_file(self, request: ReadTextFileRequest) -> ReadTextFileResponse:
        """``fs/read_text_file``: (part of) a UTF-8 text file; ``line`` is 1-based."""
        line, limit = request.line, request.limit
        if line is not None and line < 1:
            raise _invalid(f"line is 1-based, got {line}")
        if limit is not None and limit < 0:
            raise _invalid(f"limit must not be negative, got {limit}")
        real = self.resolve(request.path)
        fd = self._open(request.path, real, os.O_RDONLY)
        with open(fd, "rb") as file:
            if line is None and limit is None:
                data = file.read(self.max_file_bytes + 1)
                if len(data) > self.max_file_bytes:
                    raise _invalid(f"{request.path} is larger than {self.max_file_bytes} bytes")
            else:
                data = self._read_lines(file, request.path, line or 1, limit)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid(f"{request.path} is not a UTF-8 text file") from None
        self._note("read", real)
        return ReadTextFileResponse(content=text)

    def _read_lines(self, file: Any, path: str, first: int, limit: int | None) -> bytes:
        parts: list[bytes] = []
        size = 0
        if limit == 0:
            return b""
        for number, raw in enumerate(file, start=1):
            if number < first:
                continue
            size += len(raw)
            if size > self.max_file_bytes:
                raise _invalid(
                    f"the requested lines of {peer_echo(path, quote=False)} exceed "
                    f"{self.max_file_bytes} bytes"
                )
            parts.append(raw)
            if limit is not None and len(parts) >= limit:
                break
        return b"".join(parts)

    def write_text_file(self, request: WriteTextFileRequest) -> WriteTextFileResponse:
        """``fs/write_text_file``: create or replace a text file (and its parent directories)."""
        if self.read_only:
            raise _invalid("this workspace is read-only")
        try:
            data = request.content.encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid("content is not valid Unicode text (lone surrogate)") from None
        if len(data) > self.max_file_bytes:
            raise _invalid(f"content is larger than {self.max_file_bytes} bytes")
        real = self.resolve(request.path)
        if real in self.roots:
            raise _invalid(f"{request.path} is a directory")
        fd = self._open(request.path, real, os.O_WRONLY | os.O_CREAT)
        with open(fd, "wb") as file:
            file.truncate(0)
            file.write(data)
        self._note("write", real)
        return WriteTextFileResponse()

    # ------------------------------------------------------------------ handlers (asyncio)
    read_text_file_async = threaded(read_text_file)
    write_text_file_async = threaded(write_text_file)

    def install(self, builder: _B) -> _B:
        """Register both handlers on a sync or async client builder; returns the builder."""
        from ._builder_base import install_handlers

        handlers: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
            FS_READ_TEXT_FILE: (self.read_text_file, self.read_text_file_async)
        }
        if not self.read_only:
            handlers[FS_WRITE_TEXT_FILE] = (self.write_text_file, self.write_text_file_async)
        install_handlers(builder, handlers)
        return builder

    def _note(self, action: str, real: str) -> None:
        if self._on_access is not None:
            self._on_access(action, real)

    def __repr__(self) -> str:
        return f"WorkspaceFileSystem(roots={list(self.roots)!r})"
