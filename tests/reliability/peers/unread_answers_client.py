"""An rxacp client facing ``unread_answers_agent.py``, for the client back-pressure test.

``python unread_answers_client.py N SIZE [async]`` writes a SIZE-byte file into a temporary
workspace, starts the agent (which asks for it N times and reads none of the answers), and
measures the client's RSS: after ``initialize`` (idle) and its peak until it is quiet (no
growth for 2 s; given up past +768 MiB, so an unbounded client does not take the machine down).
Then it lets the agent read (``SIGUSR1``) and waits until the agent reports every answer.
Prints one JSON line: idle and peak RSS (KiB), the answers the agent counted (and how many held
the whole file), the client's read pauses and the most requests it held at once.
``RXACP_ROOT`` (default: this checkout) is the rxacp imported, so another tree can be measured.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from typing import Any

sys.path.insert(
    0,
    os.environ.get("RXACP_ROOT")
    or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
)

from rxacp.client import AcpClient, WorkspaceFileSystem
from rxacp.transport import AgentParameters, StdioAcpClientTransport

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unread_answers_agent.py")
GIVE_UP_KIB = 768 * 1024


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> None:
    count, size = int(sys.argv[1]), int(sys.argv[2])
    style = sys.argv[3] if len(sys.argv) > 3 else "sync"
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "big.txt")
        with open(path, "w") as f:
            f.write(("x" * 99 + "\n") * (size // 100))
        transport = StdioAcpClientTransport(
            AgentParameters(sys.executable, [AGENT, str(count), path, str(size - 100)])
        )
        done = threading.Event()
        report: dict[str, Any] = {}

        def answered(params: Any) -> None:
            report.update(params)
            done.set()

        builder = AcpClient.sync(transport) if style == "sync" else AcpClient.async_(transport)
        builder.ext_notification_handler("_test/answered", answered)
        WorkspaceFileSystem(root).install(builder)
        client: Any = builder.build()
        session = client.session
        held_max = 0
        try:
            if style == "sync":
                client.initialize()
            else:
                client.initialize().run()
            idle = status_kib("VmRSS")
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # VmHWM := VmRSS
            if style == "sync":
                client.new_session({"cwd": root, "mcpServers": []})
            else:
                client.new_session({"cwd": root, "mcpServers": []}).run()
            last, since = 0, time.monotonic()
            while time.monotonic() - since < 2.0:  # quiet: no growth for 2 s
                rss = status_kib("VmRSS")
                held_max = max(held_max, getattr(session._in_flight, "held_count", 0))
                if rss > last + 1024:
                    last, since = rss, time.monotonic()
                if rss - idle > GIVE_UP_KIB:
                    break
                threading.Event().wait(0.05)
            peak = status_kib("VmHWM")
            gave_up = peak - idle > GIVE_UP_KIB
            pauses = session.stats.read_pauses
            if not gave_up:
                assert transport.pid is not None
                os.kill(transport.pid, signal.SIGUSR1)
                done.wait(600.0)
        finally:
            client.close()
    print(
        json.dumps(
            {
                "rss_idle_kib": idle,
                "rss_peak_kib": peak,
                "gave_up": gave_up,
                "answered": report.get("answered"),
                "complete": report.get("complete"),
                "read_pauses": pauses,
                "held_max": held_max,
            }
        )
    )


if __name__ == "__main__":
    main()
