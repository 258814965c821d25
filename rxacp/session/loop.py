"""``LoopRunner``: the one asyncio event loop that drives a connection.

Either a loop this module starts on its own daemon thread (the default), or a loop the user
already runs and passes in. ``call`` hands a function to the loop from any thread (running it
inline when already on the loop); ``run`` waits for a coroutine with a bound.

This module is *not* responsible for any protocol state; it only owns the thread and the loop.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from rxacp.transport._handoff import close_loop

__all__ = ["LoopRunner"]

_T = TypeVar("_T")


class LoopRunner:
    """Owns (or borrows) the connection's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, *, name: str = "rxacp-loop"):
        self._owned = loop is None
        self._queue: collections.deque[Callable[[], Any]] = collections.deque()
        self._queue_lock = threading.Lock()
        self._drain_scheduled = False
        self._counted = 0  # queued with counted=True and not taken by a drain yet
        self.batch_hooks: tuple[Callable[[], Any], Callable[[], Any]] | None = None
        """Optional ``(begin, end)`` called around each batch of queued calls (the session
        corks its transport there, so the frames one batch writes go out together)."""
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
            self._enqueue(fn)

    def call_later(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` on the loop (never inline), from any thread, in call order.

        Calls are batched: one ``call_soon_threadsafe`` (one wake-up of the loop) runs every
        function queued until the loop gets to it, instead of one wake-up per function (a worker
        streaming updates queues thousands). Functions run in the order they were queued, also
        relative to :meth:`call` from other threads (one queue).
        """
        self._enqueue(fn)

    def _enqueue(self, fn: Callable[[], Any], counted: bool = False) -> None:
        with self._queue_lock:
            self._queue.append(fn)
            if counted:
                self._counted += 1
            if self._drain_scheduled:
                return
            self._drain_scheduled = True
        try:
            self.loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # loop closed: nothing left to do there
            with self._queue_lock:
                self._queue.clear()
                self._drain_scheduled = False
                self._counted = 0

    def _batch_ran(self, counted: int) -> None:
        """Hook: a batch holding ``counted`` calls queued with ``counted=True`` has run."""

    def _drain(self) -> None:
        """Run the functions queued so far (loop thread); later ones get their own drain."""
        queue = self._queue
        with self._queue_lock:
            self._drain_scheduled = False
            count = len(queue)
            counted, self._counted = self._counted, 0  # exactly those among the `count` taken
        hooks = self.batch_hooks
        if hooks is not None:
            hooks[0]()
        try:
            for _ in range(count):
                fn = queue.popleft()
                try:
                    fn()
                except Exception as exc:
                    self.loop.call_exception_handler(
                        {"message": f"Exception in callback {fn!r}", "exception": exc}
                    )
        finally:
            if hooks is not None:
                hooks[1]()
            if counted:
                self._batch_ran(counted)
            if count and queue:  # interrupted by a BaseException: keep the rest going
                with self._queue_lock:
                    if not self._drain_scheduled:
                        self._drain_scheduled = True
                        self.loop.call_soon(self._drain)

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
