"""``PromptContext`` (Observables) and ``SyncPromptContext`` (blocking): a prompt handler's view
of its turn — streaming updates, asking the client for files, permission and terminals, and
noticing cancellation.

Every agent→client request made through a context belongs to the turn: when the turn is
cancelled it is disposed (the client gets ``$/cancel_request``) and errors with ``-32800``.
Updates sent after the turn was answered are dropped (and logged), never written.

This module is *not* responsible for when a turn ends or what it answers (``turn.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import reactivex
from reactivex import abc
from reactivex import operators as ops

from ..capabilities import NegotiatedCapabilities
from ..schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    EnvVariable,
    KillTerminalRequest,
    PermissionOption,
    Plan,
    PlanEntry,
    PromptRequest,
    ReadTextFileRequest,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TerminalOutputRequest,
    TerminalOutputResponse,
    TextContent,
    ToolCall,
    ToolCallUpdate,
    ToolCallUpdateNotification,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
)
from ..schema._capabilities import UPDATE_CAPABILITIES
from ..session import AcpObservable
from ..session.blocking import wait_for
from ..session.signal import CancelReason
from .turn import PromptTurn

if TYPE_CHECKING:
    from .core import AgentCore

__all__ = ["CommandResult", "PromptContext", "SyncPromptContext"]

_tool_ids = itertools.count(1)


@dataclass(frozen=True)
class CommandResult:
    """What :meth:`PromptContext.execute` returns: the output and how the command ended."""

    output: str
    exit_code: int | None
    signal: str | None
    truncated: bool


def _selected_option(response: RequestPermissionResponse) -> str | None:
    outcome = response.outcome
    if getattr(outcome, "outcome", None) == "selected":
        option_id = getattr(outcome, "option_id", None)
        return option_id if isinstance(option_id, str) else None
    return None


def _text_chunk(kind: str, text: str, message_id: str | None) -> dict[str, Any]:
    """The wire form of a text chunk update, exactly as ``to_wire()`` of the model writes it.

    The hot path of streaming: building and validating two models per chunk cost ~25 µs
    (measured); the strings were type-checked by the caller, so there is nothing to validate.
    """
    if message_id is None:
        return {"content": {"type": "text", "text": text}, "sessionUpdate": kind}
    return {
        "content": {"type": "text", "text": text},
        "messageId": message_id,
        "sessionUpdate": kind,
    }


_R = TypeVar("_R")


class _ContextBase:
    """What both contexts share: identity, updates and cancellation."""

    def __init__(self, core: AgentCore, turn: PromptTurn) -> None:
        self._core = core
        self._turn = turn

    @property
    def session_id(self) -> str:
        """The ACP session this turn belongs to."""
        return self._turn.session_id

    @property
    def request(self) -> PromptRequest:
        """The ``session/prompt`` request being handled."""
        return self._turn.request

    @property
    def client_capabilities(self) -> NegotiatedCapabilities:
        """What the client advertised in ``initialize`` (empty if it never initialized)."""
        return self._core.client_capabilities or NegotiatedCapabilities({}, peer="client")

    @property
    def scheduler(self) -> abc.SchedulerBase:
        """The connection's scheduler: use it for timers in handlers so tests can drive them
        in virtual time (``reactivex.timer(1.0, scheduler=ctx.scheduler)``)."""
        return self._core.session.scheduler

    # -- cancellation ------------------------------------------------------------------------
    def is_cancelled(self) -> bool:
        """True once the turn is cancelled by any trigger (sticky). Poll it between steps."""
        return self._turn.signal.is_set()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once on cancellation (now, if already cancelled). Must not block."""
        self._turn.signal.on_cancel(callback)

    @property
    def cancel_reason(self) -> CancelReason | None:
        """Which trigger cancelled the turn (``CancelReason.SESSION_CANCEL``,
        ``CancelReason.GRACE_PERIOD``...; a ``StrEnum``: equal to ``"session/cancel"``...)."""
        return self._turn.signal.reason

    # -- updates (never block) ------------------------------------------------------------------
    def send_update(self, update: Any) -> None:
        """Send one ``session/update``: a ``SessionUpdate`` variant or a ``SessionNotification``.

        Updates the schema reserves for clients that advertised a capability (``notice`` needs
        ``session.notices``, ``compaction_*`` ``session.compaction``) raise
        :class:`~rxacp.errors.AcpCapabilityException` instead of being sent to a client
        that did not.
        """
        inner = update.update if isinstance(update, SessionNotification) else update
        needs = UPDATE_CAPABILITIES.get(getattr(inner, "session_update", None) or "")
        if needs is not None:
            self.client_capabilities.require(needs)
        self._turn.send_update(update)

    def send_message(self, text: str, message_id: str | None = None) -> None:
        """Stream a chunk of the agent's answer (``agent_message_chunk`` with text)."""
        if type(text) is str and (message_id is None or type(message_id) is str):
            self._turn.send_wire_update(_text_chunk("agent_message_chunk", text, message_id))
            return
        self._turn.send_update(
            AgentMessageChunk(content=TextContent(text=text), message_id=message_id)
        )

    def send_thought(self, text: str, message_id: str | None = None) -> None:
        """Stream a chunk of the agent's reasoning (``agent_thought_chunk``)."""
        if type(text) is str and (message_id is None or type(message_id) is str):
            self._turn.send_wire_update(_text_chunk("agent_thought_chunk", text, message_id))
            return
        self._turn.send_update(
            AgentThoughtChunk(content=TextContent(text=text), message_id=message_id)
        )

    def send_plan(self, entries: Iterable[PlanEntry | str | Mapping[str, Any]]) -> None:
        """Send the whole plan; strings become pending, medium-priority entries."""
        items = [
            e
            if isinstance(e, PlanEntry)
            else PlanEntry(content=e, priority="medium", status="pending")
            if isinstance(e, str)
            else PlanEntry.from_wire(dict(e))
            for e in entries
        ]
        self._turn.send_update(Plan(entries=items))

    def start_tool_call(
        self,
        title: str,
        *,
        kind: str | None = None,
        status: str = "pending",
        tool_call_id: str | None = None,
        **fields: Any,
    ) -> str:
        """Announce a tool call (``tool_call`` update) and return its id."""
        call_id = tool_call_id or f"call_{next(_tool_ids)}"
        self._turn.send_update(
            ToolCall(tool_call_id=call_id, title=title, kind=kind, status=status, **fields)
        )
        return call_id

    def update_tool_call(self, tool_call_id: str, **fields: Any) -> None:
        """Report progress or results of a tool call (``tool_call_update``); only changed fields."""
        self._turn.send_update(ToolCallUpdateNotification(tool_call_id=tool_call_id, **fields))

    # -- plumbing ------------------------------------------------------------------------
    def _call(self, method: str, params: Any) -> AcpObservable[Any]:
        return self._turn.track(self._core.call(method, params))

    def _permission_request(self, title: str, options: Sequence[PermissionOption]) -> Any:
        return RequestPermissionRequest(
            session_id=self.session_id,
            tool_call=ToolCallUpdate(tool_call_id=f"permission_{next(_tool_ids)}", title=title),
            options=list(options),
        )


