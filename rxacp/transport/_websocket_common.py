"""Shared pieces of the WebSocket transports: options and limits, close descriptions, URLs.

Holds the validated connection options (message-size cap, keepalive pings, close timeout,
compression), the text of :class:`TransportClosed` for a WebSocket close, the HTTP path guard
and ``serve()`` keyword arguments, and the daemon loop-thread runner.

This module is *not* responsible for moving frames (``_websocket_connection``), connecting
(``_websocket_client``), accepting connections (``_websocket_agent``, ``_websocket_server``),
nor for checking that ``websockets`` is installed (the public ``rxacp.transport.websocket``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.http11 import Request, Response

from rxacp._durations import Duration, to_seconds
from rxacp.transport._access import make_access, origin_key
from rxacp.transport._handoff import close_loop
from rxacp.transport.base import TransportClosed

__all__ = [
    "DEFAULT_BUDGET_TIMEOUT",
    "DEFAULT_FIRST_MESSAGE_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_OPEN_TIMEOUT",
    "DEFAULT_PATH",
    "_CLOSE_GRACE",
    "_SHUTDOWN",
    "_Access",
    "_Options",
    "_access",
    "_check_path",
    "_describe_close",
    "_handshake_guard",
    "_log",
    "_options",
    "_positive_or_none",
    "_run_loop",
    "_running_loop",
    "_serve_kwargs",
    "_url",
]

_log = logging.getLogger("rxacp.transport.websocket")

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""Default cap on one incoming message (16 MiB); larger messages close the connection (1009)."""

DEFAULT_FIRST_MESSAGE_TIMEOUT = 10.0
"""Default seconds a connection may stay silent after its handshake (slowloris bound)."""

DEFAULT_IDLE_TIMEOUT = 3600.0
"""Default seconds without a message either way before an agent-side connection is closed."""

DEFAULT_OPEN_TIMEOUT = 10.0
"""Default seconds a server connection may take to finish its opening handshake."""

DEFAULT_BUDGET_TIMEOUT = 30.0
"""Default seconds an incoming message may wait for the server's byte budget (then 1013)."""

DEFAULT_PATH = "/acp"
"""Default HTTP path of the agent endpoint."""

_SHUTDOWN = "server shutting down"
_CLOSE_GRACE = 1.0  # extra bound on cross-loop close waits, beyond close_timeout


@dataclass(frozen=True)
class _Options:
    max_message_size: int
    ping_interval: float | None
    ping_timeout: float | None
    close_timeout: float
    compression: bool


def _options(
    max_message_size: int,
    ping_interval: Duration | None,
    ping_timeout: Duration | None,
    close_timeout: Duration,
    compression: bool,
) -> _Options:
    if isinstance(max_message_size, bool) or not isinstance(max_message_size, int):
        raise TypeError(f"max_message_size must be an int (bytes), got {max_message_size!r}")
    if max_message_size < 1:
        raise ValueError(f"max_message_size must be positive, got {max_message_size}")
    close_seconds = to_seconds(close_timeout, name="close_timeout")
    if close_seconds is None:
        raise ValueError(f"close_timeout must be > 0 seconds, got {close_timeout!r}")
    return _Options(
        max_message_size,
        _positive_or_none("ping_interval", ping_interval),
        _positive_or_none("ping_timeout", ping_timeout),
        close_seconds,
        compression,
    )


def _positive_or_none(name: str, value: Duration | None) -> float | None:
    """A duration option in seconds (a ``timedelta`` or seconds); ``None``/``0``: off."""
    return to_seconds(value, name=name)


