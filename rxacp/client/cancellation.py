"""``CancellationSignal``: the stop button of one prompt turn.

Pass a signal to ``AcpAsyncClient.prompt(request, stop)`` / ``AcpSyncClient.prompt(request,
stop)`` and call :meth:`CancellationSignal.cancel` from any thread: while the prompt is in flight
the client sends ``session/cancel`` for its session (exactly once) and the prompt still emits the
agent's answer (normally stop reason ``cancelled``) after every update of the turn.

This module is *not* responsible for sending anything: it only records "cancelled" once and
tells its listeners (the client's prompt pipelines) about it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import reactivex
from reactivex import abc
from reactivex import operators as ops

from ..roles.signal import CancelReason, OneShotSignal
from ..session.observable import AcpObservable

__all__ = ["CancellationSignal", "RequestCancellation"]

_T = TypeVar("_T")


class CancellationSignal(OneShotSignal):
    """A thread-safe, one-shot "stop" flag for a prompt turn (the engine's one-shot signal).

    A signal is cancelled once and stays cancelled; :meth:`cancel` is idempotent. Use a new
    signal for each prompt. Semantics, seen from the prompt it was passed to:

    * cancelled **before** the prompt is subscribed: nothing is sent; the prompt emits
      ``PromptResponse.cancelled()`` locally ("cancelled" means it did not happen, or the peer
      was told);
    * cancelled **while** the prompt is in flight: ``session/cancel`` is sent once and the
      prompt still emits the agent's answer;
    * cancelled **after** the answer: nothing is sent.

    Example::

        stop = CancellationSignal()
        ui.on_stop_clicked(stop.cancel)          # any thread
        response = sync_client.prompt(request, stop)

    :meth:`add_listener` (inherited) runs a callback once on cancellation and returns a remover.
    """

    __slots__ = ()

    def is_cancelled(self) -> bool:
        """True once :meth:`cancel` has been called (and forever after)."""
        return self.is_set()

    def cancel(self) -> None:
        """Cancel the prompt this signal was passed to. Thread-safe; later calls do nothing.

        Listeners run on the calling thread, once each; they must be quick.
        """
        self.fire(CancelReason.STOPPED)

    def when_cancelled(self) -> reactivex.Observable[bool]:
        """An Observable that emits ``True`` then completes when the signal is cancelled::

            not cancelled yet:   -----T|    (on cancel())
            already cancelled:   T|

        Use it as a notifier, e.g. ``work.pipe(ops.take_until(stop.when_cancelled()))``
        (``take_until`` stops on the first emission).
        """
        return self.when_fired().pipe(ops.map(lambda _reason: True))

    def __repr__(self) -> str:
        return f"CancellationSignal(cancelled={self.is_set()})"


class RequestCancellation:
    """Graceful cancellation of requests (Java ``RequestCancellation``).

    :meth:`cancel_when` is the Java SDK's ``contextWrite(RequestCancellation.cancelWhen(t))``:
    the requests subscribed through it are cancelled when ``trigger`` emits or completes, and
    **still wait for the peer's answer**, unlike ``ops.take_until(trigger)``, which disposes
    the request (it sends the same cancel, but drops the answer and completes empty).
    """

    def __init__(self) -> None:
        raise TypeError("RequestCancellation is a namespace: use RequestCancellation.cancel_when")

    @staticmethod
    def cancel_when(
        trigger: reactivex.Observable[Any],
    ) -> Callable[[reactivex.Observable[_T]], AcpObservable[_T]]:
        """An operator: ``client.prompt(req).pipe(RequestCancellation.cancel_when(stop))``.

        When ``trigger`` emits a value or completes while a request subscribed through the
        operator waits for its answer, the cancel is sent once — ``session/cancel`` for a
        prompt, ``$/cancel_request`` for any other request — and the request then ends with the
        peer's answer: for a prompt normally stop reason ``cancelled``; otherwise its result
        or ``AcpProtocolException`` ``-32800`` (or the request timeout if the peer never
        answers). A trigger that fails is ignored. Every request subscribed (synchronously)
        under the operator is covered, at most one cancel each, whichever way it is cancelled
        (a later disposal sends no second ``$/cancel_request``)::

            prompt    ──u──u──────u──R(cancelled)|
            trigger   ───────x                     (x: emits or completes)
            wire             session/cancel

            ext call  ──────────────X(-32800)      (or its result, if the peer finished)
            trigger   ─────x
            wire           $/cancel_request

        The trigger is carried like Java's Reactor context (a ``contextvars.ContextVar``, set
        while subscribing), so it does not cross a ``subscribe_on`` to another scheduler.
        """
        from ..session.graceful import graceful_trigger

        def operator(source: reactivex.Observable[_T]) -> AcpObservable[_T]:
            def subscribe(
                observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
            ) -> abc.DisposableBase:
                with graceful_trigger(trigger):
                    return source.subscribe(observer, scheduler=scheduler)

            return AcpObservable(subscribe)

        return operator
