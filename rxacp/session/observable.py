"""``AcpObservable``: a reactivex ``Observable`` that can be awaited from any asyncio loop.

rxacp emits answers on the connection's event-loop thread. A plain ``await observable`` in
reactivex resolves its future from whatever thread emits, which stalls when that is not the
awaiting loop's thread. ``AcpObservable`` hands the outcome to the awaiting loop with
``call_soon_threadsafe`` and disposes the subscription when the awaiting task is cancelled
(which, for a request, sends ``$/cancel_request``). ``pipe`` keeps the type, so
``await client.prompt(req).pipe(ops.map(f))`` works too. Outside asyncio, ``block()`` is the
Java SDK's ``.block()``, and ``pipe(ops.to_future(concurrent.futures.Future))`` its
``.toFuture()``.

This module is *not* responsible for sending anything; it only adapts emissions to asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator
from typing import Any, TypeVar, cast, overload

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from .._compat import running_loop, subscribe_core
from .._durations import Duration, to_seconds
from .blocking import wait_for
from .direct import subscribe_direct

__all__ = ["AcpObservable"]

_T = TypeVar("_T")
_A = TypeVar("_A")
_B = TypeVar("_B")
_C = TypeVar("_C")
_D = TypeVar("_D")
_E = TypeVar("_E")
_F = TypeVar("_F")
_G = TypeVar("_G")
_X = TypeVar("_X")
_Y = TypeVar("_Y")

_O = reactivex.Observable
_Op = Callable[[_X], _Y]
"""One operator of a ``pipe``: the previous result ``_X`` -> ``_Y``."""


class AcpObservable(reactivex.Observable[_T]):
    """An Observable that is safely awaitable from any asyncio event loop.

    ``await obs`` returns the last value emitted (``None`` if it completed empty) and raises the
    error it ended with. Cancelling the awaiting task disposes the subscription.
    """

    def subscribe(
        self,
        on_next: abc.ObserverBase[_T] | abc.OnNext[_T] | None = None,
        on_error: abc.OnError | None = None,
        on_completed: abc.OnCompleted | None = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        """Like ``Observable.subscribe``, without the current-thread trampoline.

        Every ``AcpObservable`` hands its work to the connection's loop (or subscribes an inner
        Observable, which sets up its own trampoline), so the trampoline reactivex builds around
        each subscription buys nothing here (see :mod:`rxacp.session.direct`).
        """
        if isinstance(on_next, abc.ObserverBase) or callable(getattr(on_next, "on_next", None)):
            observer: Any = on_next
            on_next, on_error, on_completed = (
                observer.on_next,
                observer.on_error,
                observer.on_completed,
            )
        return subscribe_direct(self, cast(Any, on_next), on_error, on_completed, scheduler)

    # mypy rejects an override whose overloads narrow the base's (``Observable[B]`` from the last
    # operator -> ``AcpObservable[B]``) although it is type-safe: the result is a subclass of
    # what the base returns for the same operators. The one ignore of this module. Per operator
    # count: the last returns an Observable (an ``AcpObservable`` results), or anything else.
    # Written one overload in a line or two (the formatter would give each parameter one).
    # fmt: off
    @overload  # type: ignore[override]
    def pipe(self, o1: _Op[_O[_T], _O[_A]], /) -> AcpObservable[_A]: ...
    @overload
    def pipe(self, o1: _Op[_O[_T], _A], /) -> _A: ...
    @overload
    def pipe(self, o1: _Op[_O[_T], _A], o2: _Op[_A, _O[_B]], /) -> AcpObservable[_B]: ...
    @overload
    def pipe(self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], /) -> _B: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _O[_C]], /
    ) -> AcpObservable[_C]: ...
    @overload
    def pipe(self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], /) -> _C: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _O[_D]], /
    ) -> AcpObservable[_D]: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D], /
    ) -> _D: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D],
        o5: _Op[_D, _O[_E]], /
    ) -> AcpObservable[_E]: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D],
        o5: _Op[_D, _E], /
    ) -> _E: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D],
        o5: _Op[_D, _E], o6: _Op[_E, _O[_F]], /
    ) -> AcpObservable[_F]: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D],
        o5: _Op[_D, _E], o6: _Op[_E, _F], /
    ) -> _F: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D],
        o5: _Op[_D, _E], o6: _Op[_E, _F], o7: _Op[_F, _O[_G]], /
    ) -> AcpObservable[_G]: ...
    @overload
    def pipe(
        self, o1: _Op[_O[_T], _A], o2: _Op[_A, _B], o3: _Op[_B, _C], o4: _Op[_C, _D],
        o5: _Op[_D, _E], o6: _Op[_E, _F], o7: _Op[_F, _G], /
    ) -> _G: ...

    # fmt: on
    def pipe(self, *operators: Callable[[Any], Any]) -> Any:
        """Like ``Observable.pipe``; the result is an ``AcpObservable`` when it is an Observable.

        Typed like ``Observable.pipe`` (up to seven operators): when the last operator returns an
        ``Observable[B]`` the result is an ``AcpObservable[B]``, otherwise what that operator
        returns (``ops.to_future(...)`` gives a ``Future``)::

            --a--b--|  .pipe(ops.map(f))  ->  --f(a)--f(b)--|   (an AcpObservable)
        """
        result = super().pipe(*operators)
        if isinstance(result, reactivex.Observable) and not isinstance(result, AcpObservable):
            return _wrap(result)
        return result

    def block(self, timeout: Duration | None = None) -> _T:
        """Subscribe, block the calling thread until the end, and return the last value.

        The Java SDK's ``Mono.block()`` / ``block(Duration)``::

            --a--b--|   ->  returns b          --|   ->  returns None
            --a--X      ->  raises X           ----  ->  (timeout) raises AcpTimeoutException

        ``timeout`` is a ``timedelta`` or seconds; ``None`` (or ``0``) waits as long as it takes.
        On timeout, and when the wait is interrupted (``KeyboardInterrupt``), the subscription is
        disposed first, so a request is cancelled on the wire (``$/cancel_request``; for a
        prompt what disposal of a prompt sends). Raises ``RuntimeError`` when called on a thread
        that runs an asyncio event loop (it would stall that loop: ``await`` the Observable).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # no loop on this thread: blocking is fine
        else:
            raise RuntimeError(
                "block() called on a thread that runs an asyncio event loop; "
                "await the Observable instead"
            )
        seconds = to_seconds(timeout, name="timeout")
        return wait_for(self, seconds, what="block()")

    def __await__(self) -> Generator[Any, None, _T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        sink = _FutureSink(future, loop)
        subscription: Any
        try:  # a bare sink, not subscribe(): awaiting needs none of the Rx observer wrappers
            subscription = subscribe_core(self, sink)
        except Exception as exc:
            sink.on_error(exc)
            subscription = None
        try:
            return (yield from future.__await__())
        finally:  # answered, failed or cancelled (for a request: sends $/cancel_request)
            sink.done = True  # a late emission is ignored
            dispose = getattr(subscription, "dispose", subscription)
            if callable(dispose):
                dispose()


class _FutureSink(abc.ObserverBase[Any]):
    """The observer behind ``await``: keeps the last value, settles the future once, on the
    awaiting loop (directly when already there, else with ``call_soon_threadsafe``)."""

    __slots__ = ("done", "future", "last", "loop")

    def __init__(self, future: asyncio.Future[Any], loop: asyncio.AbstractEventLoop) -> None:
        self.future = future
        self.loop = loop
        self.last: Any = None
        self.done = False

    def on_next(self, value: Any) -> None:
        if not self.done:
            self.last = value

    def on_error(self, error: Exception) -> None:
        if not self.done:
            self.done = True
            self._settle(self._fail, error)

    def on_completed(self) -> None:
        if not self.done:
            self.done = True
            self._settle(self._succeed, self.last)

    def _settle(self, fn: Callable[[Any], None], value: Any) -> None:
        if running_loop() is self.loop:
            fn(value)
        else:
            # a closed awaiting loop means nobody is waiting any more
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(fn, value)

    def _succeed(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def _fail(self, error: Exception) -> None:
        if not self.future.done():
            self.future.set_exception(error)


def _wrap(source: reactivex.Observable[_T]) -> AcpObservable[_T]:
    def subscribe(
        observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return source.subscribe(observer, scheduler=scheduler)

    return AcpObservable(subscribe)


def as_acp_observable(source: reactivex.Observable[_T]) -> AcpObservable[_T]:
    """Return ``source`` as an :class:`AcpObservable` (no-op if it already is one); the
    emissions are unchanged: ``--a--b|`` → ``--a--b|``, now awaitable from any loop."""
    return source if isinstance(source, AcpObservable) else _wrap(source)


_ = Disposable  # re-exported for subclasses that build teardown logic