def _describe_close(exc: ConnectionClosed, limit: int) -> TransportClosed:
    """A readable :class:`TransportClosed` for the end of a WebSocket connection."""
    sent, rcvd = exc.sent, exc.rcvd
    if sent is not None and not exc.rcvd_then_sent:  # this side closed first
        if sent.code == CloseCode.MESSAGE_TOO_BIG:
            return TransportClosed(
                f"closed the WebSocket connection with code 1009: an incoming message exceeded "
                f"max_message_size ({limit} bytes): {sent.reason}"
            )
        return TransportClosed(f"this side closed the WebSocket connection: {sent}")
    if rcvd is not None:
        return TransportClosed(f"the WebSocket peer closed the connection: {rcvd}")
    return TransportClosed("the WebSocket connection was lost", error=exc.__cause__ or exc)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@dataclass(frozen=True)
class _Access:
    """Who may open a connection: browser origins allowed, and the bearer token, if any."""

    origins: frozenset[str]
    token: str | None

    def refusal(self, request: Request) -> tuple[HTTPStatus, str] | None:
        """Why the handshake ``request`` is refused (status, body), or ``None``."""
        for origin in request.headers.get_all("Origin"):
            if "*" not in self.origins and origin_key(origin) not in self.origins:
                _log.warning(
                    "refused a WebSocket handshake from Origin %r (not in allowed_origins)", origin
                )
                return HTTPStatus.FORBIDDEN, (
                    f"Origin {origin!r} is not allowed: a web page may not drive this agent "
                    "(the server's allowed_origins lists the pages that may)\n"
                )
        if self.token is not None:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                _log.warning("refused a WebSocket handshake without the right bearer token")
                return HTTPStatus.UNAUTHORIZED, (
                    "this agent needs a bearer token: send 'Authorization: Bearer <token>'\n"
                )
        return None


def _access(allowed_origins: Iterable[str] | None, token: str | None) -> _Access:
    return _Access(make_access(allowed_origins, token, None).origins, token)


def _handshake_guard(
    path: str, access: _Access
) -> Callable[[ServerConnection, Request], Response | None]:
    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        if urllib.parse.urlsplit(request.path).path != path:
            return connection.respond(HTTPStatus.NOT_FOUND, f"no ACP endpoint here; use {path}\n")
        refused = access.refusal(request)
        return None if refused is None else connection.respond(*refused)

    return process_request


def _check_path(path: str) -> None:
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")


def _url(host: str, port: int, path: str) -> str:
    return f"ws://{f'[{host}]' if ':' in host else host}:{port}{path}"


class _StopReadingWhileBacklogged:
    """Mixin for a ``websockets`` connection: stop reading the socket while its own write
    buffer is over the high-water mark, so a peer that sends pings (or anything the protocol
    answers by itself) and never reads cannot make this side queue pongs without limit.

    Server side only: a client that stopped reading while its agent also stopped reading (the
    agent side pauses its reads when its outbox is full) would deadlock both."""

    transport: asyncio.Transport

    def pause_writing(self) -> None:
        super().pause_writing()  # type: ignore[misc]
        with contextlib.suppress(Exception):
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()  # type: ignore[misc]
        with contextlib.suppress(Exception):
            self.transport.resume_reading()


class _BoundedServerConnection(_StopReadingWhileBacklogged, ServerConnection):
    """The server side's connection class (see :class:`_StopReadingWhileBacklogged`)."""


def _serve_kwargs(
    opts: _Options,
    path: str,
    access: _Access,
    extra: Mapping[str, Any],
    connection: type[ServerConnection] = _BoundedServerConnection,
) -> dict[str, Any]:
    return {
        "process_request": _handshake_guard(path, access),
        "create_connection": connection,
        "max_size": opts.max_message_size,
        # frames the library holds decoded per connection before recv(): with permessage-deflate
        # each may be max_size from a few KiB on the wire (its default, 16, made 40 KiB 541 MiB)
        "max_queue": 2,
        "ping_interval": opts.ping_interval,
        "ping_timeout": opts.ping_timeout,
        "close_timeout": opts.close_timeout,
        "compression": "deflate" if opts.compression else None,
        **extra,
    }


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        close_loop(loop, join_executor=True)
