"""``ConfinedFileSystem``: the ``fs/*`` handlers of ``rxacp prompt``, confined to one directory.

Paths must be absolute and, after resolving symbolic links, inside the root directory;
anything else is refused with ``-32602`` (invalid params) naming the problem. A missing file is
``-32002`` (resource not found). Text is UTF-8.

This module is *not* responsible for asking the user anything or for terminals.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import AcpProtocolException
from ..schema import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)

__all__ = ["ConfinedFileSystem"]


class ConfinedFileSystem:
    """Serves ``fs/read_text_file`` and ``fs/write_text_file`` inside ``root`` only."""

    def __init__(self, root: str, on_access: Callable[[str], None] | None = None) -> None:
        self.root = os.path.realpath(root)
        self._on_access = on_access

    def resolve(self, path: str) -> str:
        """The real path of ``path`` if it is absolute and inside the root, else ``-32602``."""
        if not isinstance(path, str) or not os.path.isabs(path):
            raise AcpProtocolException.invalid_params(
                f"path must be absolute, got {path!r} (ACP file paths are absolute)"
            )
        real = os.path.realpath(path)
        if real != self.root and not real.startswith(self.root.rstrip(os.sep) + os.sep):
            raise AcpProtocolException.invalid_params(
                f"refused: {path} is outside the working directory {self.root}"
            )
        return real

    def read_text_file(self, request: ReadTextFileRequest) -> ReadTextFileResponse:
        """Read (part of) a text file: ``line`` is 1-based, ``limit`` a number of lines."""
        real = self.resolve(request.path)
        try:
            with open(real, encoding="utf-8") as file:
                text = file.read()
        except FileNotFoundError as exc:
            raise AcpProtocolException.resource_not_found(f"no such file: {request.path}") from exc
        except IsADirectoryError as exc:
            raise AcpProtocolException.invalid_params(f"{request.path} is a directory") from exc
        except UnicodeDecodeError as exc:
            raise AcpProtocolException.invalid_params(
                f"{request.path} is not a UTF-8 text file"
            ) from exc
        if request.line is not None or request.limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((request.line or 1) - 1, 0)
            end = None if request.limit is None else start + max(request.limit, 0)
            text = "".join(lines[start:end])
        self._note(f"read {request.path}")
        return ReadTextFileResponse(content=text)

    def write_text_file(self, request: WriteTextFileRequest) -> WriteTextFileResponse:
        """Write a text file (creating missing parent directories inside the root)."""
        real = self.resolve(request.path)
        try:
            os.makedirs(os.path.dirname(real), exist_ok=True)
            with open(real, "w", encoding="utf-8") as file:
                file.write(request.content)
        except IsADirectoryError as exc:
            raise AcpProtocolException.invalid_params(f"{request.path} is a directory") from exc
        self._note(f"wrote {request.path}")
        return WriteTextFileResponse()

    def _note(self, text: str) -> None:
        if self._on_access is not None:
            self._on_access(text)
