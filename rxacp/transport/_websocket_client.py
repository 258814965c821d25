"""The client side of an ACP WebSocket connection: :class:`WebSocketAcpClientTransport`.

Connects to an agent's ``ws://`` / ``wss://`` URI (TCP + opening handshake, bounded by
``connect_timeout``) and turns connection failures into :class:`AcpConnectionException`.

This module is *not* responsible for moving frames once connected (``_websocket_connection``),
for reconnecting (the caller builds a new transport), nor for the agent side.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from collections.abc import Mapping
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus, InvalidURI
from websockets.frames import CloseCode

from rxacp._durations import Duration, to_seconds
from rxacp.errors import AcpConnectionException
from rxacp.transport._websocket_common import DEFAULT_MAX_MESSAGE_SIZE, _options
from rxacp.transport._websocket_connection import _WebSocketTransport
from rxacp.transport.base import FrameReceiver

__all__ = ["WebSocketAcpClientTransport"]


class WebSocketAcpClientTransport(_WebSocketTransport):
    """The client side: connects to an agent at ``uri`` (``ws://host:port/acp`` or ``wss://``).

    ``start()`` raises :class:`AcpConnectionException` naming ``uri`` and the cause when the
    connection or the opening handshake fails (within ``connect_timeout`` seconds). There is no
    automatic reconnect: when the connection ends, pending requests fail with
    :class:`AcpConnectionException`; build a new transport and client to connect again.

    ``headers`` are sent with the opening handshake (e.g. ``Authorization``); ``token`` adds
    ``Authorization: Bearer <token>`` for a server started with ``token=``. Keepalive pings
    detect a dead peer (``ping_interval``/``ping_timeout``; ``None`` disables). ``connect_options``
    are passed on to ``websockets.asyncio.client.connect`` (e.g. ``ssl=``, ``proxy=``).
    """

    def __init__(
        self,
        uri: str,
        *,
        connect_timeout: Duration = 10.0,
        headers: Mapping[str, str] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        ping_interval: Duration | None = 20.0,
        ping_timeout: Duration | None = 20.0,
        close_timeout: Duration = 5.0,
        compression: bool = False,
        connect_options: Mapping[str, Any] | None = None,
        token: str | None = None,
    ) -> None:
        if not isinstance(uri, str):
            raise TypeError(f"uri must be a str like 'ws://127.0.0.1:8765/acp', got {uri!r}")
        scheme = urllib.parse.urlsplit(uri).scheme
        if scheme not in ("ws", "wss"):
            raise ValueError(f"a WebSocket agent uri starts with ws:// or wss://, got {uri!r}")
        connect_seconds = to_seconds(connect_timeout, name="connect_timeout")
        if connect_seconds is None:
            raise ValueError(f"connect_timeout must be > 0 seconds, got {connect_timeout!r}")
        self._init_core(
            _options(max_message_size, ping_interval, ping_timeout, close_timeout, compression)
        )
        self.uri = uri
        self.connect_timeout = connect_seconds
        self._headers = dict(headers or {})
        if token is not None:
            if not isinstance(token, str) or not token:
                raise ValueError("token must be a non-empty string (or None)")
            self._headers["Authorization"] = f"Bearer {token}"
        self._connect_options = dict(connect_options or {})
        self._task: asyncio.Task[None] | None = None

    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Connect (TCP + opening handshake, bounded by ``connect_timeout``) and start reading."""
        self._attach(loop, receiver)
        opts = self._opts
        try:
            ws = await connect(
                self.uri,
                additional_headers=self._headers or None,
                open_timeout=self.connect_timeout,
                max_size=opts.max_message_size,
                ping_interval=opts.ping_interval,
                ping_timeout=opts.ping_timeout,
                close_timeout=opts.close_timeout,
                compression="deflate" if opts.compression else None,
                **self._connect_options,
            )
        except TimeoutError:
            raise AcpConnectionException(
                f"cannot connect to {self.uri}: no WebSocket handshake within "
                f"{self.connect_timeout:g} s"
            ) from None
        except InvalidStatus as exc:
            body = (exc.response.body or b"").decode("utf-8", "replace").strip()[:200]
            raise AcpConnectionException(
                f"cannot connect to {self.uri}: {exc}" + (f" ({body})" if body else "")
            ) from exc
        except (OSError, InvalidURI, Exception) as exc:
            raise AcpConnectionException(f"cannot connect to {self.uri}: {exc}") from exc
        self._bind(ws, loop)
        if self._closed:  # closed while connecting
            await ws.close(CloseCode.NORMAL_CLOSURE, "closed")
            return
        self._task = loop.create_task(self._run())

    async def _after_close(self) -> None:
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._task), self._opts.close_timeout)
