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
The shortcuts are bound when this module is imported (an alias of the internal where its
signature fits), so using one costs no more than using the internal directly.

* :func:`bound_reads`: the ``max_size`` attribute asyncio's selector pipe and socket transports
  read with (not documented). Fallback: nothing (the OS read size stays asyncio's default).

This module is *not* a place for rxacp's own logic: only the shortcut and its fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
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


def _running_loop_public() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


running_loop: Callable[[], asyncio.AbstractEventLoop | None] = (
    _get_running_loop if _get_running_loop is not None else _running_loop_public
)
"""The event loop running in this thread, or ``None``."""


def _subscribe_public(
    source: reactivex.Observable[Any],
    observer: abc.ObserverBase[Any],
    scheduler: abc.SchedulerBase | None = None,
) -> Any:
    return source.subscribe(observer, scheduler=scheduler)


def _subscribe_internal(
    source: reactivex.Observable[Any],
    observer: abc.ObserverBase[Any],
    scheduler: abc.SchedulerBase | None = None,
) -> Any:
    return source._subscribe_core(observer, scheduler)


subscribe_core: Callable[..., Any] = (
    _subscribe_internal if _HAS_SUBSCRIBE_CORE else _subscribe_public
)
"""``subscribe_core(source, observer, scheduler=None)``: subscribe ``observer`` to ``source``
as given (no trampoline, no wrapper); returns what the source's subscribe function returned (a
disposable, a dispose function, or ``None``)."""


auto_detach: Callable[
    [abc.OnNext[Any] | None, abc.OnError | None, abc.OnCompleted | None],
    AutoDetachObserver[Any],
] = AutoDetachObserver
"""reactivex's observer that stops at its first terminal event and then disposes."""


def _fail_public(detach: AutoDetachObserver[Any], error: Exception) -> bool:
    if detach.is_stopped:
        return False
    detach.on_error(error)
    return True


detach_fail: Callable[[AutoDetachObserver[Any], Exception], bool] = (
    AutoDetachObserver.fail if _HAS_FAIL else _fail_public
)
"""Deliver ``error`` to ``detach`` unless it stopped already; True when it was delivered."""


def _attach_public(detach: AutoDetachObserver[Any], subscription: abc.DisposableBase) -> None:
    if detach.is_stopped:
        subscription.dispose()


detach_attach: Callable[[AutoDetachObserver[Any], abc.DisposableBase], None] = (
    AutoDetachObserver.set_disposable if _HAS_SET_DISPOSABLE else _attach_public
)
"""Give ``detach`` the subscription it disposes at its terminal event (or at once, if it
stopped already)."""


def bound_reads(transport: Any, size: int) -> None:
    """Make an asyncio read transport ask the OS for at most ``size`` bytes per read (any other
    transport is left as it is)."""
    if transport is not None and isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = size
