"""``subscribe_direct``: subscribe without reactivex's current-thread trampoline (measured).

``reactivex.Observable.subscribe`` wraps the observer in an ``AutoDetachObserver`` and, when
the current-thread scheduler is not already running, runs the subscription through its
trampoline (~20 µs per subscription, measured on the request and prompt-answer paths). rxacp's
own Observables hand their work to the connection's loop and inner operators set up their own
trampolines, so the outermost one buys nothing there. This helper does what
``Observable.subscribe`` does minus that trampoline:

* the observer is an ``AutoDetachObserver`` (stops after the first terminal event, disposes
  the subscription after it — also when the subscribe function emits synchronously);
* ``Observable._subscribe_core(observer, scheduler)`` is the source's subscribe function (the
  one documented extension point of ``reactivex.Observable``; ``tests/session/
  test_direct_subscribe.py`` pins that it behaves as this module relies on);
* an exception raised while subscribing goes to ``on_error`` unless the observer already
  stopped (then it propagates, as in reactivex).

``observer=`` skips the ``AutoDetachObserver`` and the disposable wrappers for rxacp's own
observers on hot paths (:class:`~rxacp.session.adapters.Started`: an Observable-returning
consumer per update): such an observer ignores every event after its first terminal one
itself, and the caller disposes the returned subscription when it no longer needs it — also
after a terminal event (reactivex's ``finally_action`` runs on disposal)
(measured: ~4 µs of the ~6 µs a ``reactivex.empty()`` subscription cost through the
wrappers).

This is the only place rxacp relies on reactivex beyond its public API. It is *not* responsible
for scheduling: emissions arrive on whatever thread the source emits on.
"""

from __future__ import annotations

from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from .._compat import auto_detach, detach_attach, detach_fail, subscribe_core

__all__ = ["subscribe_direct"]

_NOTHING: abc.DisposableBase = Disposable()
"""The subscription of a source that gave none back (disposing it does nothing)."""


def subscribe_direct(
    source: reactivex.Observable[Any],
    on_next: abc.OnNext[Any] | None = None,
    on_error: abc.OnError | None = None,
    on_completed: abc.OnCompleted | None = None,
    scheduler: abc.SchedulerBase | None = None,
    *,
    observer: abc.ObserverBase[Any] | None = None,
) -> abc.DisposableBase:
    """Subscribe ``source`` like ``source.subscribe(on_next, on_error, on_completed)``, without
    the current-thread trampoline; returns the disposable of the subscription.

    With ``observer`` (instead of the callbacks) that observer is subscribed as given: it must
    stop at its first terminal event by itself (see the module doc)."""
    if observer is not None:
        try:
            bare: Any = subscribe_core(source, observer, scheduler)
        except Exception as exc:
            observer.on_error(exc)  # ignored by an observer that already stopped
            return _NOTHING
        if bare is None:
            return _NOTHING
        return bare if hasattr(bare, "dispose") else Disposable(bare)
    detach = auto_detach(on_next, on_error, on_completed)
    try:
        subscription: Any = subscribe_core(source, detach, scheduler)
    except Exception as exc:
        if not detach_fail(detach, exc):
            raise
    else:
        if subscription is None:
            subscription = _NOTHING
        elif not hasattr(subscription, "dispose"):  # a bare dispose function
            subscription = Disposable(subscription)
        detach_attach(detach, subscription)
    return Disposable(detach.dispose)
