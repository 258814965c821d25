"""The WebSocket profile of the remote endpoint: one upgraded connection of
:class:`~rxacp.transport.http.AcpAsgiApp`, text frames both ways.

The upgrade is checked like any request (``Origin``, credentials), counted against the
connection cap, answered with ``Acp-Connection-Id``; incoming frames wait for the server-wide
parse budget up to ``budget_wait`` (then close code 1013; the ASGI server reads nothing more
of that connection until the app receives again), binary frames are ignored (the RFD), a frame
over ``max_message_size`` closes with ``1009``. The ASGI server reads each frame whole before
the app sees it, so one message per connection is outside the budget: under uvicorn bound it
with ``ws_max_size`` (``_serve``, rxacp's uvicorn runner, sets it to ``max_message_size``).

This module is *not* responsible for the app's registry and limits (``_app``) nor for one
connection's routing (``_connection``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rxacp.transport.http._asgi import Receive, Refused, Send
from rxacp.transport.http._connection import HttpAcpAgentTransport
from rxacp.transport.http._protocol import CONNECTION_ID_HEADER

if TYPE_CHECKING:
    from rxacp.transport.http._app import AcpAsgiApp

__all__ = ["serve_websocket"]

_log = logging.getLogger("rxacp.transport.http")


async def serve_websocket(
    app: AcpAsgiApp, headers: Mapping[str, str], receive: Receive, send: Send
) -> None:
    """Serve one ASGI ``websocket`` scope until it ends."""
    first = await receive()
    if first["type"] != "websocket.connect":
        return
    principal, refusal = app._access.check(headers)
    if refusal is not None:
        _log.warning("refused a WebSocket upgrade: %s", refusal[1])
        await send({"type": "websocket.close", "code": 1008})
        return
    try:
        transport = await app._open("websocket", headers, principal)
    except Refused as refused:  # 1013: try again later (a limit); 1011: the agent failed
        code = 1013 if refused.status == 503 else 1011
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": code, "reason": refused.text[:120]})
        return
    header = (CONNECTION_ID_HEADER.lower().encode(), transport.connection_id.encode())
    await send({"type": "websocket.accept", "headers": [header]})
    writer = asyncio.ensure_future(_write(transport, send))
    try:
        await _read(app, transport, receive, send)
    finally:
        writer.cancel()
        with contextlib.suppress(BaseException):
            await writer
        app._over(transport, transport.end_reason or "the WebSocket connection closed")


async def _read(
    app: AcpAsgiApp, transport: HttpAcpAgentTransport, receive: Receive, send: Send
) -> None:
    cap, budget = app.max_message_size, app.budget
    while not transport.ended:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            if message.get("bytes") is not None:
                _log.warning("ignoring a binary WebSocket frame (ACP sends text frames)")
            continue
        # handed on as text (the engine parses str): no UTF-8 copy of a large message
        size = len(text) if len(text) * 4 <= cap else len(text.encode())
        if size > cap:
            await send({"type": "websocket.close", "code": 1009, "reason": f"over {cap} bytes"})
            return
        try:  # uvicorn reads nothing more of this connection until the next receive()
            await app._reserve(size)
        except Refused:
            reason = f"server busy: a {size}-byte message waited over the budget_wait"
            await send({"type": "websocket.close", "code": 1013, "reason": reason})
            return
        transport.deliver(text, budget.clamp(size))


async def _write(transport: HttpAcpAgentTransport, send: Send) -> None:
    stream = transport.connection_stream
    while True:
        data = await stream.next(None)
        if data is None:  # the connection ended here (idle, shutdown, the agent closed...)
            reason = transport.end_reason.encode()[:120].decode(errors="ignore")
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": 1001, "reason": reason})
            return
        await send({"type": "websocket.send", "text": data.decode()})
        transport.taken(data)
