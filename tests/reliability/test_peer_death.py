"""Item 4: the agent is killed with SIGKILL during initialize, a prompt and a permission wait.

Every pending request must error within 1 s with an ``AcpConnectionException`` carrying the
exit code (-9) and the stderr tail, never by waiting for a timeout; no rxacp thread survives
the connection. Single-shot versions: tests/session/test_over_transports.py
(``test_peer_killed_mid_request_errors_within_a_second_not_at_the_timeout``) and
tests/transport/test_stdio.py
(``test_a_killed_agent_is_reported_within_a_second_with_exit_code_and_stderr_tail``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from rxacp.errors import AcpConnectionException
from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .conftest import Figure, rxacp_threads, scaled, wait_until

PEER = os.path.join(os.path.dirname(__file__), "peers", "doomed_agent.py")
TRIALS_PER_PHASE = scaled(34, 200)  # 102 trials in all by default
PHASES = ("initialize", "prompt", "permission")


def one_trial(phase: str) -> tuple[float, AcpConnectionException]:
    args = [PEER, "--permission"] if phase == "permission" else [PEER]
    transport = StdioAcpClientTransport(AgentParameters(sys.executable, args))
    session = AcpSession(transport, role="client", request_timeout=30.0)
    reached = threading.Event()
    session.set_notification_handler("session/update", lambda n: reached.set())
    session.set_request_handler(
        "session/request_permission",
        lambda req: reached.set(),  # never answered
    )
    errors: list[BaseException] = []
    done = threading.Event()

    def failed(error: BaseException) -> None:
        errors.append(error)
        done.set()

    try:
        session.start()
        if phase == "initialize":
            pending = session.send_request("initialize", {"protocolVersion": 1})
        else:
            wait_for(session.send_request("session/new", {"cwd": "/", "mcpServers": []}), 30.0)
            pending = session.send_request(
                "session/prompt", {"sessionId": "s1", "prompt": []}, timeout=None
            )
        pending.subscribe(lambda _: done.set(), failed)
        if phase == "initialize":
            # the agent reports each method on stderr as it reads it: wait for that line
            assert wait_until(lambda: "got initialize" in (transport.stderr_tail or ""), 30.0)
        else:
            assert reached.wait(30.0), f"{phase}: the agent never got there"
        pid = transport.pid
        assert pid is not None
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        assert done.wait(30.0), f"{phase}: the pending request never settled"
        elapsed = time.monotonic() - killed
    finally:
        session.close()
    error = errors[0]
    assert isinstance(error, AcpConnectionException), repr(error)
    assert session.pending_request_count == 0 and session.incoming_request_count == 0
    return elapsed, error


def test_sigkill_during_initialize_prompt_and_permission_errors_every_pending_request_at_once(
    figure: Figure,
) -> None:
    baseline = rxacp_threads()
    worst: dict[str, float] = {}
    for phase in PHASES:
        times = []
        for _ in range(TRIALS_PER_PHASE):
            elapsed, error = one_trial(phase)
            times.append(elapsed)
            assert error.exit_code == -signal.SIGKILL, (phase, error)
            assert "doomed agent got" in (error.stderr_tail or ""), (phase, error)
        worst[phase] = max(times)
        figure(f"{phase}_trials", len(times))
        figure(f"{phase}_worst_settle_ms", round(max(times) * 1000))
        figure(f"{phase}_median_settle_ms", round(sorted(times)[len(times) // 2] * 1000))
    # settled by the peer's death, not by the 60 s request timeout (bound generous for load)
    assert all(t < 15.0 for t in worst.values()), worst
    leftover = wait_until(lambda: rxacp_threads() == baseline, 5.0)
    figure("rxacp_threads_left", len(rxacp_threads()) - len(baseline))
    assert leftover, rxacp_threads()
