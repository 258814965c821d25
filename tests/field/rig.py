"""One production agent under an rxacp client (sync or async API), with everything recorded.

:class:`FieldRig` starts the agent over real stdio (``StdioAcpClientTransport``) in a fresh home
and workspace, configured for the fake model server, and serves the agent's requests with
rxacp's own handlers: :class:`~rxacp.client.WorkspaceFileSystem` for ``fs/*``, a permission
handler answering ``allow`` or ``reject`` (the rig's :attr:`FieldRig.permission_choice`), and
``LocalTerminals`` for ``terminal/*`` when rxacp has it. Every frame is recorded
(:class:`~rxacp.testing.mocks.RecordingTransport`) so the tests can validate what the agent sent,
and the agent's process tree is snapshotted so ``close`` can be checked to leave nothing behind.

The same scenario code drives both APIs: :meth:`FieldRig.call` runs a client call blocking
(sync API: ``AcpSyncClient``) or as an Observable waited on (async API: ``AcpAsyncClient``).

This module is *not* responsible for configuring agents (``agents.py``), for the model
(``fake_model.py``) nor for asserting anything.
"""

from __future__ import annotations

import contextlib
import os
import select
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rxacp.client import (
    AcpClient,
    AcpSyncClient,
    CancellationSignal,
    LocalTerminals,
    WorkspaceFileSystem,
)
from rxacp.schema import (
    AgentMessageChunk,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TextContent,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from rxacp.session.blocking import wait_for
from rxacp.testing.mocks import RecordingTransport, TrafficLog
from rxacp.transport import AgentParameters, StdioAcpClientTransport

from .agents import FieldAgent
from .fake_model import FakeModelServer

__all__ = ["APIS", "FieldRig", "ProcessTree", "field_rig"]

APIS = ("sync", "async")
REQUEST_TIMEOUT_S = 60.0
"""Bound of every non-prompt request (agents start slowly on a loaded 2-core box)."""
PROMPT_BOUND_S = 90.0
"""Bound of every prompt turn the tests wait for."""
WORKSPACE_FILE = "notes.txt"
WORKSPACE_TEXT = "field notes: the workspace file, read through the agent\n"


class ProcessTree:
    """A process and all its live descendants at snapshot time, pinned by pidfds.

    Descendants are found through ``/proc`` (parent links), so children that later re-parent
    (daemons, double forks) are still tracked; a pidfd refers to the very process, so a reused
    pid never counts as a survivor. :meth:`wait_gone` polls the pidfds (no sleeping).
    """

    def __init__(self, root: int) -> None:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
        self.fds: dict[int, int] = {}
        todo = [root]
        while todo:
            pid = todo.pop()
            if pid in self.fds:
                continue
            try:
                self.fds[pid] = os.pidfd_open(pid)
            except OSError:
                continue  # already gone
            todo.extend(children.get(pid, []))

    @property
    def pids(self) -> list[int]:
        """Every pid of the snapshot."""
        return sorted(self.fds)

    def wait_gone(self, timeout: float) -> list[int]:
        """Wait up to ``timeout`` s for every process to exit; returns the survivors."""
        deadline = time.monotonic() + timeout
        left = dict(self.fds)
        poller = select.poll()
        for fd in left.values():
            poller.register(fd, select.POLLIN)
        by_fd = {fd: pid for pid, fd in left.items()}
        while left:
            wait_ms = int((deadline - time.monotonic()) * 1000)
            if wait_ms <= 0:
                break
            for fd, _events in poller.poll(wait_ms):
                poller.unregister(fd)
                left.pop(by_fd[fd], None)
        return sorted(left)

    def close(self) -> None:
        """Release the pidfds."""
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


class FieldRig:
    """A production agent driven by an rxacp client with ``api`` ``"sync"`` or ``"async"``."""

    def __init__(
        self,
        agent: FieldAgent,
        api: str,
        server: FakeModelServer,
        *,
        prompt_timeout: float | None = PROMPT_BOUND_S,
        base: Path | None = None,
    ) -> None:
        if api not in APIS:
            raise ValueError(f"api must be one of {APIS}, got {api!r}")
        self.agent = agent
        self.api = api
        self.server = server
        # ``base``: the caller's folder (kept), e.g. to reuse a home the agent has set up.
        self._tmp = (
            tempfile.TemporaryDirectory(prefix=f"rxacp-field-{agent.name}-")
            if base is None
            else None
        )
        if self._tmp is not None:
            base = Path(self._tmp.name)
        assert base is not None  # given by the caller, or the temporary folder
        self.home = base / "home"
        self.workspace = base / "workspace"
        self.home.mkdir(exist_ok=True)
        self.workspace.mkdir(exist_ok=True)
        (self.workspace / WORKSPACE_FILE).write_text(WORKSPACE_TEXT, encoding="utf-8")
        self.updates: list[SessionNotification] = []
        self.update_arrived = threading.Condition()
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.permission_requests: list[RequestPermissionRequest] = []
        self.permission_choice = "allow"
        self.stderr: list[str] = []
        self.traffic = TrafficLog()
        self.fs = WorkspaceFileSystem([str(self.workspace)])
        launch = agent.configure(self.home, server.base_url)
        params = (
            AgentParameters.builder(launch.command[0])
            .args(*launch.command[1:])
            .env(launch.env)
            .cwd(self.workspace)
            .on_stderr_line(self.stderr.append)
            .build()
        )
        self.stdio = StdioAcpClientTransport(params)
        transport = RecordingTransport(self.stdio, self.traffic)
        self.terminals = LocalTerminals([str(self.workspace)])
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        if api == "sync":
            sync_builder = (
                AcpClient.sync(transport)
                .request_timeout(REQUEST_TIMEOUT_S)
                .prompt_timeout(prompt_timeout)
                .client_capabilities(capabilities)
                .session_update_consumer(self._on_update)
                .read_text_file_handler(self._read)
                .write_text_file_handler(self._write)
                .request_permission_handler(self._permission)
                .track_session_states()  # the read model, against production agents too
            )
            self.terminals.install(sync_builder)
            self.sync: AcpSyncClient | None = sync_builder.build()
            self.client = self.sync.async_client
        else:
            async_builder = (
                AcpClient.async_(transport)
                .request_timeout(REQUEST_TIMEOUT_S)
                .prompt_timeout(prompt_timeout)
                .client_capabilities(capabilities)
                .session_update_consumer(self._on_update)
                .read_text_file_handler(self._read_async)
                .write_text_file_handler(self._write_async)
                .request_permission_handler(self._permission)
                .track_session_states()  # the read model, against production agents too
            )
            self.terminals.install(async_builder)
            self.sync = None
            self.client = async_builder.build()
        self.session_id = ""

    # ------------------------------------------------------------------ handlers
    def _on_update(self, note: SessionNotification) -> None:
        with self.update_arrived:
            self.updates.append(note)
            self.update_arrived.notify_all()

    def _read(self, req: ReadTextFileRequest) -> ReadTextFileResponse:
        self.reads.append(req.path)
        return self.fs.read_text_file(req)

    def _write(self, req: WriteTextFileRequest) -> WriteTextFileResponse:
        self.writes.append(req.path)
        return self.fs.write_text_file(req)

    async def _read_async(self, req: ReadTextFileRequest) -> ReadTextFileResponse:
        self.reads.append(req.path)
        return await self.fs.read_text_file_async(req)

    async def _write_async(self, req: WriteTextFileRequest) -> WriteTextFileResponse:
        self.writes.append(req.path)
        return await self.fs.write_text_file_async(req)

    def _permission(self, req: RequestPermissionRequest) -> RequestPermissionResponse:
        self.permission_requests.append(req)
        # "allow_once" / "reject_once" first: an "always" answer changes the agent's settings.
        once = f"{self.permission_choice}_once"
        prefix = f"{self.permission_choice}_"
        option = next((o for o in req.options if str(o.kind) == once), None) or next(
            (o for o in req.options if str(o.kind).startswith(prefix)), None
        )
        if option is None:
            kinds = [str(o.kind) for o in req.options]
            raise AssertionError(f"no {self.permission_choice} option among {kinds}")
        return RequestPermissionResponse.selected(option.option_id)

    # ------------------------------------------------------------------ calls
    def call(self, name: str, *args: Any, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        """Client call ``name``: blocking with the sync API, an awaited Observable otherwise."""
        if self.sync is not None:
            return getattr(self.sync, name)(*args)
        return wait_for(getattr(self.client, name)(*args), timeout, what=name)

    def start(self) -> str:
        """``initialize`` (+ ``authenticate`` where the agent wants it) and ``session/new``."""
        self.call("initialize")
        if self.agent.auth_method is not None:
            self.call("authenticate", {"methodId": self.agent.auth_method})
        self.session_id = self.new_session()
        return self.session_id

    def new_session(self) -> str:
        """``session/new`` in the workspace; returns the id."""
        answer = self.call("new_session", {"cwd": str(self.workspace), "mcpServers": []})
        return str(answer.session_id)

    def prompt(
        self, text: str, stop: CancellationSignal | None = None, timeout: float = PROMPT_BOUND_S
    ) -> PromptResponse:
        """One turn of this rig's session, waited for (bounded)."""
        request = PromptRequest.text(self.session_id, text)
        if self.sync is not None:
            return self.sync.prompt(request, stop)
        answer: PromptResponse = wait_for(self.client.prompt(request, stop), timeout, what="prompt")
        return answer

    # ------------------------------------------------------------------ facts
    def texts(self, since: int = 0) -> str:
        """The agent message text of this rig's session from update number ``since`` on."""
        with self.update_arrived:
            notes = self.updates[since:]
        return "".join(
            n.update.content.text
            for n in notes
            if n.session_id == self.session_id
            and isinstance(n.update, AgentMessageChunk)
            and isinstance(n.update.content, TextContent)
        )

    def wait_for_text(self, needle: str, timeout: float) -> bool:
        """Wait until the session's agent text contains ``needle``."""
        deadline = time.monotonic() + timeout
        with self.update_arrived:
            while needle not in self.texts():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.update_arrived.wait(left)
        return True

    def pid(self) -> int:
        """The agent's process id."""
        pid = self.stdio.pid
        if pid is None:
            raise AssertionError(f"{self.agent.name} was never started")
        return pid

    def describe(self) -> str:
        """Context for a failed assertion: the agent's stderr tail and the model requests."""
        models = [(r.path, r.reply) for r in self.server.model_requests()]
        tail = "\n".join(self.stderr[-15:])
        return f"model requests: {models}\nerrors: {self.server.errors}\nstderr tail:\n{tail}"

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the client (the agent process group goes with it) and drop the folders."""
        try:
            if self.sync is not None:
                self.sync.close()
            else:
                self.client.close()
        finally:
            if self._tmp is not None:
                with contextlib.suppress(OSError):
                    self._tmp.cleanup()


@contextlib.contextmanager
def field_rig(
    agent: FieldAgent, api: str, server: FakeModelServer, **options: Any
) -> Iterator[FieldRig]:
    """A :class:`FieldRig`, closed afterwards."""
    rig = FieldRig(agent, api, server, **options)
    try:
        yield rig
    finally:
        rig.close()
