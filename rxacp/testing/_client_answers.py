"""Canned answers a :class:`MockAcpClient` gives to the agent under test.

In-memory files for ``fs/read_text_file`` / ``fs/write_text_file``, a permission policy for
``session/request_permission`` and scripted terminals for ``terminal/*``; per-method scripts
(``on(method, answer)``, kept by the mock) override any of them. Everything the agent asked is
recorded.

This module is *not* responsible for the connection, waits or updates (``_mock_client.py``), nor
for per-method scripts (``_mock_peer.py``).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rxacp.errors import AcpProtocolException, peer_echo
from rxacp.schema import (
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
)

__all__ = [
    "DEFAULT_CLIENT_CAPABILITIES",
    "CannedClientAnswers",
    "PermissionAnswer",
    "ScriptedTerminal",
]

DEFAULT_CLIENT_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}
"""What a :class:`MockAcpClient` advertises unless given ``client_capabilities``."""

PermissionAnswer = (
    Literal["allow", "reject", "cancel"]
    | str
    | Callable[[RequestPermissionRequest], "RequestPermissionResponse | str | None"]
)
"""``"allow"`` / ``"reject"`` (the first option of that kind), ``"cancel"`` (outcome
``cancelled``), an option id, or ``fn(request)`` returning a response, an option id, or
``None`` (``cancelled``)."""


@dataclass(frozen=True)
class ScriptedTerminal:
    """What a scripted command prints and how it exits."""

    output: str = ""
    exit_code: int | None = 0
    signal: str | None = None
    truncated: bool = False


class CannedClientAnswers:
    """The answering half of :class:`MockAcpClient` (thread-safe; handlers run on workers)."""

    def __init__(self) -> None:
        self._answers_lock = threading.Lock()
        self.files: dict[str, str] = {}
        """Current content of the in-memory files (canned and written by the agent)."""
        self.written: dict[str, str] = {}
        """Files the agent wrote (``fs/write_text_file``), last content per path."""
        self.permission_requests: list[RequestPermissionRequest] = []
        """Every permission request the agent made, in order."""
        self.commands: list[str] = []
        """Command lines of every terminal the agent created, in order."""
        self._permission: PermissionAnswer = "reject"
        self._terminal_scripts: dict[str | None, ScriptedTerminal] = {}
        self._terminals: dict[str, ScriptedTerminal] = {}
        self._terminal_ids = itertools.count(1)

    # ------------------------------------------------------------------ scripting
    def file(self, path: str, content: str) -> Any:
        """Serve ``content`` for the absolute ``path`` (returns the mock, for chaining)."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"ACP file paths are absolute; got {path!r}")
        if not isinstance(content, str):
            raise TypeError(f"file content must be a str, got {type(content).__name__}")
        with self._answers_lock:
            self.files[path] = content
        return self

    def permission(self, answer: PermissionAnswer) -> Any:
        """How to answer permission requests (default ``"reject"``: never auto-approved)."""
        if not callable(answer) and not isinstance(answer, str):
            raise TypeError("permission() takes 'allow', 'reject', 'cancel', an option id or fn")
        with self._answers_lock:
            self._permission = answer
        return self

    def terminal(
        self,
        command: str | None = None,
        *,
        output: str = "",
        exit_code: int | None = 0,
        signal: str | None = None,
        truncated: bool = False,
    ) -> Any:
        """Script a terminal: what ``command`` (the full command line ``"ls -la"`` or just
        ``"ls"``; ``None``: any command) prints and its exit status."""
        with self._answers_lock:
            self._terminal_scripts[command] = ScriptedTerminal(output, exit_code, signal, truncated)
        return self

    # ------------------------------------------------------------------ answering
    def canned_answer(self, method: str, request: Any) -> Any:
        """The canned answer to one agent→client request (``-32601`` for other methods)."""
        canned = _CANNED.get(method)
        if canned is None:
            raise AcpProtocolException.method_not_found(
                method, f"MockAcpClient: script it with mock.on({method!r}, ...)"
            )
        return canned(self, request)

    def _read(self, request: ReadTextFileRequest) -> ReadTextFileResponse:
        with self._answers_lock:
            content = self.files.get(request.path)
        if content is None:
            raise AcpProtocolException.resource_not_found(
                f"MockAcpClient has no file {request.path}; add it with mock.file(path, content)",
                {"path": request.path},
            )
        if request.line is not None or request.limit is not None:
            lines = content.splitlines(keepends=True)
            start = max((request.line or 1) - 1, 0)
            end = None if request.limit is None else start + request.limit
            content = "".join(lines[start:end])
        return ReadTextFileResponse(content=content)

    def _write(self, request: WriteTextFileRequest) -> None:
        with self._answers_lock:
            self.files[request.path] = request.content
            self.written[request.path] = request.content

    def _ask(self, request: RequestPermissionRequest) -> RequestPermissionResponse:
        with self._answers_lock:
            self.permission_requests.append(request)
            policy = self._permission
        chosen = policy(request) if callable(policy) else policy
        if isinstance(chosen, RequestPermissionResponse):
            return chosen
        if chosen is None or chosen == "cancel":
            return RequestPermissionResponse.cancelled()
        offered = [o.option_id for o in request.options]
        if chosen in ("allow", "reject"):
            for option in request.options:
                if str(option.kind).startswith(chosen):
                    return RequestPermissionResponse.selected(option.option_id)
            raise AcpProtocolException.invalid_params(
                f"MockAcpClient.permission({chosen!r}): the request offered no {chosen}_* "
                f"option (offered: {offered})"
            )
        if isinstance(chosen, Mapping):
            return RequestPermissionResponse.from_wire(dict(chosen))
        if chosen not in offered:
            raise AcpProtocolException.invalid_params(
                f"MockAcpClient.permission: option {chosen!r} was not offered (offered: {offered})"
            )
        return RequestPermissionResponse.selected(str(chosen))

    def _create_terminal(self, request: CreateTerminalRequest) -> CreateTerminalResponse:
        line = " ".join([request.command, *(request.args or [])])
        with self._answers_lock:
            self.commands.append(line)
            scripts = self._terminal_scripts
            script = scripts.get(line) or scripts.get(request.command) or scripts.get(None)
            if script is None:
                raise AcpProtocolException.internal_error(
                    f"MockAcpClient has no terminal scripted for {line!r}; add one with "
                    f"mock.terminal({request.command!r}, output=..., exit_code=...)"
                )
            terminal_id = f"term-{next(self._terminal_ids)}"
            self._terminals[terminal_id] = script
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, request: Any) -> ScriptedTerminal:
        with self._answers_lock:
            script = self._terminals.get(request.terminal_id)
        if script is None:
            raise AcpProtocolException.invalid_params(
                f"unknown terminal {peer_echo(request.terminal_id)}"
            )
        return script

    def _output(self, request: Any) -> TerminalOutputResponse:
        script = self._terminal(request)
        status = {"exitCode": script.exit_code, "signal": script.signal}
        return TerminalOutputResponse.from_wire(
            {
                "output": script.output,
                "truncated": script.truncated,
                "exitStatus": {k: v for k, v in status.items() if v is not None},
            }
        )

    def _wait_exit(self, request: Any) -> WaitForTerminalExitResponse:
        script = self._terminal(request)
        return WaitForTerminalExitResponse(exit_code=script.exit_code, signal=script.signal)

    def _release(self, request: Any) -> None:
        self._terminal(request)

    def _elicit(self, request: Any) -> CreateElicitationResponse:
        return CreateElicitationResponse(action="decline")


_CANNED: dict[str, Callable[[CannedClientAnswers, Any], Any]] = {
    "fs/read_text_file": CannedClientAnswers._read,
    "fs/write_text_file": CannedClientAnswers._write,
    "session/request_permission": CannedClientAnswers._ask,
    "terminal/create": CannedClientAnswers._create_terminal,
    "terminal/output": CannedClientAnswers._output,
    "terminal/wait_for_exit": CannedClientAnswers._wait_exit,
    "terminal/kill": CannedClientAnswers._release,
    "terminal/release": CannedClientAnswers._release,
    "elicitation/create": CannedClientAnswers._elicit,
}
