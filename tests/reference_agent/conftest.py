"""Fixtures: the reference agent as a real subprocess, and an rxacp client that serves it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rxacp.client import AcpClient, AcpSyncClient
from rxacp.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    NewSessionRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
)
from rxacp.transport import AgentParameters, StdioAcpClientTransport

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APIS = ("sync", "async", "decorators")
WAIT = 30.0  # bound of waits that succeed at once; generous for a loaded 2-core box
GRACE_S = 1.5  # the agents run with --cancel-grace 1.5


def agent_env() -> dict[str, str]:
    """The environment a spawned reference agent needs to import this checkout's rxacp."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": ROOT + (os.pathsep + path if path else "")}


def agent_command(*flags: str) -> list[str]:
    return [sys.executable, "-m", "rxacp.testing.reference_agent", *flags]


def spawn_raw(*flags: str) -> subprocess.Popen[bytes]:
    """The reference agent with raw pipes (for exact wire assertions)."""
    return subprocess.Popen(
        agent_command(*flags),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **agent_env()},
    )


class Terminals:
    """A tiny local terminal host for the client side (subprocesses, output captured)."""

    def __init__(self) -> None:
        self._procs: dict[str, subprocess.Popen[str]] = {}
        self._output: dict[str, str] = {}
        self.released: list[str] = []
        self.any_released = threading.Event()

    def create(self, req: CreateTerminalRequest) -> CreateTerminalResponse:
        terminal_id = f"term-{len(self._procs) + 1}"
        self._procs[terminal_id] = subprocess.Popen(
            [req.command, *(req.args or [])],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return CreateTerminalResponse(terminal_id=terminal_id)

    def wait(self, req: WaitForTerminalExitRequest) -> WaitForTerminalExitResponse:
        proc = self._procs[req.terminal_id]
        self._output[req.terminal_id] = proc.communicate(timeout=WAIT)[0]
        return WaitForTerminalExitResponse(exit_code=proc.returncode)

    def output(self, req: TerminalOutputRequest) -> TerminalOutputResponse:
        proc = self._procs[req.terminal_id]
        return TerminalOutputResponse(
            output=self._output.get(req.terminal_id, ""),
            truncated=False,
            exit_status=TerminalExitStatus(exit_code=proc.returncode),
        )

    def release(self, req: ReleaseTerminalRequest) -> None:
        self.released.append(req.terminal_id)
        self.any_released.set()
        proc = self._procs[req.terminal_id]
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)

    def kill(self, req: Any) -> None:
        self._procs[req.terminal_id].kill()


class Conversation:
    """An rxacp sync client connected to a spawned reference agent, recording updates."""

    def __init__(self, *flags: str) -> None:
        self.updates: list[SessionNotification] = []
        self._cond = threading.Condition()
        self.permission: Callable[[RequestPermissionRequest], RequestPermissionResponse] = (
            lambda req: RequestPermissionResponse.selected("allow")
        )
        self.files: dict[str, str] = {}
        self.terminals = Terminals()
        self.transport = StdioAcpClientTransport(
            AgentParameters(sys.executable, agent_command(*flags)[1:], env=agent_env())
        )
        self.client: AcpSyncClient = (
            AcpClient.sync(self.transport)
            .session_update_consumer(self._record)
            .read_text_file_handler(self._read)
            .write_text_file_handler(self._write)
            .request_permission_handler(lambda req: self.permission(req))
            .create_terminal_handler(self.terminals.create)
            .terminal_output_handler(self.terminals.output)
            .wait_for_terminal_exit_handler(self.terminals.wait)
            .release_terminal_handler(self.terminals.release)
            .kill_terminal_handler(self.terminals.kill)
            .build()
        )
        self.init = self.client.initialize()

    def _record(self, note: SessionNotification) -> None:
        with self._cond:
            self.updates.append(note)
            self._cond.notify_all()

    def _read(self, req: ReadTextFileRequest) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=self.files[req.path])

    def _write(self, req: WriteTextFileRequest) -> None:
        self.files[req.path] = req.content

    def new_session(self, cwd: str = "/tmp") -> str:
        return self.client.new_session(NewSessionRequest.of(cwd)).session_id

    def of(self, session_id: str, kind: str | None = None) -> list[Any]:
        """The updates of one session (of one ``sessionUpdate`` kind), in arrival order."""
        with self._cond:
            return [
                n.update
                for n in self.updates
                if n.session_id == session_id
                and (kind is None or getattr(n.update, "session_update", None) == kind)
            ]

    def text(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(session_id, "agent_message_chunk"))

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def close(self) -> None:
        self.client.close_gracefully(3.0)


@pytest.fixture(scope="module", params=APIS)
def conv(request: pytest.FixtureRequest) -> Iterator[Conversation]:
    """One reference agent per API (grace period 0.5 s), shared by a module's tests."""
    conversation = Conversation("--api", request.param, "--cancel-grace", str(GRACE_S))
    yield conversation
    conversation.close()
