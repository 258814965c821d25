"""LocalTerminals: real commands behind the five terminal/* handlers, confined and bounded."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient, LocalTerminals, WorkspaceFileSystem
from rxacp.client._terminal_process import utf8_complete_end
from rxacp.client.handlers import default_client_capabilities
from rxacp.errors import AcpErrorCodes, AcpProtocolException
from rxacp.schema import (
    CreateTerminalRequest,
    EnvVariable,
    KillTerminalRequest,
    NewSessionResponse,
    PromptResponse,
    ReleaseTerminalRequest,
    TerminalOutputRequest,
    WaitForTerminalExitRequest,
)
from rxacp.schema.methods import FS_WRITE_TEXT_FILE, TERMINAL_CREATE
from rxacp.testing.memory import InMemoryTransportPair

from .._notes import chunk_text
from ..polling import wait_until

SID = "sess-1"
PY = sys.executable
WAIT = 10.0


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def terminals(workspace: Path) -> Iterator[LocalTerminals]:
    t = LocalTerminals([str(workspace)])
    yield t
    t.close()


def create(t: LocalTerminals, command: str, *args: str, sid: str = SID, **kw: Any) -> str:
    req = CreateTerminalRequest(session_id=sid, command=command, args=list(args) or None, **kw)
    return t.create_terminal(req).terminal_id


def wait(t: LocalTerminals, tid: str, sid: str = SID) -> Any:
    return t.wait_for_terminal_exit(WaitForTerminalExitRequest(session_id=sid, terminal_id=tid))


def output(t: LocalTerminals, tid: str, sid: str = SID) -> Any:
    return t.terminal_output(TerminalOutputRequest(session_id=sid, terminal_id=tid))


def release(t: LocalTerminals, tid: str, sid: str = SID) -> None:
    t.release_terminal(ReleaseTerminalRequest(session_id=sid, terminal_id=tid))


def alive(pid: int) -> bool:
    """True while ``pid`` is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def code_of(excinfo: pytest.ExceptionInfo[AcpProtocolException]) -> int:
    return excinfo.value.code


# ---------------------------------------------------------------------------- create/run
def test_a_command_runs_as_an_argv_and_its_output_and_exit_code_are_reported(
    terminals: LocalTerminals,
) -> None:
    tid = create(terminals, PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)")
    assert wait(terminals, tid).exit_code == 0
    answer = output(terminals, tid)
    assert answer.output.splitlines() == ["out", "err"]
    assert answer.truncated is False
    assert answer.exit_status is not None and answer.exit_status.exit_code == 0


def test_output_has_no_exit_status_while_the_command_runs(terminals: LocalTerminals) -> None:
    tid = create(terminals, PY, "-c", "import time; time.sleep(60)")
    assert output(terminals, tid).exit_status is None
    release(terminals, tid)


def test_a_non_zero_exit_code_is_reported(terminals: LocalTerminals) -> None:
    tid = create(terminals, PY, "-c", "raise SystemExit(7)")
    answer = wait(terminals, tid)
    assert (answer.exit_code, answer.signal) == (7, None)


def test_shell_syntax_in_command_is_not_run_through_a_shell_by_default(
    terminals: LocalTerminals, workspace: Path
) -> None:
    with pytest.raises(AcpProtocolException) as excinfo:
        create(terminals, f"touch {workspace}/pwned; echo hi")
    assert code_of(excinfo) == AcpErrorCodes.INVALID_PARAMS
    assert "without a shell" in excinfo.value.message
    assert not (workspace / "pwned").exists()


def test_shell_true_runs_the_command_line_through_sh(workspace: Path) -> None:
    with LocalTerminals(str(workspace), shell=True) as t:
        tid = create(t, "echo $((6 * 7)) | tr 4 X")
        wait(t, tid)
        assert output(t, tid).output == "X2\n"


