"""Small rules shared by the client and the agent layers (which must not import each other).

- :func:`check_ext_method`: ACP reserves method names starting with ``_`` for extensions;
- :func:`as_observable`: a handler's return value (an Observable, an awaitable or a plain
  value) as an Observable; an awaitable (an ``async def`` handler's coroutine) is awaited on
  the connection's loop, from whichever thread the handler ran on (:func:`to_future`).

This module is *not* responsible for routing or running handlers; see ``dispatch.py``.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import reactivex

__all__ = ["as_observable", "check_ext_method", "check_raw_method", "to_future"]


def check_ext_method(method: Any, where: str = "") -> str:
    """Return ``method`` if it is an extension method name, else raise ``ValueError``.

    ``where`` names the API that was called (e.g. ``"ext_request_handler"``) in the message.
    """
    if not isinstance(method, str) or not method.startswith("_"):
        prefix = f"{where}: " if where else ""
        raise ValueError(
            f"{prefix}extension method names must start with '_' (e.g. '_myorg/ping'), "
            f"got {method!r}"
        )
    return method


def check_raw_method(method: Any, where: str, reserved: dict[str, str]) -> str:
    """Return ``method`` if a raw handler may serve it, else raise ``ValueError``.

    Any JSON-RPC method name is allowed except ``$/`` methods (the engine's) and ``reserved``,
    the methods whose protocol rules the SDK itself implements (mapped to the typed API to use).
    """
    if not isinstance(method, str) or not method:
        raise ValueError(f"{where}: the method must be a non-empty string, got {method!r}")
    if method.startswith("$/"):
        raise ValueError(f"{where}: {method!r} is handled by the JSON-RPC engine itself")
    instead = reserved.get(method)
    if instead is not None:
        raise ValueError(
            f"{where}: {method!r} has protocol rules rxacp implements; use {instead} instead"
        )
    return method


def as_observable(
    value: Any, loop: asyncio.AbstractEventLoop | None = None
) -> reactivex.Observable[Any]:
    """``value`` as an Observable: an Observable as is, an awaitable's result once it completes
    (awaited on ``loop``, default the running loop; see :func:`to_future`), anything else as
    ``-value|``. Disposing before an awaitable finished cancels it."""
    if isinstance(value, reactivex.Observable):
        return value
    if inspect.isawaitable(value):
        return reactivex.from_future(to_future(value, loop))
    return reactivex.just(value)


def to_future(awaitable: Any, loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """Schedule ``awaitable`` on ``loop``: an asyncio future when called on that loop (or when
    ``loop`` is ``None``: the running loop), else a ``concurrent.futures.Future`` from
    ``run_coroutine_threadsafe`` (a blocking handler's worker thread handing it over)."""
    if loop is None:
        return asyncio.ensure_future(awaitable)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        return asyncio.ensure_future(awaitable)

    async def wait() -> Any:
        return await awaitable

    return asyncio.run_coroutine_threadsafe(wait(), loop)
