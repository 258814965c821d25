"""The WebSocket examples run end to end: the agent example serves, the client example talks."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from rxacp.schema import PromptRequest

from .conftest import Conversation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def check_client_output(out: str) -> None:
    assert "connected to rxacp-reference at ws://127.0.0.1:" in out
    assert "-> end_turn" in out
    assert "-> cancelled (stopped with a CancellationSignal)" in out


def test_client_example_runs_against_an_in_process_server() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "websocket_client.py")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    check_client_output(done.stdout)


def test_agent_example_prints_its_url_serves_a_client_and_stops_on_sigterm() -> None:
    agent = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "websocket_agent.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        line = agent.stdout.readline()
        assert line.startswith("ACP reference agent listening on ws://127.0.0.1:"), line
        url = line.split()[-1]
        conv = Conversation(url).initialize()
        sid = conv.new_session()
        assert conv.client.prompt(PromptRequest.text(sid, "stream 3")).stop_reason == "end_turn"
        assert len(conv.chunks(sid)) == 3
        conv.close()
        agent.send_signal(signal.SIGTERM)
        out, err = agent.communicate(timeout=10)
        assert agent.returncode == 0, err
        assert "shutting down" in out
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.communicate(timeout=10)
