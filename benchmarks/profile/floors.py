"""Costs outside rxacp that bound the issue-21 targets, measured on this machine.

    python benchmarks/profile/floors.py [N]

No rxacp code runs in any of these rows; each is what the target's budget has to absorb:

* ``thread hand-off``: one caller-thread → event-loop-thread → caller round (the loop sets a
  ``threading.Event`` it was handed with ``call_soon_threadsafe``). A blocking client pays one
  per request and a blocking agent one per handled request (loop → worker → loop), because a
  blocking call must not run on the loop (DESIGN §3) and asyncio transports are loop-only.
* ``reactivex.empty()`` / ``just(x)`` / ``defer(lambda _: just(x))``: building the Observable a
  Java-style consumer or handler returns, and subscribing it with a bare observer through
  ``Observable._subscribe_core`` (no trampoline of rxacp's own; ``defer`` still subscribes its
  inner Observable through ``Observable.subscribe``, trampoline included).
* ``plain callable``: the cost of the plain-value consumer or handler they are compared with.

CPU microseconds per operation (``time.process_time``, all threads), median of five runs.
Not a unit test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import reactivex

__all__ = ["main", "measure"]


class _Sink:
    """A bare observer that ignores everything."""

    def on_next(self, _value: Any) -> None:
        pass

    def on_error(self, _error: Exception) -> None:
        pass

    def on_completed(self) -> None:
        pass


def _per_op(fn: Callable[[], Any], n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def measure(n: int = 20000) -> dict[str, float]:
    """Median CPU µs per operation of each row (five runs of ``n``)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="floors-loop", daemon=True)
    thread.start()

    def hand_off() -> None:
        done = threading.Event()
        loop.call_soon_threadsafe(done.set)
        done.wait()

    sink: Any = _Sink()
    rows: dict[str, Callable[[], Any]] = {
        "thread hand-off (caller -> loop -> caller)": hand_off,
        "reactivex.empty(): build + subscribe": lambda: reactivex.empty()._subscribe_core(sink),
        "reactivex.just(x): build + subscribe": lambda: reactivex.just(1)._subscribe_core(sink),
        "reactivex.defer(lambda _: just(x)): build + subscribe": lambda: reactivex.defer(
            lambda _s: reactivex.just(1)
        )._subscribe_core(sink),
        "plain callable returning None": lambda: None,
    }
    try:
        return {
            name: statistics.median(_per_op(fn, n) for _ in range(5)) for name, fn in rows.items()
        }
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def main() -> None:
    """Print the table."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    print("| cost outside rxacp | CPU µs per op |\n|---|---:|")
    for name, value in measure(n).items():
        print(f"| {name} | {value:.1f} |")


if __name__ == "__main__":
    main()
