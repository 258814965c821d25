"""``CancelSignal``: the sticky, thread-safe "this prompt turn is cancelled" flag.

One signal per prompt turn. It is fired at most once, by whichever trigger comes first
(``session/cancel``, ``session/close``, ``$/cancel_request``, the grace period, the maximum
duration, or the connection closing); all triggers look the same from the handler's side:

* :meth:`is_set` — a poll; once True it stays True;
* :meth:`on_cancel` — a callback run once on the thread that fires the signal (at once if the
  signal already fired); it must be quick and must not block;
* :meth:`when_cancelled` — an Observable for ``ops.take_until``.

This module is *not* responsible for deciding when a turn is cancelled or what it answers; see
``turn.py``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import reactivex
from reactivex.subject import AsyncSubject

__all__ = ["CancelSignal"]

_log = logging.getLogger("rxacp.agent")


class CancelSignal:
    """A one-shot cancellation flag with callbacks and an Observable view."""

    __slots__ = ("_callbacks", "_lock", "_reason", "_set", "_subject")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._subject: AsyncSubject[str] | None = None

    @property
    def reason(self) -> str | None:
        """Which trigger fired the signal (``"session/cancel"``, ``"grace period"``...)."""
        return self._reason

    def is_set(self) -> bool:
        """True once the signal fired (sticky)."""
        return self._set

    def fire(self, reason: str) -> bool:
        """Fire the signal; True if this call fired it (later calls are no-ops)."""
        with self._lock:
            if self._set:
                return False
            self._set = True
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, []
            subject = self._subject
        for callback in callbacks:
            try:
                callback()
            except Exception:
                _log.exception("on_cancel callback failed")
        if subject is not None:
            subject.on_next(reason)
            subject.on_completed()
        return True

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once when the signal fires, or now if it already has."""
        with self._lock:
            if not self._set:
                self._callbacks.append(callback)
                return
        callback()

    def when_cancelled(self) -> reactivex.Observable[str]:
        """An Observable that emits the reason once and completes when the signal fires.

        Late subscribers get the same (it is backed by an ``AsyncSubject``)::

            when_cancelled()   ----------r|      (r: the reason, e.g. "session/cancel")

        It emits a value (rather than completing empty, as the Java SDK's ``Mono<Void>`` does)
        because RxPY's ``take_until`` reacts only to a value, and
        ``work.pipe(ops.take_until(ctx.when_cancelled()))`` is the pattern it exists for.
        """
        with self._lock:
            if self._subject is None:
                self._subject = AsyncSubject()
                if self._set:
                    self._subject.on_next(self._reason or "cancelled")
                    self._subject.on_completed()
            return self._subject
