"""Every use rxacp makes of a library's internals, in one place.

Each is a measured shortcut (see ``benchmarks/profile/floors.py``) with a public-API fallback that
is taken when the library no longer has the internal; ``tests/test_compat.py`` pins the library
behaviour each one relies on, so an upgrade that changes it fails there and not in a user's
program.

* :func:`running_loop`: ``asyncio._get_running_loop()`` (no exception when there is none; called
  once per answer). Fallback: ``asyncio.get_running_loop()`` with the ``RuntimeError`` caught.
* :func:`subscribe_core`: ``reactivex.Observable._subscribe_core(observer, scheduler)``, the
  source's own subscribe function without the current-thread trampoline and the
  ``AutoDetachObserver`` wrapper of ``subscribe()``. Fallback: ``subscribe()``.
* :func:`auto_detach` / :func:`detach_fail` / :func:`detach_attach`: reactivex's
  ``AutoDetachObserver`` (public class) and its ``fail()`` and ``set_disposable()`` members
  (not documented). Fallbacks: ``on_error`` unless stopped; disposing the subscription at once
  when the observer stopped already.
* :func:`bound_reads`: the ``max_size`` attribute asyncio's selector pipe and socket transports
  read with (not documented). Fallback: nothing (the OS read size stays asyncio's default).

This module is *not* a place for rxacp's own logic: only the shortcut and its fallback.
"""

from __future__ import annotations

import asyncio
from typing import Any

import reactivex
from reactivex import abc
from reactivex.observer import AutoDetachObserver

__all__ = [
    "auto_detach",
    "bound_reads",
    "detach_attach",
    "detach_fail",
    "running_loop",
    "subscribe_core",
]

_get_running_loop = getattr(asyncio, "_get_running_loop", None)
_HAS_SUBSCRIBE_CORE = hasattr(reactivex.Observable, "_subscribe_core")
_HAS_FAIL = hasattr(AutoDetachObserver, "fail")
_HAS_SET_DISPOSABLE = hasattr(AutoDetachObserver, "set_disposable")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or ``None``."""
    if _get_running_loop is not None:
        loop: asyncio.AbstractEventLoop | None = _get_running_loop()
        return loop
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def subscribe_core(
    source: reactivex.Observable[Any],
    observer: abc.ObserverBase[Any],
    scheduler: abc.SchedulerBase | None = None,
) -> Any:
    """Subscribe ``observer`` to ``source`` as given (no trampoline, no wrapper); returns what
    the source's subscribe function returned (a disposable, a dispose function, or ``None``)."""
    if _HAS_SUBSCRIBE_CORE:
        return source._subscribe_core(observer, scheduler)
    return source.subscribe(observer, scheduler=scheduler)


def auto_detach(
    on_next: abc.OnNext[Any] | None,
    on_error: abc.OnError | None,
    on_completed: abc.OnCompleted | None,
) -> AutoDetachObserver[Any]:
    """reactivex's observer that stops at its first terminal event and then disposes."""
    return AutoDetachObserver(on_next, on_error, on_completed)


def detach_fail(detach: AutoDetachObserver[Any], error: Exception) -> bool:
    """Deliver ``error`` to ``detach`` unless it stopped already; True when it was delivered."""
    if _HAS_FAIL:
        return bool(detach.fail(error))
    if detach.is_stopped:
        return False
    detach.on_error(error)
    return True


def detach_attach(detach: AutoDetachObserver[Any], subscription: abc.DisposableBase) -> None:
    """Give ``detach`` the subscription it disposes at its terminal event (or at once, if it
    stopped already)."""
    if _HAS_SET_DISPOSABLE:
        detach.set_disposable(subscription)
    elif detach.is_stopped:
        subscription.dispose()


def bound_reads(transport: Any, size: int) -> None:
    """Make an asyncio read transport ask the OS for at most ``size`` bytes per read (any other
    transport is left as it is)."""
    if transport is not None and isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = size
