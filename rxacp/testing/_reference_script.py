"""The reference agent's behaviours, written once as *effect scripts* for all three APIs.

A behaviour is a generator that yields effects (``Say``, ``Pause``, ``ReadFile`` ...) and gets
each effect's result back (``cancelled = yield Pause(0.1)``; ``text = yield ReadFile(path)``);
a failed effect is thrown into the generator. The two interpreters that run the same scripts
for every API live in ``_reference_run.py``.

This module is *not* responsible for performing effects (``_reference_run.py``), nor for
sessions (``session/new``, ``load``, ``list``...), building agents or command-line flags: see
:mod:`rxacp.testing.reference_agent`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from ..errors import AcpErrorCodes, AcpException, AcpProtocolException
from ..schema import (
    PermissionOption,
    Plan,
    PlanEntry,
    PromptResponse,
    RequestPermissionRequest,
    ToolCall,
    ToolCallUpdate,
    ToolCallUpdateNotification,
)

__all__ = [
    "BEHAVIOURS",
    "STREAM_SENTENCE",
    "STREAM_WORDS",
    "STUBBORN_WORDS",
    "VOCABULARY",
    "AskPermission",
    "Effect",
    "Finished",
    "Pause",
    "ReadFile",
    "RunCommand",
    "Say",
    "Script",
    "Update",
    "WriteFile",
    "recorded",
    "resume",
    "script_for",
]

STREAM_SENTENCE = (
    "Every ACP request is a cold Observable: subscribe to send it, dispose to cancel it."
)
STREAM_WORDS: tuple[str, ...] = tuple(STREAM_SENTENCE.split(" "))
"""The words ``stream`` and ``slow`` send, one chunk each (``word + " "``), cycling."""

STUBBORN_WORDS: tuple[str, ...] = ("I", "ignore", "cancellation", "and", "keep", "working")
"""What ``stubborn`` sends first; then ``…`` chunks until its time is up."""

TICK = 0.1
"""Seconds between two chunks of ``slow`` and ``stubborn``."""

_ids = itertools.count(1)


# --------------------------------------------------------------------------------- effects
@dataclass(frozen=True)
class Say:
    """Stream a text chunk (``agent_message_chunk``, or ``agent_thought_chunk``). → None"""

    text: str
    thought: bool = False


@dataclass(frozen=True)
class Update:
    """Send any ``session/update`` variant (plan, tool call ...). → None"""

    update: Any


@dataclass(frozen=True)
class Pause:
    """Wait ``seconds``. → True if the turn was cancelled meanwhile (cooperative waits end at
    once on cancellation; a non-cooperative one ignores it and always returns False)."""

    seconds: float
    cooperative: bool = True


@dataclass(frozen=True)
class ReadFile:
    """``fs/read_text_file``. → the file's text"""

    path: str


@dataclass(frozen=True)
class WriteFile:
    """``fs/write_text_file``. → None"""

    path: str
    content: str


@dataclass(frozen=True)
class AskPermission:
    """``session/request_permission`` with options ``allow`` / ``reject``. → the response"""

    request: RequestPermissionRequest


@dataclass(frozen=True)
class RunCommand:
    """Run a command in a client terminal (``ctx.execute``). → a ``CommandResult``"""

    command: str
    args: tuple[str, ...]


Effect = Say | Update | Pause | ReadFile | WriteFile | AskPermission | RunCommand
Script = Generator[Effect, Any, PromptResponse | None]
"""A behaviour: yields effects, returns the answer (``None`` → ``end_turn``)."""


# ------------------------------------------------------------------------------ behaviours
def _echo(text: str, _session_id: str) -> Script:
    yield Say(text)
    return PromptResponse.end_turn()


def _count(arg: str, what: str, example: str) -> int:
    try:
        value = int(arg)
    except ValueError:
        value = -1
    if value < 0:
        raise AcpProtocolException.invalid_params(
            f"{what} needs a whole number >= 0, got {arg!r} (e.g. {example!r})"
        )
    return value


