"""Graceful cancellation triggers (``RequestCancellation.cancel_when``), carried like the Java
SDK's Reactor context: by a ``contextvars.ContextVar`` set while a subscription is made.

A request subscribed while a trigger is set sends its cancel when the trigger emits or
completes (``$/cancel_request``, after the request's ``on_abandon``) and *keeps waiting*
for the peer's answer, unlike disposal, which stops listening. A trigger that fails is ignored.

This module is *not* responsible for sending anything; it only carries the trigger.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import reactivex

__all__ = ["current_trigger", "graceful_trigger"]

_TRIGGER: ContextVar[reactivex.Observable[Any] | None] = ContextVar(
    "rxacp_graceful_cancel_trigger", default=None
)


def current_trigger() -> reactivex.Observable[Any] | None:
    """The trigger of the subscription being made on this thread, if any."""
    return _TRIGGER.get()


@contextlib.contextmanager
def graceful_trigger(trigger: reactivex.Observable[Any] | None) -> Iterator[None]:
    """Set (or, with ``None``, clear) the trigger for the subscriptions made inside."""
    token = _TRIGGER.set(trigger)
    try:
        yield
    finally:
        _TRIGGER.reset(token)
