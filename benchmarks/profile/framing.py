"""The line framer's speed, measured (moved here from the unit suite, which checks only what the
framer returns).

    python benchmarks/profile/framing.py

Two rows, median of five runs, wall time on this machine:

* ``64 MiB line``: one line fed in 64 KiB chunks. The framer keeps an unfinished line in
  pieces and scans only what is new, so this is linear in the input; a framer that re-scans its
  buffer would take seconds (quadratic). Target: under 1 s on a 2-core machine.
* ``small lines``: 100,000 typical ``session/update`` lines in 64 KiB chunks. Target: over
  200,000 lines/s.

Not a unit test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import statistics
import time

from rxacp.transport.framing import LineFramer


def one_big_line() -> float:
    framer = LineFramer()
    chunk = b"a" * 65536
    start = time.perf_counter()
    for _ in range(1023):
        framer.feed(chunk)
    framer.feed(b"a" * (65536 - 2) + b"\n")
    return time.perf_counter() - start


def small_lines_per_second() -> float:
    line = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","n":1}}\n'
    data = line * 100_000
    chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    framer = LineFramer()
    start = time.perf_counter()
    count = sum(len(framer.feed(c)) for c in chunks)
    return count / (time.perf_counter() - start)


def main() -> None:
    big = statistics.median(one_big_line() for _ in range(5))
    rate = statistics.median(small_lines_per_second() for _ in range(5))
    print(f"64 MiB line in 64 KiB chunks: {big:.3f} s (target < 1 s)")
    print(f"small lines: {rate:,.0f} lines/s (target > 200,000)")


if __name__ == "__main__":
    main()