def _seconds(arg: str, what: str) -> float:
    try:
        value = float(arg)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise AcpProtocolException.invalid_params(
            f"{what} needs a number of seconds >= 0, got {arg!r} (e.g. '{what} 2')"
        )
    return value


_CHUNKS: tuple[str, ...] = tuple(word + " " for word in STREAM_WORDS)


def _word(index: int) -> str:
    # one shared string per word: a session's history of a long stream holds references
    # (8 bytes a chunk), not a copy of every chunk
    return _CHUNKS[index % len(_CHUNKS)]


def _stream(arg: str, _session_id: str) -> Script:
    for index in range(_count(arg, "stream", "stream 5")):
        yield Say(_word(index))
    return PromptResponse.end_turn()


def _slow(arg: str, _session_id: str) -> Script:
    ticks = round(_seconds(arg, "slow") / TICK)
    for index in range(ticks):
        if (yield Pause(TICK)):
            return PromptResponse.cancelled()  # the SDK answers `cancelled` anyway
        yield Say(_word(index))
    return PromptResponse.end_turn()


def _stubborn(arg: str, _session_id: str) -> Script:
    ticks = round(_seconds(arg, "stubborn") / TICK)
    for index in range(ticks):
        yield Pause(TICK, cooperative=False)
        word = STUBBORN_WORDS[index] if index < len(STUBBORN_WORDS) else "…"
        yield Say(word + " ")
    return PromptResponse.end_turn()


def _path(arg: str, what: str) -> str:
    if not arg.startswith("/"):
        raise AcpProtocolException.invalid_params(
            f"{what} needs an absolute path, got {arg!r} (e.g. '{what} /tmp/notes.txt')"
        )
    return arg


def _cancelled(exc: AcpException) -> bool:
    return getattr(exc, "code", None) == AcpErrorCodes.REQUEST_CANCELLED


def _read(arg: str, _session_id: str) -> Script:
    path = _path(arg.strip(), "read")
    try:
        text = yield ReadFile(path)
    except AcpException as exc:
        if _cancelled(exc):
            return PromptResponse.cancelled()
        text = f"could not read {path}: {exc}"
    yield Say(str(text))
    return PromptResponse.end_turn()


def _write(arg: str, _session_id: str) -> Script:
    path, _, content = arg.strip().partition(" ")
    _path(path, "write")
    try:
        yield WriteFile(path, content)
    except AcpException as exc:
        if _cancelled(exc):
            return PromptResponse.cancelled()
        yield Say(f"could not write {path}: {exc}")
        return PromptResponse.end_turn()
    yield Say(f"wrote {len(content.encode())} bytes to {path}")
    return PromptResponse.end_turn()


def _permission(arg: str, session_id: str) -> Script:
    request = RequestPermissionRequest(
        session_id=session_id,
        tool_call=ToolCallUpdate(
            tool_call_id=f"permission_{next(_ids)}", title=arg or "Run the reference action"
        ),
        options=[
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ],
    )
    try:
        response = yield AskPermission(request)
    except AcpException as exc:
        if not _cancelled(exc):
            raise
        chosen = "cancelled"  # the turn was cancelled while the client was asking
    else:
        outcome = response.outcome
        chosen = str(getattr(outcome, "option_id", None) or getattr(outcome, "outcome", "?"))
    yield Say(chosen)
    return PromptResponse.end_turn()


def _terminal(arg: str, _session_id: str) -> Script:
    words = arg.split()
    if not words:
        raise AcpProtocolException.invalid_params("terminal needs a command (e.g. 'terminal ls')")
    try:
        result = yield RunCommand(words[0], tuple(words[1:]))
    except AcpException as exc:
        if _cancelled(exc):
            return PromptResponse.cancelled()
        yield Say(f"could not run {words[0]}: {exc}")
        return PromptResponse.end_turn()
    yield Say(result.output)
    status = f"exit code {result.exit_code}" if result.signal is None else f"signal {result.signal}"
    yield Say(f"\n[{status}]", thought=True)
    return PromptResponse.end_turn()


