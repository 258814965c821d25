"""Helpers of the client calls: request coercion, the protocol-version error, the stop-signal
wrapper of a prompt, small Observables, and the context-manager form both clients share.

This module is *not* responsible for sending anything itself; ``async_client.py`` does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from .._durations import Duration
from ..errors import AcpProtocolVersionException
from ..schema import AcpModel, PromptResponse
from ..schema import methods as m
from ..session import AcpObservable
from ..session.graceful import current_trigger, graceful_trigger
from .cancellation import CancellationSignal

__all__ = [
    "CONTENT_CAPABILITIES",
    "LATEST_PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AcpProtocolVersionException",
    "ClosesGracefully",
    "RequestLike",
    "coerce",
    "send_now",
    "sent_on_subscribe",
    "stoppable",
]

SUPPORTED_PROTOCOL_VERSIONS: frozenset[int] = frozenset({1})
"""ACP protocol versions this client speaks; it sends the latest in ``initialize``."""

LATEST_PROTOCOL_VERSION = max(SUPPORTED_PROTOCOL_VERSIONS)

RequestLike = Mapping[str, Any]
"""The wire JSON (camelCase dict) of a request, validated into the method's model; each call
also takes the model itself (``NewSessionRequest | RequestLike``), and no other model."""

# content block type -> the promptCapabilities flag it needs (text and resource_link are baseline)
CONTENT_CAPABILITIES = {
    "image": "promptCapabilities.image",
    "audio": "promptCapabilities.audio",
    "resource": "promptCapabilities.embeddedContext",
}


def coerce(spec: m.MethodSpec, request: Any) -> AcpModel:
    """``request`` as the method's params model, or a TypeError naming what was expected."""
    model = spec.params_type
    if isinstance(request, model):
        return request  # stable and unstable share the class of every unchanged definition
    if isinstance(request, Mapping):
        return model.from_wire(dict(request))
    given = type(request)
    name = given.__name__
    if name == model.__name__:  # the other schema's definition, which differs from this one
        name = f"{given.__module__.removesuffix('._generated')}.{name} (pass its .to_wire())"
    raise TypeError(f"{spec.python_name}() takes a {model.__name__} (or its wire dict), not {name}")


def stoppable(
    source: AcpObservable[Any],
    stop: CancellationSignal | None,
    send_cancel: Callable[[], object],
) -> AcpObservable[Any]:
    """``source`` (a prompt) with ``stop`` attached, and the ``cancel_when`` trigger of the
    subscription (:mod:`rxacp.session.graceful`), which works like a ``stop.cancel()``.

    Already cancelled at subscription: emits ``PromptResponse.cancelled()``, sends nothing.
    Cancelled while in flight: ``send_cancel()`` once; the prompt's own answer still follows.
    Cancelled after the answer or after disposal: nothing.
    """

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        trigger = current_trigger()
        if trigger is None and stop is None:
            return source.subscribe(observer, scheduler=scheduler)
        signal = CancellationSignal() if stop is None else stop
        return _stoppable_subscribe(source, signal, trigger, send_cancel, observer, scheduler)

    return AcpObservable(subscribe)


def _stoppable_subscribe(
    source: AcpObservable[Any],
    stop: CancellationSignal,
    trigger: reactivex.Observable[Any] | None,
    send_cancel: Callable[[], object],
    observer: abc.ObserverBase[Any],
    scheduler: abc.SchedulerBase | None,
) -> abc.DisposableBase:
    if stop.is_cancelled():
        observer.on_next(PromptResponse.cancelled())
        observer.on_completed()
        return Disposable()
    lock = threading.Lock()
    done = [False]

    def finish() -> bool:
        with lock:
            was, done[0] = done[0], True
        return not was

    def on_next(value: Any) -> None:
        if isinstance(value, PromptResponse):  # prompt_turn() also emits its updates
            finish()
        observer.on_next(value)

    def on_error(error: Exception) -> None:
        finish()
        observer.on_error(error)

    def on_stop() -> None:
        if finish():
            send_cancel()

    with graceful_trigger(None):  # a prompt's graceful cancel is session/cancel (on_stop)
        subscription = source.subscribe(
            on_next, on_error, observer.on_completed, scheduler=scheduler
        )
    remove = stop.add_listener(on_stop)  # after the request was handed to the loop
    watch = (
        None
        if trigger is None
        else trigger.subscribe(lambda _: on_stop(), lambda _e: None, on_stop)
    )

    def dispose() -> None:
        finish()
        remove()
        if watch is not None:
            watch.dispose()
        subscription.dispose()

    return Disposable(dispose)


def sent_on_subscribe(send: Callable[[], object]) -> AcpObservable[Any]:
    """A cold Observable that runs ``send`` (a notification's write) on each subscription, then
    completes; an exception from ``send`` is its error::

        subscribe ──send()──▶ |
    """

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        try:
            send()
        except Exception as exc:
            observer.on_error(exc)
        else:
            observer.on_completed()
        return Disposable()

    return AcpObservable(subscribe)


def send_now(source: AcpObservable[Any]) -> None:
    """Subscribe to a :func:`sent_on_subscribe` Observable and raise its error, if any (the
    blocking twins of ``cancel`` and ``ext_notification``)."""
    errors: list[Exception] = []
    source.subscribe(on_error=errors.append)
    if errors:
        raise errors[0]


class ClosesGracefully:
    """``with client:`` (``AcpAsyncClient``, ``AcpSyncClient``): the client itself, closed
    gracefully (:meth:`close_gracefully`) on the way out, whatever ends the block."""

    def close_gracefully(self, timeout: Duration | None = None) -> object:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close_gracefully()
