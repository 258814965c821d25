"""``LoopRunner``: the one asyncio event loop that drives a connection.

Either a loop this module starts on its own daemon thread (the default), or a loop the user
already runs and passes in. ``call`` hands a function to the loop from any thread (running it
inline when already on the loop); ``run`` waits for a coroutine with a bound.

This module is *not* responsible for any protocol state; it only owns the thread and the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["LoopRunner"]

_T = TypeVar("_T")


class LoopRunner:
    """Owns (or borrows) the connection's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, *, name: str = "rxacp-loop"):
        self._owned = loop is None
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
                    self._shutdown_loop()

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
        """Run ``fn`` on the loop: inline if already there, else via ``call_soon_threadsafe``."""
        if self.in_loop():
            fn()
        else:
            with contextlib.suppress(RuntimeError):  # loop closed: nothing left to do there
                self.loop.call_soon_threadsafe(fn)

    def call_later(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` on the loop (never inline), from any thread."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(fn)

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

    def _shutdown_loop(self) -> None:
        loop = self.loop
        try:
            tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
