"""``Completion``: the outcome of a lifecycle step (start, graceful close) as a hot Observable.

Java's lifecycle calls return ``Mono<Void>`` (``agent.start().block()``,
``client.closeGracefully().block(timeout)``); rxacp's run the step **eagerly** when called, as a
plain Python call expects, and return a :class:`Completion` of it. A completion is settled once
and replays its outcome to every subscriber, however late (an ``AsyncSubject`` of ``None``)::

    step done:    --None|        step failed:  --X        (X: the step's exception)

It emits ``None`` before completing so that ``.run()`` and ``.block()`` return ``None``,
``await`` works on any loop, and ``.pipe(ops.flat_map(lambda _: next_step))`` chains the next
step (Java's ``.then(next)``). An error is kept until someone observes it, never dropped.

Where the step ran: off the connection's loop the call returns once the step is done (the
completion is already settled); on the connection's own loop the step is scheduled and the
completion settles when it finished. This module is *not* responsible for the steps
themselves (``session.py``, ``connection.py``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from reactivex import abc
from reactivex.disposable import Disposable

from .._durations import Duration, to_seconds
from .observable import AcpObservable

__all__ = ["Completion"]

_log = logging.getLogger("rxacp.session")


class Completion(AcpObservable[None]):
    """A lifecycle step's outcome: ``--None|`` once it is done, ``--X`` if it failed.

    Hot and replayed: subscribing after the step finished still sees the outcome. Thread-safe.
    ``block(timeout)`` (Java ``.block(Duration)``), ``run()``, ``await`` and ``subscribe``
    all work; :attr:`done` polls it.
    """

    def __init__(self, what: str = "step") -> None:
        self._what = what
        self._lock = threading.Lock()
        self._settled = False
        self._error: BaseException | None = None
        self._observers: list[abc.ObserverBase[None]] = []
        self._event = threading.Event()
        self._task: asyncio.Task[None] | None = None
        super().__init__(self._subscribe_completion)

    # ------------------------------------------------------------------ factories
    @classmethod
    def of_done(cls, what: str = "step") -> Completion:
        """A completion of a step that already finished: ``--None|``."""
        completion = cls(what)
        completion.complete()
        return completion

    @classmethod
    def of_failure(cls, error: BaseException, what: str = "step") -> Completion:
        """A completion of a step that already failed: ``--X``."""
        completion = cls(what)
        completion.fail(error)
        return completion

    @classmethod
    def of_awaitable(
        cls, loop: asyncio.AbstractEventLoop, awaitable: Callable[[], Awaitable[Any]], what: str
    ) -> Completion:
        """Run ``awaitable()`` as a task on ``loop`` (from any thread); settle when it ends."""
        completion = cls(what)

        async def run() -> None:
            await awaitable()

        def settle(future: asyncio.Future[None] | concurrent.futures.Future[None]) -> None:
            if future.cancelled():
                completion.fail(asyncio.CancelledError(f"{what} was cancelled"))
                return
            error = future.exception()
            if error is None:
                completion.complete()
            else:
                completion.fail(error)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task = loop.create_task(run())
            task.add_done_callback(settle)
            completion._task = task  # the loop keeps only a weak reference to its tasks
        else:
            asyncio.run_coroutine_threadsafe(run(), loop).add_done_callback(settle)
        return completion

    @classmethod
    def all_of(cls, parts: list[Completion], what: str = "steps") -> Completion:
        """Done when every one of ``parts`` is done; fails with the first failure (Java's
        ``Mono.when(a, b)``)::

            a: --None|   b: ----None|   all_of([a, b]): ----None|
        """
        completion = cls(what)
        remaining = [len(parts)]
        lock = threading.Lock()

        def one_done() -> None:
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last:
                completion.complete()

        if not parts:
            completion.complete()
        for part in parts:
            part.subscribe(on_error=completion.fail, on_completed=one_done)
        return completion

    # ------------------------------------------------------------------ settling
    @property
    def done(self) -> bool:
        """True once the step finished (successfully or not)."""
        with self._lock:
            return self._settled

    @property
    def error(self) -> BaseException | None:
        """The step's exception, once it failed (``None`` otherwise)."""
        with self._lock:
            return self._error

    def wait(self, timeout: Duration | None = None) -> bool:
        """Block until the step finished (at most ``timeout``: a ``timedelta`` or seconds,
        ``None`` as long as it takes); True if it has. Does not raise the step's error
        (:meth:`block` does)."""
        return self._event.wait(to_seconds(timeout, name="timeout"))

    def complete(self) -> None:
        """Settle as done (the first settle wins)."""
        self._settle(None)

    def fail(self, error: BaseException) -> None:
        """Settle as failed with ``error`` (the first settle wins)."""
        _log.debug("%s failed: %r", self._what, error)
        self._settle(error)

    def _settle(self, error: BaseException | None) -> None:
        with self._lock:
            if self._settled:
                return
            self._settled = True
            self._error = error
            observers, self._observers = self._observers, []
        self._event.set()
        for observer in observers:
            self._deliver(observer, error)

    @staticmethod
    def _deliver(observer: abc.ObserverBase[None], error: BaseException | None) -> None:
        if error is None:
            observer.on_next(None)
            observer.on_completed()
        elif isinstance(error, Exception):
            observer.on_error(error)
        else:  # a BaseException (KeyboardInterrupt...) reaches Rx observers as an Exception
            observer.on_error(RuntimeError(f"step ended by {error!r}"))

    def _subscribe_completion(
        self, observer: abc.ObserverBase[None], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        with self._lock:
            if not self._settled:
                self._observers.append(observer)
                return Disposable(lambda: self._forget(observer))
            error = self._error
        self._deliver(observer, error)
        return Disposable()

    def _forget(self, observer: abc.ObserverBase[None]) -> None:
        with self._lock:
            if observer in self._observers:
                self._observers.remove(observer)

    def __repr__(self) -> str:
        with self._lock:
            state = "pending" if not self._settled else "failed" if self._error else "done"
        return f"<Completion of {self._what}: {state}>"
