"""What the remote agent servers (the WebSocket server, the HTTP app and its uvicorn thread)
share: the check of their connection limit, and ``with server:`` as start and close.

This module is *not* responsible for access rules (``_access.py``) nor for any server's I/O.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

__all__ = ["ServerContext", "check_max_connections"]


def check_max_connections(value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` is an int >= 1 or ``None`` (no limit)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"max_connections must be an int >= 1 or None, got {value!r}")


class ServerContext:
    """``with server:`` starts it (``start()``, which returns the server) and closes it."""

    def start(self) -> Self:
        """Start serving; returns the server."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop serving."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