class PromptContext(_ContextBase):
    """The async handler's context: every client call is a cold :class:`AcpObservable`."""

    def to_sync(self) -> SyncPromptContext:
        """The blocking view of the same turn (for code running on a worker thread)."""
        return SyncPromptContext(self._core, self._turn)

    def when_cancelled(self) -> reactivex.Observable[CancelReason]:
        """Emits the reason and completes when the turn is cancelled (late subscribers too)::

        work.pipe(ops.take_until(ctx.when_cancelled()))

        when_cancelled()   ----------r|
        """
        return self._turn.signal.when_cancelled()

    def read_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> AcpObservable[str]:
        """``fs/read_text_file``: the file's text (needs ``fs.readTextFile``). ``--text|``"""
        req = ReadTextFileRequest(session_id=self.session_id, path=path, line=line, limit=limit)
        text = self._call("fs/read_text_file", req).pipe(ops.map(lambda r: r.content))
        return cast("AcpObservable[str]", text)

    def write_file(self, path: str, content: str) -> AcpObservable[Any]:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``). ``--r|``"""
        req = WriteTextFileRequest(session_id=self.session_id, path=path, content=content)
        return self._call("fs/write_text_file", req)

    def request_permission(
        self, request: RequestPermissionRequest
    ) -> AcpObservable[RequestPermissionResponse]:
        """``session/request_permission`` as given. ``--response|``"""
        return self._call("session/request_permission", request)

    def ask_permission(self, action: str) -> AcpObservable[bool]:
        """Ask allow/reject for ``action``: True only if the user chose *allow*. ``--b|``"""
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        request = self._permission_request(action, options)
        allowed: AcpObservable[bool] = self._call("session/request_permission", request).pipe(
            ops.map(lambda r: _selected_option(r) == "allow")
        )
        return allowed

    def ask_choice(self, question: str, options: Sequence[str]) -> AcpObservable[str | None]:
        """Ask the user to pick one of ``options``: ``--text|``, or ``--None|`` if cancelled."""
        perm = [
            PermissionOption(option_id=str(i), name=text, kind="allow_once")
            for i, text in enumerate(options)
        ]

        def chosen(response: RequestPermissionResponse) -> str | None:
            selected = _selected_option(response)
            if selected is not None and selected.isdigit() and int(selected) < len(options):
                return options[int(selected)]
            return None

        request = self._permission_request(question, perm)
        choice: AcpObservable[str | None] = self._call("session/request_permission", request).pipe(
            ops.map(chosen)
        )
        return choice

    def create_terminal(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> AcpObservable[str]:
        """``terminal/create``: the new terminal's id (needs ``terminal``). ``--id|``"""
        req = CreateTerminalRequest(
            session_id=self.session_id,
            command=command,
            args=list(args) or None,
            env=[EnvVariable(name=k, value=v) for k, v in env.items()] if env else None,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )
        terminal_id = self._call("terminal/create", req).pipe(ops.map(lambda r: r.terminal_id))
        return cast("AcpObservable[str]", terminal_id)

    def terminal_output(self, terminal_id: str) -> AcpObservable[TerminalOutputResponse]:
        """``terminal/output``: output so far, truncation and exit status. ``--response|``"""
        return self._call(
            "terminal/output",
            TerminalOutputRequest(session_id=self.session_id, terminal_id=terminal_id),
        )

    def wait_for_terminal_exit(
        self, terminal_id: str
    ) -> AcpObservable[WaitForTerminalExitResponse]:
        """``terminal/wait_for_exit``: emits when the command exits. ``-----exit|``"""
        return self._call(
            "terminal/wait_for_exit",
            WaitForTerminalExitRequest(session_id=self.session_id, terminal_id=terminal_id),
        )

    def kill_terminal(self, terminal_id: str) -> AcpObservable[Any]:
        """``terminal/kill``: kill the command, keep the terminal. ``--r|``"""
        return self._call(
            "terminal/kill",
            KillTerminalRequest(session_id=self.session_id, terminal_id=terminal_id),
        )

    def release_terminal(self, terminal_id: str) -> AcpObservable[Any]:
        """``terminal/release``: kill if running and free the terminal. ``--r|``"""
        return self._call(
            "terminal/release",
            ReleaseTerminalRequest(session_id=self.session_id, terminal_id=terminal_id),
        )

    def execute(
        self,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> AcpObservable[CommandResult]:
        """Run a command in a client terminal, wait for it, return its output; the terminal is
        always released (also on error or cancellation). ``--result|``"""

        def run(terminal_id: str) -> reactivex.Observable[CommandResult]:
            release = self._core.call(
                "terminal/release",
                ReleaseTerminalRequest(session_id=self.session_id, terminal_id=terminal_id),
            )

            def to_result(out: TerminalOutputResponse) -> CommandResult:
                status = out.exit_status
                return CommandResult(
                    output=out.output,
                    exit_code=status.exit_code if status else None,
                    signal=status.signal if status else None,
                    truncated=out.truncated,
                )

            def finish(_exit: Any) -> reactivex.Observable[CommandResult]:
                output: reactivex.Observable[CommandResult] = self.terminal_output(
                    terminal_id
                ).pipe(ops.map(to_result))
                return output

            def release_now() -> None:
                release.subscribe(on_error=lambda _e: None)

            work: reactivex.Observable[CommandResult] = self.wait_for_terminal_exit(
                terminal_id
            ).pipe(ops.flat_map(finish))
            return work.pipe(ops.finally_action(release_now))

        created = self.create_terminal(
            command, args, env=env, cwd=cwd, output_byte_limit=output_byte_limit
        )
        result: AcpObservable[CommandResult] = created.pipe(ops.flat_map(run))
        return result

    def create_elicitation(
        self, request: CreateElicitationRequest
    ) -> AcpObservable[CreateElicitationResponse]:
        """``elicitation/create`` (needs ``elicitation``). ``--response|``"""
        return self._call("elicitation/create", request)


class SyncPromptContext(_ContextBase):
    """The blocking handler's context: the same calls, returning values and raising errors.

    Calls wait at most the agent's request timeout (the request itself times out first);
    a cancelled turn makes a waiting call raise ``AcpProtocolException`` (-32800) at once.
    """

    def __init__(self, core: AgentCore, turn: PromptTurn) -> None:
        super().__init__(core, turn)
        self._async = PromptContext(core, turn)

    def to_async(self) -> PromptContext:
        """The Observable view of the same turn (``when_cancelled()`` lives there)."""
        return self._async

    def _block(self, source: reactivex.Observable[_R]) -> _R:
        """The one blocking wait of the sync context: ``source``'s last value, typed."""
        if self._core.session.runner.in_loop():
            raise RuntimeError("a SyncPromptContext call would block the connection's event loop")
        timeout = self._core.session.request_timeout
        value = wait_for(
            source, None if timeout is None else timeout + 5.0, what="prompt context call"
        )
        return cast(_R, value)

    def read_file(self, path: str, *, line: int | None = None, limit: int | None = None) -> str:
        """``fs/read_text_file``: the file's text (needs ``fs.readTextFile``)."""
        return self._block(self._async.read_file(path, line=line, limit=limit))

    def write_file(self, path: str, content: str) -> None:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``)."""
        self._block(self._async.write_file(path, content))

    def request_permission(self, request: RequestPermissionRequest) -> RequestPermissionResponse:
        """``session/request_permission`` as given."""
        return self._block(self._async.request_permission(request))

    def ask_permission(self, action: str) -> bool:
        """Ask allow/reject for ``action``: True only if the user chose *allow*."""
        return self._block(self._async.ask_permission(action))

    def ask_choice(self, question: str, options: Sequence[str]) -> str | None:
        """Ask the user to pick one of ``options``; the chosen text, or None if cancelled."""
        return self._block(self._async.ask_choice(question, options))

    def create_terminal(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        """``terminal/create``: the new terminal's id."""
        return self._block(
            self._async.create_terminal(
                command, args, env=env, cwd=cwd, output_byte_limit=output_byte_limit
            )
        )

    def terminal_output(self, terminal_id: str) -> TerminalOutputResponse:
        """``terminal/output``."""
        return self._block(self._async.terminal_output(terminal_id))

    def wait_for_terminal_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``."""
        return self._block(self._async.wait_for_terminal_exit(terminal_id))

    def kill_terminal(self, terminal_id: str) -> None:
        """``terminal/kill``."""
        self._block(self._async.kill_terminal(terminal_id))

    def release_terminal(self, terminal_id: str) -> None:
        """``terminal/release``."""
        self._block(self._async.release_terminal(terminal_id))

    def execute(
        self,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> CommandResult:
        """Run a command in a client terminal and return its output (terminal always released)."""
        return self._block(
            self._async.execute(
                command, *args, env=env, cwd=cwd, output_byte_limit=output_byte_limit
            )
        )

    def create_elicitation(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        """``elicitation/create``."""
        return self._block(self._async.create_elicitation(request))
