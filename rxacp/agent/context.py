"""``PromptContext`` (Observables) and ``SyncPromptContext`` (blocking): a prompt handler's view
of its turn — streaming updates, asking the client for files, permission and terminals, and
noticing cancellation.

Every agent→client request made through a context belongs to the turn: when the turn is
cancelled it is disposed (the client gets ``$/cancel_request``) and errors with ``-32800``.
Updates sent after the turn was answered are dropped (and logged), never written.

This module is *not* responsible for when a turn ends or what it answers (``turn.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import reactivex
from reactivex import operators as ops
from reactivex.subject import AsyncSubject

from ..roles.twins import Blocking
from ..schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CreateTerminalResponse,
    EnvVariable,
    PermissionOption,
    Plan,
    PlanEntry,
    PromptRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    SessionNotification,
    TerminalOutputResponse,
    TextContent,
    ToolCall,
    ToolCallUpdate,
    ToolCallUpdateNotification,
    WaitForTerminalExitResponse,
)
from ..schema._capabilities import UPDATE_CAPABILITIES
from ..session import AcpObservable
from .calls import AsyncClientCalls, SyncClientCalls
from .turn import PromptTurn
from .turn_view import TurnView, WhenCancelled, allowed, chosen, tool_ids

if TYPE_CHECKING:
    from .core import AgentCore

__all__ = ["CommandResult", "PromptContext", "SyncPromptContext"]


@dataclass(frozen=True)
class CommandResult:
    """What :meth:`PromptContext.execute` returns: the output and how the command ended."""

    output: str
    exit_code: int | None
    signal: str | None
    truncated: bool


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


class _ContextBase(TurnView[PromptRequest]):
    """What both v1 contexts share besides the turn view: updates and the client calls'
    plumbing."""

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

    def _announce_tool_call(
        self, call_id: str, title: str, kind: str | None, status: str, fields: dict[str, Any]
    ) -> None:
        self._turn.send_update(
            ToolCall(tool_call_id=call_id, title=title, kind=kind, status=status, **fields)
        )

    def update_tool_call(self, tool_call_id: str, **fields: Any) -> None:
        """Report progress or results of a tool call (``tool_call_update``); only changed fields."""
        self._turn.send_update(ToolCallUpdateNotification(tool_call_id=tool_call_id, **fields))

    # -- plumbing: what the table-derived calls of ``calls.py`` need ------------------------
    def _send(self, method: str, params: Any) -> AcpObservable[Any]:
        return self._turn.track(self._core.call(method, params))

    def _notify(self, method: str, params: Any) -> None:
        self._core.notify(method, params)

    def _call_session_id(self) -> str | None:
        return self._turn.session_id

    def _permission_request(
        self, title: str, options: Sequence[PermissionOption]
    ) -> RequestPermissionRequest:
        return RequestPermissionRequest(
            session_id=self.session_id,
            tool_call=ToolCallUpdate(tool_call_id=f"permission_{next(tool_ids)}", title=title),
            options=list(options),
        )


def _content(response: ReadTextFileResponse) -> str:
    return response.content


def _nothing(_response: object) -> None:
    return None


def _choices(options: tuple[str | Sequence[str], ...]) -> tuple[str, ...]:
    """``ask_choice``'s options: one list of texts, or the texts as separate arguments."""
    if len(options) == 1 and not isinstance(options[0], str):
        options = tuple(options[0])
    if not options or not all(isinstance(o, str) for o in options):
        raise TypeError(f"ask_choice options must be texts (str), got {options!r}")
    return options  # type: ignore[return-value]  # checked above: every item is a str


def _command_result(out: TerminalOutputResponse) -> CommandResult:
    status = out.exit_status
    return CommandResult(
        output=out.output,
        exit_code=status.exit_code if status else None,
        signal=status.signal if status else None,
        truncated=out.truncated,
    )