def test_the_requested_env_is_added_to_the_inherited_environment(
    terminals: LocalTerminals, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RXACP_TEST_INHERITED", "yes")
    env = [EnvVariable(name="RXACP_TEST_ASKED", value="é 1")]
    script = "import os; print(os.environ['RXACP_TEST_ASKED'], os.environ['RXACP_TEST_INHERITED'])"
    tid = create(terminals, PY, "-c", script, env=env)
    wait(terminals, tid)
    assert output(terminals, tid).output == "é 1 yes\n"


def test_inherit_env_false_passes_only_the_requested_variables(workspace: Path) -> None:
    with LocalTerminals(str(workspace), inherit_env=False) as t:
        env = [EnvVariable(name="ONLY", value="1")]
        tid = create(t, PY, "-c", "import os; print(sorted(os.environ))", env=env)
        wait(t, tid)
        assert "'ONLY'" in output(t, tid).output and "'PATH'" not in output(t, tid).output


def test_an_invalid_env_name_is_invalid_params(terminals: LocalTerminals) -> None:
    with pytest.raises(AcpProtocolException) as excinfo:
        create(terminals, PY, "-c", "pass", env=[EnvVariable(name="A=B", value="x")])
    assert code_of(excinfo) == AcpErrorCodes.INVALID_PARAMS


# ---------------------------------------------------------------------------- cwd
def test_cwd_defaults_to_the_first_root(terminals: LocalTerminals, workspace: Path) -> None:
    tid = create(terminals, PY, "-c", "import os; print(os.getcwd())")
    wait(terminals, tid)
    assert output(terminals, tid).output.strip() == os.path.realpath(workspace)


def test_cwd_inside_the_workspace_is_used(terminals: LocalTerminals, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    tid = create(terminals, PY, "-c", "import os; print(os.getcwd())", cwd=str(workspace / "sub"))
    wait(terminals, tid)
    assert output(terminals, tid).output.strip() == os.path.realpath(workspace / "sub")


@pytest.mark.parametrize("where", ["outside", "relative", "dotdot", "link-out", "missing"])
def test_a_cwd_outside_the_workspace_is_refused_and_nothing_runs(
    terminals: LocalTerminals, workspace: Path, tmp_path: Path, where: str
) -> None:
    (workspace / "out").symlink_to(tmp_path)
    cwd = {
        "outside": str(tmp_path),
        "relative": "ws",
        "dotdot": f"{workspace}/../",
        "link-out": str(workspace / "out"),
        "missing": str(workspace / "nope"),
    }[where]
    marker = tmp_path / "ran"
    with pytest.raises(AcpProtocolException) as excinfo:
        create(terminals, PY, "-c", f"open({str(marker)!r}, 'w')", cwd=cwd)
    assert code_of(excinfo) == AcpErrorCodes.INVALID_PARAMS
    assert "cwd" in excinfo.value.message
    assert not marker.exists()
    assert terminals.terminal_ids == []


# ---------------------------------------------------------------------------- output limit
def test_output_over_the_limit_keeps_the_end_and_cuts_at_a_character_boundary(
    terminals: LocalTerminals,
) -> None:
    # 2-byte characters; an odd limit forces the cut into the middle of one
    script = "import sys; sys.stdout.write('A' + 'é' * 5000 + 'END')"
    tid = create(terminals, PY, "-c", script, output_byte_limit=101)
    wait(terminals, tid)
    answer = output(terminals, tid)
    assert answer.truncated is True
    assert answer.output.endswith("éEND") and "A" not in answer.output
    assert len(answer.output.encode("utf-8")) <= 101
    assert answer.output == "é" * 49 + "END"  # 98 + 3 bytes: the half character was dropped


def test_output_at_the_limit_is_not_truncated(terminals: LocalTerminals) -> None:
    script = "import sys; sys.stdout.write('x' * 64)"
    tid = create(terminals, PY, "-c", script, output_byte_limit=64)
    wait(terminals, tid)
    answer = output(terminals, tid)
    assert (answer.output, answer.truncated) == ("x" * 64, False)


def test_a_large_stream_retains_only_the_limit_in_memory(workspace: Path) -> None:
    with LocalTerminals(str(workspace), max_output_bytes=1000) as t:
        script = "import sys\nfor i in range(20000): sys.stdout.write(f'{i:09d}\\n')"
        tid = create(t, PY, "-c", script)  # no limit asked: the instance cap applies
        wait(t, tid)
        answer = output(t, tid)
        assert answer.truncated is True
        assert answer.output.endswith("000019999\n") and len(answer.output) == 1000


def test_invalid_utf8_output_is_replaced_not_fatal(terminals: LocalTerminals) -> None:
    tid = create(terminals, PY, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe end')")
    wait(terminals, tid)
    assert output(terminals, tid).output == "ok \ufffd\ufffd end"


def test_an_incomplete_trailing_character_is_held_back() -> None:
    euro = "€".encode()
    assert utf8_complete_end(b"ab" + euro[:2]) == 2
    assert utf8_complete_end(b"ab" + euro) == 5
    assert utf8_complete_end(b"ab") == 2


# ---------------------------------------------------------------------------- kill/release
def test_kill_stops_the_command_and_keeps_the_terminal(terminals: LocalTerminals) -> None:
    tid = create(terminals, PY, "-c", "print('started', flush=True); import time; time.sleep(60)")
    terminals.kill_terminal(KillTerminalRequest(session_id=SID, terminal_id=tid))
    answer = wait(terminals, tid)
    assert (answer.exit_code, answer.signal) == (None, "SIGKILL")
    after = output(terminals, tid)
    assert after.exit_status is not None and after.exit_status.signal == "SIGKILL"
    release(terminals, tid)


def _spawn_with_grandchild(t: LocalTerminals) -> tuple[str, int, int]:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    tid = create(t, PY, "-c", script)
    text = ""
    for _ in range(1000):
        text = output(t, tid).output
        if text.endswith("\n"):
            break
        threading.Event().wait(0.01)
    grandchild = int(text)
    leader = t._terminals[tid].proc.pid
    return tid, leader, grandchild


def test_release_kills_and_reaps_the_whole_process_group(terminals: LocalTerminals) -> None:
    tid, leader, grandchild = _spawn_with_grandchild(terminals)
    assert alive(leader) and alive(grandchild)
    assert os.getpgid(leader) == leader  # its own process group
    release(terminals, tid)
    assert not alive(leader), "release returned before the command was reaped"
    assert terminals.join(WAIT)
    for _ in range(500):  # the grandchild's parent (init/subreaper) reaps it
        if not alive(grandchild):
            break
        threading.Event().wait(0.01)
    assert not alive(grandchild)
    assert terminals.running_count == 0


def _spawn_with_escaped_child(t: LocalTerminals, *, leader_exits: bool) -> int:
    """A command whose child leaves its session and process group (``setsid``) and keeps the
    output pipe; the command itself exits at once or keeps running. Returns the child's pid."""
    script = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    print(os.getpid(), flush=True)\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"
    ) + ("" if leader_exits else "time.sleep(120)\n")
    tid = create(t, PY, "-c", script)
    assert wait_until(lambda: output(t, tid).output.endswith("\n"), WAIT)
    child = int(output(t, tid).output)
    assert alive(child) and os.getsid(child) == child  # its own session: out of the group
    return child


@pytest.mark.parametrize("leader_exits", [False, True], ids=["leader-runs", "leader-exited"])
@pytest.mark.parametrize("how", ["release", "close", "connection-ended"])
def test_a_setsid_descendant_does_not_survive_release_or_close(
    workspace: Path, how: str, leader_exits: bool
) -> None:
    terminals = LocalTerminals([str(workspace)])
    try:
        child = _spawn_with_escaped_child(terminals, leader_exits=leader_exits)
        if how == "release":
            release(terminals, terminals.terminal_ids[0])
        elif how == "close":
            terminals.close()
        else:
            terminals.kill_all()
        assert wait_until(lambda: not alive(child), WAIT), f"{child} survived {how}"
    finally:
        terminals.close()


def test_a_released_terminal_id_is_unknown_afterwards(terminals: LocalTerminals) -> None:
    tid = create(terminals, PY, "-c", "pass")
    release(terminals, tid)
    with pytest.raises(AcpProtocolException) as excinfo:
        output(terminals, tid)
    assert code_of(excinfo) == AcpErrorCodes.RESOURCE_NOT_FOUND


def test_another_sessions_terminal_is_unknown(terminals: LocalTerminals) -> None:
    tid = create(terminals, PY, "-c", "pass", sid="a")
    with pytest.raises(AcpProtocolException) as excinfo:
        output(terminals, tid, sid="b")
    assert code_of(excinfo) == AcpErrorCodes.RESOURCE_NOT_FOUND


def test_release_session_kills_only_that_sessions_terminals(terminals: LocalTerminals) -> None:
    mine = create(terminals, PY, "-c", "import time; time.sleep(60)", sid="a")
    other = create(terminals, PY, "-c", "import time; time.sleep(60)", sid="b")
    assert terminals.release_session("a") == 1
    assert terminals.terminal_ids == [other]
    assert output(terminals, other, sid="b").exit_status is None
    with pytest.raises(AcpProtocolException):
        output(terminals, mine, sid="a")


# ---------------------------------------------------------------------------- limits
def test_creates_past_max_running_are_refused_until_one_is_released(workspace: Path) -> None:
    with LocalTerminals(str(workspace), max_running=2) as t:
        first = create(t, PY, "-c", "import time; time.sleep(60)")
        create(t, PY, "-c", "import time; time.sleep(60)")
        with pytest.raises(AcpProtocolException) as excinfo:
            create(t, PY, "-c", "pass")
        assert code_of(excinfo) == AcpErrorCodes.INVALID_REQUEST
        assert "limit 2" in excinfo.value.message
        release(t, first)
        create(t, PY, "-c", "pass")


def test_creates_past_max_terminals_are_refused_even_when_all_exited(workspace: Path) -> None:
    with LocalTerminals(str(workspace), max_terminals=1) as t:
        tid = create(t, PY, "-c", "pass")
        wait(t, tid)
        with pytest.raises(AcpProtocolException) as excinfo:
            create(t, PY, "-c", "pass")
        assert "terminal/release" in excinfo.value.message


def test_closed_terminals_refuse_new_commands(workspace: Path) -> None:
    t = LocalTerminals(str(workspace))
    assert t.close()
    with pytest.raises(AcpProtocolException):
        create(t, PY, "-c", "pass")


# ---------------------------------------------------------------------------- with a client
class TerminalAgent:
    """An in-memory agent whose prompt runs ``python -c <prompt text>`` in a client terminal
    and says its output; ``leave <code>`` starts one and returns without releasing it."""

    def __init__(self, api: str) -> None:
        self.pair = InMemoryTransportPair.create()
        self.terminal_ids: list[str] = []
        builder = AcpAgent.sync(self.pair.agent_transport)
        builder.new_session_handler(lambda req: NewSessionResponse(session_id=SID))
        builder.close_session_handler(lambda req: None)
        builder.prompt_handler(self._prompt)
        self.agent = builder.build()
        self.agent.start()
        self.api = api

    def _prompt(self, req: Any, ctx: Any) -> PromptResponse:
        text = req.prompt[0].text
        if text.startswith("leave "):
            created = ctx.create_terminal(command=PY, args=["-c", text[6:]])
            self.terminal_ids.append(created.terminal_id)
            return PromptResponse.end_turn()
        result = ctx.execute(PY, "-c", text)
        ctx.send_message(f"{result.output}|{result.exit_code}")
        return PromptResponse.end_turn()

    def client(self, terminals: LocalTerminals, said: list[str]) -> Any:
        make = AcpClient.sync if self.api == "sync" else AcpClient.async_
        builder = terminals.install(make(self.pair.client_transport))
        builder.session_update_consumer(lambda n: said.append(chunk_text(n)))
        return builder.build()

    def close(self) -> None:
        self.agent.close()


def _call(client: Any, observable_or_value: Any) -> Any:
    if hasattr(observable_or_value, "run"):
        import asyncio

        async def go() -> Any:
            return await observable_or_value

        return asyncio.run(go())
    return observable_or_value


@pytest.mark.parametrize("api", ["sync", "async"])
def test_install_serves_an_agents_terminal_calls_on_either_builder(
    api: str, terminals: LocalTerminals
) -> None:
    agent = TerminalAgent(api)
    said: list[str] = []
    client = agent.client(terminals, said)
    try:
        _call(client, client.initialize())
        capabilities = agent.agent.client_capabilities
        assert capabilities is not None and capabilities.supports_terminal()
        _call(client, client.new_session({"cwd": "/", "mcpServers": []}))
        _call(
            client,
            client.prompt(
                {
                    "sessionId": SID,
                    "prompt": [
                        {
                            "type": "text",
                            "text": ("print('hi from a terminal'); raise SystemExit(3)"),
                        }
                    ],
                }
            ),
        )
        assert said == ["hi from a terminal\n|3"]
        assert terminals.terminal_ids == []  # ctx.execute released it
    finally:
        client.close()
        agent.close()


def _leave_a_terminal_running(client: Any) -> None:
    """Initialize, open session ``SID`` and run a turn that leaves a 60 s command running."""
    _call(client, client.initialize())
    _call(client, client.new_session({"cwd": "/", "mcpServers": []}))
    prompt = {"type": "text", "text": "leave import time; time.sleep(60)"}
    _call(client, client.prompt({"sessionId": SID, "prompt": [prompt]}))


@pytest.mark.parametrize("api", ["sync", "async"])
def test_closing_a_session_kills_its_unreleased_terminals(
    api: str, terminals: LocalTerminals
) -> None:
    agent = TerminalAgent(api)
    client = agent.client(terminals, [])
    try:
        _leave_a_terminal_running(client)
        assert terminals.running_count == 1
        _call(client, client.close_session({"sessionId": SID}))
        assert terminals.join(WAIT) and terminals.running_count == 0
        assert terminals.terminal_ids == []
    finally:
        client.close()
        agent.close()


@pytest.mark.parametrize("api", ["sync", "async"])
def test_closing_the_client_kills_every_terminal(api: str, terminals: LocalTerminals) -> None:
    agent = TerminalAgent(api)
    client = agent.client(terminals, [])
    try:
        _leave_a_terminal_running(client)
        pid = terminals._terminals[agent.terminal_ids[0]].proc.pid
        assert alive(pid)
    finally:
        client.close()
        agent.close()
    assert terminals.join(WAIT)
    assert not alive(pid)


def test_cancelling_an_async_wait_stops_the_wait_not_the_command(
    terminals: LocalTerminals,
) -> None:
    import asyncio

    tid = create(terminals, PY, "-c", "import time; time.sleep(60)")
    request = WaitForTerminalExitRequest(session_id=SID, terminal_id=tid)

    async def scenario() -> None:
        waiting = asyncio.ensure_future(terminals.wait_for_terminal_exit_async(request))
        await asyncio.sleep(0)  # let it register for the exit
        assert not waiting.done()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(scenario())
    term = terminals._terminals[tid]
    assert term._callbacks == []  # the cancelled wait left nothing behind
    assert alive(term.proc.pid) and output(terminals, tid).exit_status is None
    release(terminals, tid)
    assert not alive(term.proc.pid)


def test_an_async_wait_answers_when_the_command_exits(terminals: LocalTerminals) -> None:
    import asyncio

    tid = create(terminals, PY, "-c", "raise SystemExit(4)")
    request = WaitForTerminalExitRequest(session_id=SID, terminal_id=tid)
    answer = asyncio.run(asyncio.wait_for(terminals.wait_for_terminal_exit_async(request), WAIT))
    assert (answer.exit_code, answer.signal) == (4, None)


def test_install_refuses_anything_but_a_client_builder_naming_what_it_got(
    terminals: LocalTerminals, workspace: Path
) -> None:
    for provider in (terminals, WorkspaceFileSystem([str(workspace)])):
        with pytest.raises(TypeError, match="takes an AcpClient builder, not dict"):
            provider.install({})


@pytest.mark.parametrize("api", ["sync", "async"])
def test_each_builder_gets_the_handler_flavour_it_runs_and_read_only_skips_the_write(
    api: str, terminals: LocalTerminals, workspace: Path
) -> None:
    make = AcpClient.sync if api == "sync" else AcpClient.async_
    builder = make(InMemoryTransportPair.create().client_transport)
    WorkspaceFileSystem([str(workspace)], read_only=True).install(builder)
    terminals.install(builder)
    registered = builder._handlers.requests  # what the typed setters would have stored
    assert FS_WRITE_TEXT_FILE not in registered
    expected = terminals.create_terminal if api == "sync" else terminals.create_terminal_async
    assert registered[TERMINAL_CREATE] == expected
    assert default_client_capabilities(builder._handlers) == {
        "fs": {"readTextFile": True},
        "terminal": True,
    }
