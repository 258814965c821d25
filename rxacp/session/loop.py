"""``LoopRunner``: the one asyncio event loop that drives a connection.

Either a loop this module starts on its own daemon thread (the default), or a loop the user
already runs and passes in. ``call`` hands a function to the loop from any thread (running it
inline when already on the loop); ``run`` waits for a coroutine with a bound.

This module is *not* responsible for any protocol state; it only owns the thread and the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from rxacp.transport._handoff import Handoff, close_loop

__all__ = ["LoopRunner"]


def _nothing() -> None:
    pass


_T = TypeVar("_T")


class _Counted:
    """A queued call that passed the outbound gate (released when its batch has run)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn


class LoopRunner:
    """Owns (or borrows) the connection's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, *, name: str = "rxacp-loop"):
        self._owned = loop is None
        self._counted = 0  # gated calls run by the batch under way (loop thread)
        self._handoff: Handoff[Callable[[], Any] | _Counted] = Handoff(
            self._run_one, on_batch=(_nothing, self._batch_end)
        )
        self._thread: threading.Thread | None = None
        self._thread_id: int | None = None
        if loop is None:
            self.loop = asyncio.new_event_loop()
            ready = threading.Event()

            def main() -> None:
                asyncio.set_event_loop(self.loop)
                self._thread_id = threading.get_ident()
                self.loop.call_soon(ready.set)
                try:
                    self.loop.run_forever()
                finally:
                    close_loop(self.loop)  # not its executor: a handler's thread may block

            self._thread = threading.Thread(target=main, name=name, daemon=True)
            self._thread.start()
            ready.wait(10)
        else:
            self.loop = loop
        self._handoff.attach(self.loop)

    def set_batch_hooks(self, begin: Callable[[], Any], end: Callable[[], Any]) -> None:
        """Call ``begin()`` and ``end()`` around each batch of queued calls (the session corks
        its transport there, so the frames one batch writes go out together)."""

        def batch_end() -> None:
            try:
                end()
            finally:
                self._batch_end()

        self._handoff.set_batch_hooks((begin, batch_end))

    @property
    def owned(self) -> bool:
        """True when this runner started the loop (and will stop it)."""
        return self._owned

    def in_loop(self) -> bool:
        """True when the calling thread is the loop's thread."""
        if self._thread_id is not None:
            return threading.get_ident() == self._thread_id
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def call(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the loop: inline if already there, else queued (see :meth:`call_later`)."""
        if self.in_loop():
            fn()
        else:
            self._handoff.push(fn)

    def call_later(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` on the loop (never inline), from any thread, in call order.

        Calls are batched: one wake-up of the loop runs every function queued until the loop
        gets to it, instead of one wake-up per function (a worker streaming updates queues
        thousands). Functions run in the order they were queued, also relative to :meth:`call`
        from other threads (one queue). Once the loop is closed, calls are dropped.
        """
        self._handoff.push(fn, self.loop if self.in_loop() else None)

    def _call_counted(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` like :meth:`call_later`; :meth:`_batch_ran` is told once it ran."""
        if not self._handoff.push(_Counted(fn)):
            self._batch_ran(1)  # never runs: give its gate slot back

    def _batch_ran(self, counted: int) -> None:
        """Hook: a batch that ran ``counted`` calls queued by :meth:`_call_counted` is over."""

    def _run_one(self, item: Callable[[], Any] | _Counted) -> None:
        if type(item) is _Counted:
            self._counted += 1
            fn = item.fn
        else:
            fn = item  # type: ignore[assignment]
        try:
            fn()
        except Exception as exc:
            self.loop.call_exception_handler(
                {"message": f"Exception in callback {fn!r}", "exception": exc}
            )

    def _batch_end(self) -> None:
        if self._counted:
            counted, self._counted = self._counted, 0
            self._batch_ran(counted)

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float | None) -> _T:
        """Run ``coro`` on the loop and wait for it from another thread, at most ``timeout`` s."""
        if self.in_loop():
            raise RuntimeError("LoopRunner.run() would block the connection's own event loop")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    def stop(self, timeout: float = 5.0) -> None:
        """Stop and close an owned loop and join its thread (no-op for a borrowed loop)."""
        if not self._owned or self._thread is None:
            return
        if self.loop.is_closed():
            return
        try:
            self.loop.call_soon_threadsafe(self.loop.stop)
        except RuntimeError:
            return
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