class PromptContext(_ContextBase, AsyncClientCalls, WhenCancelled):
    """The async handler's context: every client call is a cold :class:`AcpObservable`.

    The calls named after ACP methods (``read_text_file``, ``create_terminal``,
    ``terminal_output``...) are the agent's (:class:`~rxacp.agent.AcpAsyncAgent`), bound to this
    turn; the helpers below (``read_file``, ``ask_permission``, ``execute``...) are built on them.
    """

    def to_sync(self) -> SyncPromptContext:
        """The blocking view of the same turn (for code running on a worker thread)."""
        return SyncPromptContext(self._core, self._turn)

    def read_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> AcpObservable[str]:
        """``fs/read_text_file``: the file's text (needs ``fs.readTextFile``). ``--text|``"""
        return self.read_text_file(path=path, line=line, limit=limit).pipe(ops.map(_content))

    def write_file(self, path: str, content: str) -> AcpObservable[None]:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``). ``--None|``"""
        return self.write_text_file(path=path, content=content).pipe(ops.map(_nothing))

    def ask_permission(self, action: str) -> AcpObservable[bool]:
        """Ask allow/reject for ``action``: True only if the user chose *allow*. ``--b|``"""
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        request = self._permission_request(action, options)
        return self.request_permission(request).pipe(ops.map(allowed))

    def ask_choice(self, question: str, *options: str | Sequence[str]) -> AcpObservable[str | None]:
        """Ask the user to pick one of ``options``: ``--text|``, or ``--None|`` if cancelled.

        ``options`` is a list (``ask_choice(q, ["a", "b"])``) or the texts themselves, as
        Java's varargs ``askChoice(q, "a", "b")``.
        """
        options = _choices(options)
        perm = [
            PermissionOption(option_id=str(i), name=text, kind="allow_once")
            for i, text in enumerate(options)
        ]

        request = self._permission_request(question, perm)
        return self.request_permission(request).pipe(ops.map(chosen(options)))

    def execute(
        self,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> AcpObservable[CommandResult]:
        """Run a command in a client terminal, wait for it, return its output; the terminal is
        always released (also on error or cancellation). ``--result|``, emitted once the
        client answered the release (so the terminal is gone when the result arrives)."""

        def run(created: CreateTerminalResponse) -> reactivex.Observable[CommandResult]:
            terminal_id = created.terminal_id
            # not tracked by the turn: the release still goes out when the turn is cancelled
            release = self._core.call(
                "terminal/release",
                ReleaseTerminalRequest(session_id=self.session_id, terminal_id=terminal_id),
            )

            @functools.cache
            def release_once() -> reactivex.Observable[Any]:
                """Send the release once; its answer (or error) without tying it to whoever
                waits: disposing the turn must not cancel the release."""
                subject: AsyncSubject[Any] = AsyncSubject()
                release.subscribe(subject)
                return subject.pipe(ops.catch(reactivex.just(None)))

            def finish(_exit: WaitForTerminalExitResponse) -> reactivex.Observable[CommandResult]:
                return self.terminal_output(terminal_id=terminal_id).pipe(
                    ops.map(_command_result),
                    ops.flat_map(lambda result: release_once().pipe(ops.map(lambda _: result))),
                )

            def release_at_the_end() -> None:
                release_once()

            return self.wait_for_terminal_exit(terminal_id=terminal_id).pipe(
                ops.flat_map(finish), ops.finally_action(release_at_the_end)
            )

        created = self.create_terminal(
            command=command,
            args=list(args) or None,
            env=[EnvVariable(name=k, value=v) for k, v in env.items()] if env else None,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )
        return created.pipe(ops.flat_map(run))


class SyncPromptContext(_ContextBase, SyncClientCalls):
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

    read_file = Blocking(PromptContext.read_file)
    write_file = Blocking(PromptContext.write_file)
    ask_permission = Blocking(PromptContext.ask_permission)
    ask_choice = Blocking(PromptContext.ask_choice)
    execute = Blocking(PromptContext.execute)