def _plan(_arg: str, _session_id: str) -> Script:
    steps = ["Read the request", "Think it through", "Answer"]

    def plan(done: int) -> Plan:
        return Plan(
            entries=[
                PlanEntry(
                    content=step,
                    priority="medium",
                    status="completed" if i < done else "in_progress" if i == done else "pending",
                )
                for i, step in enumerate(steps)
            ]
        )

    for done in range(len(steps) + 1):
        yield Update(plan(done))
    yield Say("plan complete")
    return PromptResponse.end_turn()


def _tool(_arg: str, _session_id: str) -> Script:
    call_id = f"call_{next(_ids)}"
    yield Update(ToolCall(tool_call_id=call_id, title="Look up the answer", kind="fetch"))
    yield Update(ToolCallUpdateNotification(tool_call_id=call_id, status="in_progress"))
    yield Say("consulting the reference table", thought=True)
    yield Update(
        ToolCallUpdateNotification.from_wire(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "42"}}],
            }
        )
    )
    yield Say("the tool says 42")
    return PromptResponse.end_turn()


def _fail(arg: str, _session_id: str) -> Script:
    raise RuntimeError(arg or "the reference agent was asked to fail")
    yield Say("")  # pragma: no cover - makes this a generator


Behaviour = Callable[[str, str], Script]

BEHAVIOURS: dict[str, Behaviour] = {
    "echo": _echo,
    "stream": _stream,
    "slow": _slow,
    "stubborn": _stubborn,
    "read": _read,
    "write": _write,
    "permission": _permission,
    "terminal": _terminal,
    "plan": _plan,
    "tool": _tool,
    "fail": _fail,
}
"""The first word of the prompt text selects the behaviour; anything else is echoed."""

VOCABULARY: tuple[tuple[str, str], ...] = (
    ("echo TEXT", "one agent_message_chunk with TEXT, end_turn"),
    ("stream N", "N chunks (the stream sentence's words, cycling), end_turn"),
    ("slow SECONDS", "a chunk every 0.1 s; stops as soon as the turn is cancelled"),
    ("stubborn SECONDS", "a chunk every 0.1 s, ignoring cancellation (grace period)"),
    ("read PATH", "fs/read_text_file of the absolute PATH, echoes the content"),
    ("write PATH TEXT", "fs/write_text_file of TEXT to the absolute PATH"),
    ("permission [TITLE]", "session/request_permission, echoes the chosen option or cancelled"),
    ("terminal COMMAND...", "runs COMMAND in a client terminal, echoes its output"),
    ("plan", "plan updates"),
    ("tool", "a tool call with its updates"),
    ("fail", "raises: the prompt is answered -32603"),
    ("anything else", "echoed"),
)
"""``(usage, what it does)`` of every behaviour, for ``--help`` (kept next to the table)."""


def script_for(text: str, session_id: str) -> Script:
    """The script for a prompt's text (unknown first word: echo the whole text)."""
    word, _, rest = text.strip().partition(" ")
    behaviour = BEHAVIOURS.get(word.lower())
    if behaviour is None:
        return _echo(text, session_id)
    return behaviour(rest.strip(), session_id)


@dataclass(frozen=True)
class Finished:
    """What :func:`resume` returns once the script returned ``value``."""

    value: PromptResponse | None


def resume(script: Script, value: Any = None, error: Exception | None = None) -> Effect | Finished:
    """Give ``script`` the outcome of its last effect (``value``, or ``error`` raised into it);
    returns its next effect, or :class:`Finished` with what it returned."""
    try:
        return script.send(value) if error is None else script.throw(error)
    except StopIteration as stop:
        return Finished(stop.value)


def recorded(script: Script, sink: Callable[[str], None]) -> Script:
    """``script``, passing the text of every agent message it says to ``sink`` (history)."""
    value: Any = None
    error: Exception | None = None
    while not isinstance(step := resume(script, value, error), Finished):
        if isinstance(step, Say) and not step.thought:
            sink(step.text)
        try:
            value, error = (yield step), None
        except Exception as exc:
            value, error = None, exc
    return step.value
