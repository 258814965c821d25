"""``CancelSignal``: the "this prompt turn is cancelled" signal, one per turn.

It is the engine's :class:`~rxacp.roles.signal.OneShotSignal`, fired at most once, by
whichever trigger comes first (``session/cancel``, ``session/close``, ``$/cancel_request``, the
grace period, the maximum duration, or the connection closing), with its
:class:`~rxacp.roles.signal.CancelReason`; all triggers look the same from the handler's
side: :meth:`is_set`, :meth:`on_cancel` (quick, non-blocking callbacks) and
:meth:`when_cancelled` (for ``ops.take_until``).

This module is *not* responsible for deciding when a turn is cancelled or what it answers; see
``turn.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import reactivex

from ..roles.signal import CancelReason, OneShotSignal

__all__ = ["CancelSignal"]


class CancelSignal(OneShotSignal):
    """A prompt turn's cancellation: the one-shot signal with the agent's vocabulary."""

    __slots__ = ()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once when the signal fires, or now if it already has."""
        self.add_listener(callback)

    def when_cancelled(self) -> reactivex.Observable[CancelReason]:
        """An Observable that emits the reason once and completes when the signal fires.

        Late subscribers get the same::

            when_cancelled()   ----------r|      (r: the CancelReason, e.g. SESSION_CANCEL)

        It emits a value (rather than completing empty, as the Java SDK's ``Mono<Void>`` does)
        because RxPY's ``take_until`` reacts only to a value, and
        ``work.pipe(ops.take_until(ctx.when_cancelled()))`` is the pattern it exists for.
        """
        return self.when_fired()
