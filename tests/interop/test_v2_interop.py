"""ACP v2 (Draft) interop over real stdio with the OFFICIAL SDKs' experimental v2 APIs.

Both directions, each with the TypeScript SDK 2.4.0 (``@agentclientprotocol/sdk/experimental/
v2``: ``tests/interop/ts/ts_v2_agent.mjs``, ``ts_v2_client.mjs``) and the Python SDK 1.0.0rc3
(``acp.experimental.v2``: ``tests/interop/peers/python_v2_agent.py``, ``python_v2_client.py``,
in ``.venv-interop-py1/``): stream, permission, cancel, and negotiation (fallback to v1, or the
peer's refusal to fall back); plus the v1 peers (TS SDK v1 client, Python SDK 0.12.1 client)
against a dual-version rxacp reference agent (``--protocol-versions 1,2``).

Neither official v2 client falls back to v1 (they raise on a version-1 answer); rxacp's does.
Not responsible for the v1 interop rows (``test_ts_sdk.py``, ``test_python_sdk_client.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reactivex import operators as ops

from rxacp.client import AcpAsyncClient, AcpClient, CancellationSignal
from rxacp.schema import PromptResponse, RequestPermissionResponse, v2
from rxacp.transport import AgentParameters, StdioAcpClientTransport
from tests.interop.matrix import SCENARIOS
from tests.interop.peer_clients import run_peer_client, scenario_facts
from tests.interop.test_client_vs_python_sdk import _interop_python
from tests.interop.test_python_sdk_client import PY_CHECKS
from tests.interop.test_ts_sdk import TS_CHECKS
from tests.setup_scripts import run_setup_script

ROOT = Path(__file__).resolve().parents[2]
TS_DIR = ROOT / "tests" / "interop" / "ts"
PEERS = ROOT / "tests" / "interop" / "peers"
PY1 = ROOT / ".venv-interop-py1" / "bin" / "python"
WAIT = 60.0  # bound of waits that succeed at once (the Python peer's cold start is ~3 s)
REFERENCE = [sys.executable, "-m", "rxacp.testing.reference_agent"]
DUAL = [*REFERENCE, "--api", "async", "--protocol-versions", "1,2"]

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def ts_peers() -> Path:
    run_setup_script(
        "setup_interop_ts.sh",
        timeout=420,
        needs="the v2 interop tests need the TS ACP SDK 2.4.0 peers (node/npm and the registry)",
    )
    return TS_DIR


@pytest.fixture(scope="module")
def py1() -> Path:
    run_setup_script(
        "setup_interop_py1.sh",
        timeout=420,
        needs="the v2 interop tests need the official Python ACP SDK 1.0.0rc3 (.venv-interop-py1)",
    )
    return PY1


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _peer_client(launcher: list[str], scenario: str, agent: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [*launcher, scenario, "--", *agent],
        capture_output=True,
        text=True,
        timeout=240,
        env=_env(),
        cwd=ROOT,
    )
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    assert lines, f"no facts from {launcher[-1]}; stderr:\n{done.stderr[-3000:]}"
    facts: dict[str, Any] = lines[-1]
    assert "error" not in facts, f"{facts}\n{done.stderr[-3000:]}"
    return facts


def _launchers(ts_peers: Path, py1: Path) -> dict[str, list[str]]:
    return {
        "ts": ["node", str(ts_peers / "ts_v2_client.mjs")],
        "python": [str(py1), "-I", str(PEERS / "python_v2_client.py")],
    }


# --------------------------------------------------- official v2 clients -> rxacp agent
@pytest.fixture(scope="module", params=["ts", "python"])
def v2_client(request: pytest.FixtureRequest, ts_peers: Path, py1: Path) -> list[str]:
    return _launchers(ts_peers, py1)[str(request.param)]


def test_an_official_v2_client_streams_a_turn_from_the_dual_rxacp_agent(
    v2_client: list[str],
) -> None:
    facts = _peer_client(v2_client, "stream", DUAL)
    assert facts["protocolVersion"] == 2 and facts["agentName"] == "rxacp-reference"
    assert facts["stopReason"] == "end_turn"
    assert facts["chunks"] == ["Every ", "ACP ", "request ", "is ", "a "]
    assert facts["chunkMessageIds"] == 1
    assert facts["messageId"] == facts["userMessageId"]  # the answer names the user message


def test_an_official_v2_client_answers_rxacp_permission_between_requires_action_and_running(
    v2_client: list[str],
) -> None:
    facts = _peer_client(v2_client, "permission", DUAL)
    assert facts["states"] == ["running", "requires_action", "running", "idle"]
    assert facts["permissionTitle"] and facts["text"] == "allow"
    assert facts["stopReason"] == "end_turn"


def test_an_official_v2_client_cancel_is_confirmed_by_one_idle_cancelled(
    v2_client: list[str],
) -> None:
    facts = _peer_client(v2_client, "cancel", DUAL)
    assert facts["stopReason"] == "cancelled" and facts["idleCount"] == 1
    assert facts["cancelMs"] < 10_000


def test_an_official_v2_client_gets_version_1_from_a_v1_rxacp_agent_and_does_not_fall_back(
    v2_client: list[str],
) -> None:
    facts = _peer_client(v2_client, "negotiate", [*REFERENCE, "--api", "sync"])
    # rxacp answered 1 (v1 shape, no `info`); the official v2 client refuses to parse it
    assert "protocolVersion" not in facts
    assert "info" in facts["initializeError"]


# --------------------------------------------------- rxacp client -> official v2 agents
def _agent_command(peer: str, ts_peers: Path, py1: Path, *flags: str) -> list[str]:
    if peer == "ts":
        return ["node", str(ts_peers / "ts_v2_agent.mjs"), *flags]
    return [str(py1), "-I", str(PEERS / "python_v2_agent.py"), *flags]


def _rxacp_client(command: list[str], *, v2_client: bool = True) -> AcpAsyncClient:
    params = AgentParameters.builder(command[0]).args(*command[1:]).build()
    builder = (
        AcpClient.async_(StdioAcpClientTransport(params))
        .request_timeout(WAIT)
        .request_permission_handler(lambda _r: RequestPermissionResponse.selected("allow"))
    )
    if v2_client:
        builder.protocol_v2()
    return builder.build()


@pytest.fixture(params=["ts", "python"])
def v2_agent(request: pytest.FixtureRequest, ts_peers: Path, py1: Path) -> Iterator[Any]:
    client = _rxacp_client(_agent_command(str(request.param), ts_peers, py1))
    yield client
    client.close()


def _open(client: AcpAsyncClient) -> str:
    init = client.initialize().block(WAIT)
    assert isinstance(init, v2.InitializeResponse) and client.protocol_version == 2
    return str(client.new_session({"cwd": "/tmp"}).block(WAIT).session_id)


def _turn(client: AcpAsyncClient, sid: str, text: str) -> list[Any]:
    items: list[Any] = (
        client.prompt_turn(v2.PromptRequest.text(sid, text)).pipe(ops.to_list()).block(WAIT)
    )
    return items


def test_rxacp_streams_a_turn_from_an_official_v2_agent_until_idle(v2_agent: Any) -> None:
    sid = _open(v2_agent)
    items = _turn(v2_agent, sid, "stream 5")
    chunks = [u.content.text for u in items if u.session_update == "agent_message_chunk"]
    assert chunks == ["0", "1", "2", "3", "4"]
    assert (items[-1].state, items[-1].stop_reason) == ("idle", "end_turn")


def test_rxacp_answers_an_official_v2_agent_permission_request(v2_agent: Any) -> None:
    sid = _open(v2_agent)
    items = _turn(v2_agent, sid, "permission")
    states = [u.state for u in items if u.session_update == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    text = [u.content.text for u in items if u.session_update == "agent_message_chunk"]
    assert text == ["allow"]


def test_rxacp_stop_cancels_an_official_v2_agent_turn_with_idle_cancelled(v2_agent: Any) -> None:
    sid = _open(v2_agent)
    stop = CancellationSignal()
    first = threading.Event()
    out: list[Any] = []
    done = threading.Event()

    def on_item(item: Any) -> None:
        out.append(item)
        if item.session_update == "agent_message_chunk":
            first.set()

    v2_agent.prompt_turn(v2.PromptRequest.text(sid, "slow 20"), stop).subscribe(
        on_item, on_completed=done.set
    )
    assert first.wait(WAIT)
    stop.cancel()
    assert done.wait(WAIT)
    assert (out[-1].state, out[-1].stop_reason) == ("idle", "cancelled")


@pytest.mark.parametrize("peer", ["ts", "python"])
def test_rxacp_asking_for_v2_falls_back_to_v1_with_a_v1_peer_agent(
    peer: str, ts_peers: Path, py1: Path
) -> None:
    if peer == "ts":
        command = ["node", str(ts_peers / "ts_agent.mjs")]
    else:
        command = [str(_interop_python()), "-I", str(PEERS / "python_sdk_agent.py")]
    client = _rxacp_client(command)
    try:
        assert client.initialize().block(WAIT).protocol_version == 1
        assert client.protocol_version == 1
        sid = client.new_session({"cwd": "/tmp", "mcpServers": []}).block(WAIT).session_id
        items = (
            client.prompt_turn({"sessionId": sid, "prompt": [{"type": "text", "text": "echo hi"}]})
            .pipe(ops.to_list())
            .block(WAIT)
        )
        assert isinstance(items[-1], PromptResponse) and items[-1].stop_reason == "end_turn"
    finally:
        client.close()


@pytest.mark.parametrize("peer", ["ts", "python"])
def test_a_router_agent_of_the_official_sdk_serves_rxacp_v1_and_v2_clients(
    peer: str, ts_peers: Path, py1: Path
) -> None:
    command = _agent_command(peer, ts_peers, py1, "--dual")
    for wants_v2, version in ((True, 2), (False, 1)):
        client = _rxacp_client(command, v2_client=wants_v2)
        try:
            assert client.initialize().block(WAIT).protocol_version == version
        finally:
            client.close()


# --------------------------------------- official v1 clients -> dual-version rxacp agent
@pytest.fixture(scope="module")
def v1_peers_vs_dual(ts_peers: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    file = tmp_path_factory.mktemp("v2-interop") / "dätei.txt"
    file.write_text("Grüße ✓\n", encoding="utf-8")
    launchers = {
        "ts": ["node", str(ts_peers / "ts_client.mjs")],
        "python": [str(_interop_python()), "-I", str(PEERS / "python_sdk_client.py")],
    }
    return {
        name: (
            run_peer_client(
                launcher,
                "sync",
                file,
                timeout_s=300,
                step_timeout_s=60,
                agent_args=("--protocol-versions", "1,2"),
            ),
            file,
        )
        for name, launcher in launchers.items()
    }


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("peer", ["ts", "python"])
def test_an_official_v1_client_gets_the_unchanged_v1_agent_from_a_dual_rxacp_agent(
    v1_peers_vs_dual: dict[str, Any], peer: str, scenario: str
) -> None:
    run, file = v1_peers_vs_dual[peer]
    facts = scenario_facts(run, scenario, peer)
    checks = TS_CHECKS if peer == "ts" else PY_CHECKS
    checks[scenario](facts, file)
