"""An rxacp client whose consumer falls behind, for the client back-pressure test.

``python slow_consumer_client.py N SIZE DELAY [KIND]`` spawns ``flood_agent.py``, asks it for
``N`` updates of ``SIZE`` characters, and consumes each with an Observable that completes
``DELAY`` seconds later (on the connection's scheduler; KIND ``timer``, the default), with
``reactivex.empty()`` (KIND ``empty``: an Observable that completes at once) or by returning
``None`` (KIND ``none``). It prints one JSON line: RSS before the stream and the peak during it
(KiB, from ``/proc/self/status``), the client's CPU seconds during the stream, how many updates
arrived in order, the stop reason and how often reading paused.
"""

from __future__ import annotations

import json
import os
import sys
import time

import reactivex
from reactivex.abc import SchedulerBase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from rxacp.client import AcpClient
from rxacp.schema import PromptRequest, SessionNotification
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests._notes import chunk_text

FLOOD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flood_agent.py")


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux: writing 5 to clear_refs)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def main() -> None:
    count, size, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 else "timer"
    state = {"next": 0, "disorder": 0}
    holder: dict[str, SchedulerBase] = {}

    def consume(note: SessionNotification) -> reactivex.Observable[int] | None:
        text = chunk_text(note)
        if int(text[:9]) != state["next"]:
            state["disorder"] += 1
        state["next"] += 1
        if kind == "none":
            return None
        if kind == "empty":
            return reactivex.empty()
        return reactivex.timer(delay, scheduler=holder["scheduler"])

    transport = StdioAcpClientTransport(AgentParameters(sys.executable, [FLOOD]))
    client = AcpClient.async_(transport).session_update_consumer(consume).build()
    holder["scheduler"] = client.session.scheduler
    try:
        client.initialize().run()
        sid = client.new_session({"cwd": "/", "mcpServers": []}).run().session_id
        client.prompt(PromptRequest.text(sid, "flood 200 16")).run()  # warm up every path
        state["next"] = 0
        idle = status_kib("VmRSS")
        reset_peak()
        cpu = time.process_time()
        answer = client.prompt(PromptRequest.text(sid, f"flood {count} {size}")).run()
        cpu = time.process_time() - cpu
        peak = status_kib("VmHWM")
        pauses = client.session.stats.read_pauses
    finally:
        client.close()
    print(
        json.dumps(
            {
                "rss_idle_kib": idle,
                "rss_peak_kib": peak,
                "cpu_seconds": round(cpu, 3),
                "received": state["next"],
                "disorder": state["disorder"],
                "stop_reason": answer.stop_reason,
                "read_pauses": pauses,
            }
        )
    )


if __name__ == "__main__":
    main()
