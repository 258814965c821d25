"""What each ``sessionUpdate`` kind does to a :class:`~rxacp.client.SessionState` (the table
in ``read_model.py``'s docstring): one handler per kind, v1 by model class, v2 by name.

Each handler takes a fresh snapshot (a copy the caller owns) and the update, and sets the
fields the update changes. This module is *not* responsible for the snapshot's public fields,
session checks or chunk-run batching (``read_model.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..schema import (
    AcpModel,
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    CompactionSummaryChunk,
    CompactionUpdate,
    ConfigOptionUpdate,
    ContentBlock,
    CurrentModeUpdate,
    Notice,
    Plan,
    PlanEntry,
    SessionConfigOption,
    SessionInfoUpdate,
    SessionMode,
    ToolCall,
    ToolCallUpdateNotification,
    UsageUpdate,
    UserMessageChunk,
)
from .read_items import Compaction, Message, Thought, ToolCallState, chunk_part

if TYPE_CHECKING:
    from .read_model import SessionState

EMPTY_MAP: Mapping[Any, Any] = MappingProxyType({})


class Rest:
    """The fields a streamed chunk does not change, kept apart so that a chunk's snapshot
    copies eight references instead of twenty (copied on write: :func:`edit`)."""

    __slots__ = (
        "commands",
        "compactions",
        "config_options",
        "mode",
        "modes",
        "notices",
        "plan",
        "title",
        "tool_calls",
        "unknown",
        "updated_at",
        "usage",
    )

    tool_calls: Mapping[str, ToolCallState]
    plan: tuple[PlanEntry, ...]
    mode: str | None
    modes: tuple[SessionMode, ...]
    config_options: tuple[SessionConfigOption, ...]
    commands: tuple[AvailableCommand, ...]
    usage: UsageUpdate | None
    title: str | None
    updated_at: str | None
    notices: tuple[Notice, ...]
    compactions: Mapping[str, Compaction]
    unknown: tuple[Any, ...]

    def __init__(self) -> None:
        self.tool_calls = self.compactions = EMPTY_MAP
        self.plan = self.modes = self.config_options = self.commands = ()
        self.notices = self.unknown = ()
        self.mode = self.usage = self.title = self.updated_at = None

    def copy(self) -> Rest:
        new = _new(Rest)
        new.tool_calls = self.tool_calls
        new.plan = self.plan
        new.mode = self.mode
        new.modes = self.modes
        new.config_options = self.config_options
        new.commands = self.commands
        new.usage = self.usage
        new.title = self.title
        new.updated_at = self.updated_at
        new.notices = self.notices
        new.compactions = self.compactions
        new.unknown = self.unknown
        return new


_new = object.__new__
EMPTY_REST = Rest()


def edit(state: SessionState) -> Rest:
    """``state``'s own copy of its rest fields, to change (``state`` is a fresh snapshot)."""
    rest = state._rest = state._rest.copy()
    return rest


def _replaced(items: tuple[Any, ...], at: int, item: Any) -> tuple[Any, ...]:
    if at == len(items) - 1:
        return (*items[:-1], item)
    return (*items[:at], item, *items[at + 1 :])


def _set_items(state: SessionState, thought: bool, items: tuple[Any, ...]) -> None:
    if thought:
        state._thoughts = items
    else:
        state._messages = items


def _add_id(state: SessionState, key: str, message_id: str, index: int) -> None:
    ids = dict(state._ids)
    ids[(key, message_id)] = index
    state._ids = MappingProxyType(ids)


_CHUNK_KEYS: Mapping[str, Any] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
"""A chunk kind's key in ``_ids``: the message role, or ``"thought"``."""


def chunk(state: SessionState, update: UserMessageChunk | AgentMessageChunk | Any) -> None:
    """A message or thought chunk (v1 or v2 models: same fields), joined as the module
    docstring of ``read_model.py`` says."""
    kind = update.session_update
    key = _CHUNK_KEYS[kind]
    thought = key == "thought"
    items: tuple[Any, ...] = state._thoughts if thought else state._messages
    mid = update.message_id
    if mid is None:
        at = state._last_at if state._last == kind else -1
    else:
        at = state._ids.get((key, mid), -1)
    part = chunk_part(update.content)
    state._last = kind
    if at < 0:
        at = len(items)
        if mid is not None:
            _add_id(state, key, mid, at)
        first = Thought(message_id=mid) if thought else Message(key, message_id=mid)
        items = (*items, first._appended(part))
    elif at == len(items) - 1:  # the common case, inline
        items = (*items[:-1], items[-1]._appended(part))
    else:
        items = _replaced(items, at, items[at]._appended(part))
    if thought:
        state._thoughts = items
    else:
        state._messages = items
    state._last_at = at


def join_run(state: SessionState, kind: str | None, parts: list[str | ContentBlock]) -> None:
    """Append ``parts`` to the item the chunk run of ``kind`` goes to (``state._last_at``)."""
    thought = kind == "agent_thought_chunk"
    items: tuple[Any, ...] = state._thoughts if thought else state._messages
    at = state._last_at
    _set_items(state, thought, _replaced(items, at, items[at]._appended_all(parts)))


def _tool_call(state: SessionState, update: ToolCall | ToolCallUpdateNotification) -> None:
    calls = dict(state._rest.tool_calls)
    tid = update.tool_call_id
    calls[tid] = (calls.get(tid) or ToolCallState(tid)).merged(update)
    edit(state).tool_calls = MappingProxyType(calls)
    state._last = update.session_update


