"""The one one-shot signal, and the reasons a prompt turn ends early.

:class:`OneShotSignal` is a sticky, thread-safe flag fired at most once, by whichever trigger
comes first, with the :class:`CancelReason` it fired for. Both roles build on it: the agent's
per-turn cancellation signal (``PromptContext.is_cancelled()`` / ``when_cancelled()``) and the
client's stop button (:class:`~rxacp.client.CancellationSignal`).

* :meth:`OneShotSignal.is_set` — a poll; once True it stays True;
* :meth:`OneShotSignal.add_listener` — a callback run once, on the thread that fires (at once
  if it already fired); returns a remover;
* :meth:`OneShotSignal.when_fired` — an Observable of the reason, for ``ops.take_until``.

This module is *not* responsible for deciding when to fire or what firing means.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from enum import StrEnum

import reactivex
from reactivex.subject import AsyncSubject

__all__ = ["CancelReason", "OneShotSignal"]

_log = logging.getLogger("rxacp.roles")


class CancelReason(StrEnum):
    """Why a prompt turn was cancelled or stopped (the value compares equal to its text)."""

    SESSION_CANCEL = "session/cancel"
    """The client sent ``session/cancel`` for the session."""
    SESSION_CLOSE = "session/close"
    """The client closed the session."""
    CANCEL_REQUEST = "$/cancel_request"
    """The client sent ``$/cancel_request`` for the prompt."""
    GRACE_PERIOD = "grace period"
    """The handler did not answer within the cancel grace period."""
    MAX_DURATION = "max prompt duration"
    """The turn ran longer than the maximum prompt duration."""
    CONNECTION_CLOSED = "connection closed"
    """The connection ended."""
    ANSWERED = "answered"
    """The turn was answered (the signal fires so that waiting work stops)."""
    STOPPED = "stopped"
    """The client's user pressed stop (:meth:`CancellationSignal.cancel`)."""


class OneShotSignal:
    """A one-shot flag with listeners and an Observable view. Thread-safe."""

    __slots__ = ("_listeners", "_lock", "_reason", "_set", "_subject")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._reason: CancelReason | None = None
        self._listeners: list[Callable[[], None]] = []
        self._subject: AsyncSubject[CancelReason] | None = None

    @property
    def reason(self) -> CancelReason | None:
        """What fired the signal (``None`` until it fired)."""
        return self._reason

    def is_set(self) -> bool:
        """True once the signal fired (sticky)."""
        return self._set

    def fire(self, reason: CancelReason) -> bool:
        """Fire the signal; True if this call fired it (later calls are no-ops). Listeners run
        on the calling thread, once each; a failing one is logged."""
        with self._lock:
            if self._set:
                return False
            self._set = True
            self._reason = reason
            listeners, self._listeners = self._listeners, []
            subject = self._subject
        for listener in listeners:
            try:
                listener()
            except Exception:
                _log.exception("a %s listener failed", type(self).__name__)
        if subject is not None:
            subject.on_next(reason)
            subject.on_completed()
        return True

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` once when the signal fires (now, if it has); returns a function
        that removes it (a no-op once it ran)."""
        with self._lock:
            if not self._set:
                self._listeners.append(listener)
                return lambda: self._remove(listener)
        listener()
        return lambda: None

    def _remove(self, listener: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def when_fired(self) -> reactivex.Observable[CancelReason]:
        """The reason once, then completion, when the signal fires (late subscribers too)::

        not fired yet:   -----r|      (r: the CancelReason)
        already fired:   r|
        """
        with self._lock:
            if self._subject is None:
                self._subject = AsyncSubject()
                if self._set:
                    assert self._reason is not None
                    self._subject.on_next(self._reason)
                    self._subject.on_completed()
            return self._subject
