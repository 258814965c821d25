"""The tools around the remote endpoint: ``rxacp prompt --agent http://.../acp``, the reference
agent's ``--listen http://HOST:PORT`` and its ``asgi_app`` factory for ``uvicorn --factory``."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from rxacp.cli import main
from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.testing.reference_agent import asgi_app
from rxacp.transport.http import AcpAsgiApp, HttpAcpClientTransport
from rxacp.transport.http._serve import UvicornThread
from tests.polling import wait_until

from .conftest import reference_app

ROOT = Path(__file__).resolve().parents[2]


def test_rxacp_prompt_streams_from_a_streamable_http_agent() -> None:
    with UvicornThread(reference_app("sync")) as server:
        out, err = io.StringIO(), io.StringIO()
        code = main(["prompt", "--agent", server.url, "echo over http"], out=out, err=err)
    assert code == 0, err.getvalue()
    assert "over http" in out.getvalue()


def test_rxacp_prompt_sends_the_token_a_remote_agent_requires() -> None:
    with UvicornThread(reference_app("sync", token="t0ken")) as server:
        out, err = io.StringIO(), io.StringIO()
        args = ["prompt", "--agent", server.url, "--token", "t0ken", "echo let in"]
        assert main(args, out=out, err=err) == 0, err.getvalue()
        refused = io.StringIO()
        assert main(["prompt", "--agent", server.url, "hi"], out=io.StringIO(), err=refused) == 1
    assert "let in" in out.getvalue()
    assert "401" in refused.getvalue()
    assert "t0ken" not in refused.getvalue()


def test_rxacp_prompt_reports_an_unreachable_http_agent() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["prompt", "--agent", "http://127.0.0.1:9/acp", "hi"], out=out, err=err)
    assert code == 1
    assert "http://127.0.0.1:9/acp" in err.getvalue()


def test_the_asgi_app_factory_serves_the_reference_agent_with_the_env_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RXACP_AGENT_TOKEN", "from-env")
    monkeypatch.setenv("RXACP_REFERENCE_API", "async")
    app = asgi_app()
    assert isinstance(app, AcpAsgiApp)
    with UvicornThread(app) as server:
        refused = httpx.post(server.url, json={}, headers={"Content-Type": "application/json"})
        assert refused.status_code == 401
        transport = HttpAcpClientTransport(server.url, token="from-env")
        with AcpClient.sync(transport).build() as client:
            assert client.initialize().agent_info is not None
            sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
            assert client.prompt(PromptRequest.text(sid, "echo x")).stop_reason == "end_turn"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_reference_agent_listens_on_http_and_stops_on_sigterm() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "rxacp.testing.reference_agent", "--listen", url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:

        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(listening, 30)
        with AcpClient.sync(HttpAcpClientTransport(url + "/acp")).build() as client:
            client.initialize()
            sid = client.new_session(NewSessionRequest.of("/tmp")).session_id
            assert client.prompt(PromptRequest.text(sid, "stream 3")).stop_reason == "end_turn"
        child.send_signal(signal.SIGTERM)
        # uvicorn shuts down, then re-raises the signal it caught (its documented behaviour)
        assert child.wait(20) in (0, -signal.SIGTERM)
        assert child.stderr is not None
        assert b"serving http://127.0.0.1" in child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stderr is not None:
            child.stderr.close()


def test_listen_takes_only_an_http_url() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rxacp.testing.reference_agent", "--listen", "ws://x:1"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2
    assert "http://HOST:PORT" in done.stderr


def test_the_remote_example_serves_and_talks_over_both_profiles() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "remote.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "streamable http: 'hello from a remote agent' -> end_turn" in done.stdout
    assert "websocket: 'hello from a remote agent' -> end_turn" in done.stdout