def _setter(field: str, read: Any) -> Any:
    """A handler that sets one rest field to ``read(update)``."""

    def handler(state: SessionState, update: Any) -> None:
        setattr(edit(state), field, read(update))

    return handler


def _appender(field: str) -> Any:
    """A handler that appends the update to a rest tuple."""

    def handler(state: SessionState, update: Any) -> None:
        setattr(edit(state), field, (*getattr(state._rest, field), update))

    return handler


def _info(state: SessionState, update: SessionInfoUpdate) -> None:
    given = update.model_fields_set
    if "title" in given:
        edit(state).title = update.title
    if "updated_at" in given:
        edit(state).updated_at = update.updated_at


def _compaction(state: SessionState, update: CompactionUpdate | CompactionSummaryChunk) -> None:
    compactions = dict(state._rest.compactions)
    cid = update.compaction_id
    current = compactions.get(cid) or Compaction(cid)
    if update.session_update == "compaction_summary_chunk":
        compactions[cid] = current._replace(summary=(*current.summary, update.content))
    else:
        given = update.model_fields_set
        compactions[cid] = Compaction(
            cid,
            str(update.status),
            (tuple(update.summary or ()) if "summary" in given else current.summary),
            update.error if "error" in given else current.error,
            update.meta if "meta" in given else current.meta,
        )
    edit(state).compactions = MappingProxyType(compactions)


_plan = _setter("plan", lambda u: tuple(u.entries))
_commands = _setter("commands", lambda u: tuple(u.available_commands))
_config = _setter("config_options", lambda u: tuple(u.config_options))
_usage = _setter("usage", lambda u: u)
_notice = _appender("notices")
_unknown = _appender("unknown")

HANDLERS: dict[type[AcpModel], Any] = {
    UserMessageChunk: chunk,
    AgentMessageChunk: chunk,
    AgentThoughtChunk: chunk,
    ToolCall: _tool_call,
    ToolCallUpdateNotification: _tool_call,
    Plan: _plan,
    AvailableCommandsUpdate: _commands,
    CurrentModeUpdate: _setter("mode", lambda u: u.current_mode_id),
    ConfigOptionUpdate: _config,
    SessionInfoUpdate: _info,
    UsageUpdate: _usage,
    Notice: _notice,
    CompactionUpdate: _compaction,
    CompactionSummaryChunk: _compaction,
}
"""One handler per known update model (exact types; anything else is kept in ``unknown``)."""


# ---------------------------------------------------------------------- ACP v2 (Draft) kinds
# v2 models are other classes with the same names; the kinds whose fields and meaning are v1's
# reuse v1's handlers, the v2 upserts have their own. state_update and the terminal kinds are
# kept in ``unknown`` (an ``idle`` state_update also ends the turn's chunk run).


def _v2_message(state: SessionState, update: Any) -> None:
    """``agent_message`` / ``user_message`` / ``agent_thought``: a whole message, by id."""
    kind = update.session_update
    key: Any = kind.removesuffix("_message") if kind != "agent_thought" else "thought"
    thought = key == "thought"
    items: tuple[Any, ...] = state._thoughts if thought else state._messages
    at = state._ids.get((key, update.message_id), -1)
    if "content" in update.model_fields_set:
        blocks = update.content or []
    else:
        blocks = list(items[at].content) if at >= 0 else []
    parts = [chunk_part(b) for b in blocks]
    mid = update.message_id
    empty: Any = Thought(message_id=mid) if thought else Message(key, message_id=mid)
    item = empty._appended_all(parts)
    if at < 0:
        at = len(items)
        _add_id(state, key, update.message_id, at)
        items = (*items, item)
    else:
        items = _replaced(items, at, item)
    _set_items(state, thought, items)
    state._last = kind
    state._last_at = at


def _v2_tool_call(state: SessionState, update: Any) -> None:
    calls = dict(state._rest.tool_calls)
    tid = update.tool_call_id
    current = calls.get(tid) or ToolCallState(tid)
    if update.session_update == "tool_call_content_chunk":
        calls[tid] = current.with_content(update.content)
    else:
        calls[tid] = current.upserted(update)
    edit(state).tool_calls = MappingProxyType(calls)
    state._last = "tool_call_update"


def _v2_plan(state: SessionState, update: Any) -> None:
    if getattr(update.plan, "entries", None) is None:  # a markdown or file plan: kept as is
        _unknown(state, update)
    else:
        edit(state).plan = tuple(update.plan.entries)


def _v2_state(state: SessionState, update: Any) -> None:
    _unknown(state, update)
    if update.state == "idle":
        state._last = None


V2_MODULES = frozenset({"rxacp.schema.v2._generated", "rxacp.schema.v2.unstable._generated"})
"""Where the v2 models live (their kinds are dispatched by name)."""

V2_HANDLERS: dict[Any, Any] = {
    "user_message_chunk": chunk,
    "agent_message_chunk": chunk,
    "agent_thought_chunk": chunk,
    "user_message": _v2_message,
    "agent_message": _v2_message,
    "agent_thought": _v2_message,
    "tool_call_update": _v2_tool_call,
    "tool_call_content_chunk": _v2_tool_call,
    "plan_update": _v2_plan,
    "available_commands_update": _commands,
    "config_option_update": _config,
    "session_info_update": _info,
    "usage_update": _usage,
    "notice": _notice,
    "compaction_update": _compaction,
    "compaction_summary_chunk": _compaction,
    "state_update": _v2_state,
}
"""The ACP v2 kinds the read model folds, by ``sessionUpdate`` (v2 model classes)."""
