"""The pytest plugin: fixtures work, clean up after the test, register by entry point, import
cheaply."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Callable

from rxacp.client import AcpClient
from rxacp.schema import PromptRequest
from rxacp.session import AcpSession, IncomingRequest
from rxacp.session.blocking import wait_for
from rxacp.testing import InMemoryTransportPair, MockAcpAgent, MockAcpClient

from ._run import PLUGIN, ROOT
from .agents import builder


def test_mock_client_fixture_starts_the_agent_and_connects(
    mock_client: Callable[..., MockAcpClient],
) -> None:
    client = mock_client(builder, timeout=2.0)
    assert isinstance(client, MockAcpClient) and client.timeout == 2.0
    assert client.prompt("hi").stop_reason == "end_turn" and client.text() == "hi"


def test_mock_agent_fixture_serves_its_client_transport(mock_agent: MockAcpAgent) -> None:
    mock_agent.on_prompt(updates=["ok"])
    with AcpClient.sync(mock_agent.client_transport).build() as client:
        client.initialize()
        sid = client.new_session({"cwd": "/", "mcpServers": []}).session_id
        assert client.prompt(PromptRequest.text(sid, "x")).stop_reason == "end_turn"
    assert len(mock_agent.expect_prompts(1)) == 1


def test_acp_pair_fixture_is_a_connected_pair(acp_pair: InMemoryTransportPair) -> None:
    agent = AcpSession(acp_pair.agent_transport, role="agent")

    def ping(req: IncomingRequest) -> None:
        req.respond({"pong": True})

    agent.set_request_handler("_ping", ping)
    client = AcpSession(acp_pair.client_transport, role="client")
    try:
        agent.start()
        assert wait_for(client.send_request("_ping", {}), 5.0) == {"pong": True}
    finally:
        client.close()
        agent.close()


def test_pyproject_registers_the_plugin_as_a_pytest11_entry_point() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"rxacp": PLUGIN}


def test_the_entry_point_enables_the_fixtures_and_they_close_what_they_made(
    plugin_run: subprocess.CompletedProcess[str],
) -> None:
    assert "probe_fixture_teardown.py::test_uses_every_fixture PASSED" in plugin_run.stdout
    assert "probe_fixture_teardown.py::test_everything_was_closed_after_the_first_test PASSED" in (
        plugin_run.stdout
    )


def test_importing_the_plugin_and_the_kit_loads_no_client_agent_schema_or_engine() -> None:
    code = (
        "import sys, rxacp; before = set(sys.modules); "
        "import rxacp.testing, rxacp.testing.pytest_plugin; "
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('rxacp')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    loaded = eval(done.stdout.strip())  # a printed list of module names
    assert {"rxacp.testing", "rxacp.testing.pytest_plugin"} <= set(loaded)
    heavy = ("rxacp.agent", "rxacp.client", "rxacp.schema", "rxacp.session", "rxacp.testing._mock")
    assert [m for m in loaded if m.startswith(heavy)] == []


def test_mocks_are_importable_from_the_package_lazily() -> None:
    import rxacp.testing as kit

    assert kit.MockAcpAgent.__name__ == "MockAcpAgent"
    assert set(kit.__all__) >= {
        "InMemoryTransportPair",
        "MockAcpAgent",
        "MockAcpClient",
        "check_transport_pair",
    }
    for name in kit.__all__:
        assert getattr(kit, name) is not None
