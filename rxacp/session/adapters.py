"""Small rules shared by the client and the agent layers (which must not import each other).

- :func:`check_ext_method`: ACP reserves method names starting with ``_`` for extensions;
- :func:`as_observable`: an async handler's return value (an Observable, an awaitable or a
  plain value) as an Observable.

This module is *not* responsible for routing or running handlers; see ``dispatch.py``.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import reactivex

__all__ = ["as_observable", "check_ext_method"]


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


def as_observable(value: Any) -> reactivex.Observable[Any]:
    """``value`` as an Observable: an Observable as is, an awaitable's result once it completes
    (scheduled on the running loop), anything else as ``-value|``."""
    if isinstance(value, reactivex.Observable):
        return value
    if inspect.isawaitable(value):
        return reactivex.from_future(asyncio.ensure_future(value))
    return reactivex.just(value)
