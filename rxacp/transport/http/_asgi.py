"""Plain-ASGI helpers of the remote endpoint: the ASGI types, a refusal with its HTTP status,
request headers, a whole response, the body of a POST decoded, waiting for a disconnect.

This module is *not* responsible for what the endpoint does with a request (``_app``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from rxacp import jsonrpc

__all__ = [
    "Receive",
    "Refused",
    "Scope",
    "Send",
    "decode_body",
    "disconnected",
    "request_headers",
    "respond",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Refused(Exception):
    """A request refused with ``status``, a plain-text reason and extra response headers."""

    def __init__(self, status: int, text: str, headers: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(text)
        self.status, self.text, self.headers = status, text, list(headers)


async def disconnected(receive: Receive) -> None:
    """Return once the client of an HTTP request went away."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def decode_body(body: bytes) -> Any:
    """A POST body as JSON (``400`` when it is not); big ones are decoded off the loop."""
    try:
        if len(body) > 256 * 1024:  # keep the server's loop responsive for big messages
            return await asyncio.to_thread(jsonrpc.decode_json, body)
        return jsonrpc.decode_json(body)
    except jsonrpc.ParseError as exc:
        raise Refused(400, f"invalid JSON: {exc}") from None


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers, names lower-case, repeated ones joined with ``", "``."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


async def respond(
    send: Send,
    status: int,
    body: bytes | str,
    headers: Iterable[tuple[str, str]] = (),
    content_type: str = "text/plain; charset=utf-8",
) -> None:
    """Send a whole response."""
    data = body.encode() if isinstance(body, str) else body
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    if data:
        raw.append((b"content-type", content_type.encode()))
    raw.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})
