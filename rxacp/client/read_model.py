"""``SessionState``: the client's read model of one ACP session, as immutable snapshots.

Every client (editor, chat UI, tool) folds a session's ``session/update`` notifications into
"what the screen shows". :class:`SessionState` is that fold as a pure function:
``SessionState().apply(n1).apply(n2)...`` — each :meth:`SessionState.apply` returns a new
snapshot and never changes the one it was called on, so a snapshot handed to a renderer (on any
thread) stays valid while later updates arrive.

What each ``sessionUpdate`` kind of the stable v1 schema does:

==============================  ==============================================================
``user_message_chunk``          appended to :attr:`~SessionState.messages` (role ``"user"``)
``agent_message_chunk``         appended to :attr:`~SessionState.messages` (role ``"agent"``)
``agent_thought_chunk``         appended to :attr:`~SessionState.thoughts`
``tool_call``                   creates (or replaces) :attr:`~SessionState.tool_calls` ``[id]``
``tool_call_update``            merges its non-null fields into that tool call (creates it if
                                the ``tool_call`` never came); ``content``/``locations`` replace
``plan``                        replaces :attr:`~SessionState.plan`
``available_commands_update``   replaces :attr:`~SessionState.commands`
``current_mode_update``         sets :attr:`~SessionState.mode`
``config_option_update``        replaces :attr:`~SessionState.config_options`
``session_info_update``         patches :attr:`~SessionState.title` / ``updated_at`` (omitted:
                                unchanged, ``null``: cleared)
``usage_update``                replaces :attr:`~SessionState.usage`
``notice``                      appended to :attr:`~SessionState.notices`
``compaction_update``           upserts :attr:`~SessionState.compactions` ``[id]`` (patch rules
                                of the schema: omitted unchanged, ``null`` clears)
``compaction_summary_chunk``    appends to that compaction's summary (creates it in progress)
anything else                   kept, in order, in :attr:`~SessionState.unknown`
==============================  ==============================================================

Message chunks are joined into messages: a chunk with a ``messageId`` goes to the message of
that id (its role's), a new id starts a new message; a chunk without one continues the latest
message of its kind when it is *contiguous* — no other message or thought chunk, ``tool_call``,
``tool_call_update`` or end of a prompt turn (:meth:`SessionState.with_turn_end`) came in
between — and starts a new message otherwise (the spec: "a changed ``messageId`` indicates a new
message"; without ids, only a change of kind shows a boundary). The user's prompt is not a
``session/update``: it is in :attr:`~SessionState.messages` only if the agent echoes it (as
``user_message_chunk`` updates, e.g. when ``session/load`` replays a session).

Cost: appending a text chunk is O(1) (the chunk's text goes to an append-only buffer shared by
successive snapshots; a snapshot sees its own prefix); a message's :attr:`Message.text` is joined
on first read and cached. Snapshots share everything they did not change. Measured in
``benchmarks/read_model.py``.

This module is *not* responsible for receiving updates (the client's ``session_state()`` and
:func:`~rxacp.client.session_states` are) or for any I/O: it is pure data, no Rx, no threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

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
    SessionNotification,
    TextContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallUpdateNotification,
    UsageUpdate,
    UserMessageChunk,
)

__all__ = ["Compaction", "Message", "SessionState", "Thought", "ToolCallState"]

Role = Literal["user", "agent"]

_EMPTY_MAP: Mapping[Any, Any] = MappingProxyType({})


class _Chunked:
    """Base of :class:`Message` and :class:`Thought`: chunks joined, with an optional id.

    The parts (``str`` for plain text, else the content block) live in an append-only list
    shared by successive snapshots, each seeing its first ``_n``: appending on the newest
    snapshot is O(1); appending on an older one (a branch) copies its prefix first. Exactly one
    appender wins index ``_n`` (``list.append`` is atomic), so two threads appending to the same
    snapshot never see each other's part. The text is joined on first read and cached.
    """

    __slots__ = ("_joined", "_message_id", "_n", "_parts")

    _parts: list[str | ContentBlock]
    _n: int
    _joined: str | None
    _message_id: str | None

    def _init(self, text: str, message_id: str | None) -> None:
        self._message_id = message_id
        self._parts = [text] if text else []
        self._n = len(self._parts)
        self._joined = None

    def _grown(self, part: str | ContentBlock) -> tuple[list[str | ContentBlock], int]:
        parts, n = self._parts, self._n
        if len(parts) == n:
            parts.append(part)
            if parts[n] is part:
                return parts, n + 1
        fresh = parts[:n]
        fresh.append(part)
        return fresh, n + 1

    @property
    def message_id(self) -> str | None:
        """The agent's ``messageId`` of the chunks (``None`` when it sent none)."""
        return self._message_id

    @property
    def text(self) -> str:
        """The text of every text chunk, joined (other blocks are only in :attr:`content`)."""
        joined = self._joined
        if joined is None:
            joined = self._joined = "".join(
                p if isinstance(p, str) else p.text
                for p in self._parts[: self._n]
                if isinstance(p, str | TextContent)
            )
        return joined

    @property
    def content(self) -> tuple[ContentBlock, ...]:
        """Every chunk's content block in order, adjacent text chunks merged into one
        ``TextContent`` (text chunks' own ``annotations``/``_meta`` are kept as their blocks)."""
        blocks: list[ContentBlock] = []
        run: list[str] = []
        for part in self._parts[: self._n]:
            if isinstance(part, str):
                run.append(part)
                continue
            if run:
                blocks.append(TextContent(text="".join(run)))
                run = []
            blocks.append(part)
        if run:
            blocks.append(TextContent(text="".join(run)))
        return tuple(blocks)


def _part(block: ContentBlock) -> str | ContentBlock:
    """A text block's text (kept as a plain ``str``: cheaper and smaller), else the block."""
    if (
        type(block) is TextContent
        and block.annotations is None
        and block.meta is None
        and not block.__pydantic_extra__
    ):
        return block.text
    return block


class Message(_Chunked):
    """One user or agent message, joined from its ``*_message_chunk`` updates (immutable)."""

    __slots__ = ("_role",)

    def __init__(self, role: Role, text: str = "", message_id: str | None = None) -> None:
        self._role = role
        self._init(text, message_id)

    @classmethod
    def _first(cls, role: Role, message_id: str | None, part: str | ContentBlock) -> Message:
        message = _new_item(cls)
        message._role = role
        message._message_id = message_id
        message._parts = [part]
        message._n = 1
        message._joined = None
        return message

    def _appended(self, part: str | ContentBlock) -> Message:
        message = _new_item(Message)
        message._role = self._role
        message._message_id = self._message_id
        message._parts, message._n = self._grown(part)
        message._joined = None
        return message

    @property
    def role(self) -> Role:
        """``"user"`` (``user_message_chunk``) or ``"agent"`` (``agent_message_chunk``)."""
        return self._role

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return (self._role, self._message_id, self.content) == (
            other._role,
            other._message_id,
            other.content,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Message(role={self._role!r}, text={self.text!r}, message_id={self._message_id!r})"


class Thought(_Chunked):
    """The agent's reasoning, joined from its ``agent_thought_chunk`` updates (immutable)."""

    __slots__ = ()

    def __init__(self, text: str = "", message_id: str | None = None) -> None:
        self._init(text, message_id)

    @classmethod
    def _first(cls, message_id: str | None, part: str | ContentBlock) -> Thought:
        thought = _new_item(cls)
        thought._message_id = message_id
        thought._parts = [part]
        thought._n = 1
        thought._joined = None
        return thought

    def _appended(self, part: str | ContentBlock) -> Thought:
        thought = _new_item(Thought)
        thought._message_id = self._message_id
        thought._parts, thought._n = self._grown(part)
        thought._joined = None
        return thought

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Thought):
            return NotImplemented
        return (self._message_id, self.content) == (other._message_id, other.content)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Thought(text={self.text!r}, message_id={self._message_id!r})"


_new_item = object.__new__


class ToolCallState(NamedTuple):
    """A tool call with every update merged in (immutable). ``None``: never reported."""

    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    """A :class:`~rxacp.schema.ToolKind` value (``"read"``, ``"edit"``...) or another string."""
    status: str | None = None
    """A :class:`~rxacp.schema.ToolCallStatus` value (``"pending"``, ``"completed"``...)."""
    name: str | None = None
    content: tuple[ToolCallContent, ...] = ()
    locations: tuple[ToolCallLocation, ...] = ()
    raw_input: Any = None
    raw_output: Any = None
    meta: dict[str, Any] | None = None
    """The ``_meta`` of the latest ``tool_call``/``tool_call_update`` that had one."""

    def merged(self, update: ToolCall | ToolCallUpdateNotification) -> ToolCallState:
        """This tool call after ``update``: a ``tool_call`` replaces every field, a
        ``tool_call_update`` the ones it carries (``null`` and omitted leave them)."""
        if isinstance(update, ToolCall):
            return ToolCallState(
                update.tool_call_id,
                update.title,
                update.kind,
                update.status,
                update.name,
                tuple(update.content or ()),
                tuple(update.locations or ()),
                update.raw_input,
                update.raw_output,
                update.meta,
            )
        u = update
        return ToolCallState(
            self.tool_call_id,
            self.title if u.title is None else u.title,
            self.kind if u.kind is None else u.kind,
            self.status if u.status is None else u.status,
            self.name if u.name is None else u.name,
            self.content if u.content is None else tuple(u.content),
            self.locations if u.locations is None else tuple(u.locations),
            self.raw_input if u.raw_input is None else u.raw_input,
            self.raw_output if u.raw_output is None else u.raw_output,
            self.meta if u.meta is None else u.meta,
        )


class Compaction(NamedTuple):
    """A context compaction (``compaction_update`` / ``compaction_summary_chunk``), immutable."""

    compaction_id: str
    status: str = "in_progress"
    """A :class:`~rxacp.schema.CompactionStatus` value (``"in_progress"``, ``"completed"``...)."""
    summary: tuple[ContentBlock, ...] = ()
    error: str | None = None
    meta: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The summary's text blocks, joined."""
        return "".join(b.text for b in self.summary if isinstance(b, TextContent))


_FIELDS = (
    "_session_id",
    "_messages",
    "_thoughts",
    "_rest",
    "_last",
    "_last_at",
    "_ids",
    "_count",
)


class _Rest:
    """The fields a streamed chunk does not change, kept apart so that a chunk's snapshot
    copies eight references instead of twenty (copied on write: :func:`_edit`)."""

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
        self.tool_calls = _EMPTY_MAP
        self.plan = ()
        self.mode = None
        self.modes = ()
        self.config_options = ()
        self.commands = ()
        self.usage = None
        self.title = None
        self.updated_at = None
        self.notices = ()
        self.compactions = _EMPTY_MAP
        self.unknown = ()

    def copy(self) -> _Rest:
        new = _new_rest(_Rest)
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


_new_rest = object.__new__
_EMPTY_REST = _Rest()


def _edit(state: SessionState) -> _Rest:
    """``state``'s own copy of its rest fields, to change (``state`` is a fresh snapshot)."""
    rest = state._rest = state._rest.copy()
    return rest


class SessionState:
    """An immutable snapshot of one ACP session as a client shows it; ``SessionState()`` is
    the empty state and :meth:`apply` returns the state after one more update (see the module
    docstring for what each ``sessionUpdate`` kind does)::

        state = SessionState()
        for note in notifications:
            state = state.apply(note)
        print(state.messages[-1].text, state.tool_calls["call_1"].status)

    Snapshots compare equal when every public field does. Pure and thread-safe: ``apply`` on
    the same snapshot from two threads gives two independent snapshots.
    """

    __slots__ = _FIELDS

    _session_id: str | None
    _messages: tuple[Message, ...]
    _thoughts: tuple[Thought, ...]
    _rest: _Rest
    _last: str | None
    _last_at: int
    _ids: Mapping[tuple[str, str], int]
    _count: int

    def __init__(self, session_id: str | None = None) -> None:
        self._session_id = session_id
        self._messages = ()
        self._thoughts = ()
        self._rest = _EMPTY_REST
        self._last = None  # the kind of the latest chunk or tool call (ends a chunk run)
        self._last_at = -1  # the index of the message or thought the latest chunk went to
        self._ids = _EMPTY_MAP  # (list, messageId) -> index in messages / thoughts
        self._count = 0

    # ------------------------------------------------------------------ fields
    @property
    def session_id(self) -> str | None:
        """The session these updates belong to (set by the first notification applied)."""
        return self._session_id

    @property
    def messages(self) -> tuple[Message, ...]:
        """User and agent messages in arrival order (each with ``role``, ``message_id``,
        ``text``, ``content``)."""
        return self._messages

    @property
    def thoughts(self) -> tuple[Thought, ...]:
        """The agent's thoughts in arrival order (each with ``message_id``, ``text``)."""
        return self._thoughts

    @property
    def tool_calls(self) -> Mapping[str, ToolCallState]:
        """Tool calls by id (read-only mapping, in first-seen order), each merged."""
        return self._rest.tool_calls

    @property
    def plan(self) -> tuple[PlanEntry, ...]:
        """The latest plan's entries (``content``, ``priority``, ``status``)."""
        return self._rest.plan

    @property
    def mode(self) -> str | None:
        """The current mode id (``current_mode_update``, the session setup answer, or this
        client's successful ``session/set_mode``), ``None`` until known."""
        return self._rest.mode

    @property
    def modes(self) -> tuple[SessionMode, ...]:
        """The modes the agent offers (from its ``session/new``/``load``/``resume`` answer)."""
        return self._rest.modes

    @property
    def config_options(self) -> tuple[SessionConfigOption, ...]:
        """The latest full set of session configuration options (``config_option_update``,
        the session setup answer, or a ``session/set_config_option`` answer)."""
        return self._rest.config_options

    @property
    def commands(self) -> tuple[AvailableCommand, ...]:
        """The latest available (slash) commands."""
        return self._rest.commands

    @property
    def usage(self) -> UsageUpdate | None:
        """The latest context usage (``used``, ``size``, ``cost``), ``None`` until reported."""
        return self._rest.usage

    @property
    def title(self) -> str | None:
        """The session title (``session_info_update``)."""
        return self._rest.title

    @property
    def updated_at(self) -> str | None:
        """The session's last-activity timestamp (``session_info_update``), ISO 8601."""
        return self._rest.updated_at

    @property
    def notices(self) -> tuple[Notice, ...]:
        """Notices for the user (``severity``, ``title``, ``description``), in arrival order."""
        return self._rest.notices

    @property
    def compactions(self) -> Mapping[str, Compaction]:
        """Context compactions by id (read-only mapping, in first-seen order)."""
        return self._rest.compactions

    @property
    def unknown(self) -> tuple[Any, ...]:
        """Updates of kinds this SDK does not know (``UnknownSessionUpdate``: the raw payload
        is kept), in arrival order — never dropped."""
        return self._rest.unknown

    @property
    def update_count(self) -> int:
        """How many updates were applied to reach this snapshot."""
        return self._count

    # ------------------------------------------------------------------ fold
    def apply(self, notification: SessionNotification | Any) -> SessionState:
        """The state after ``notification`` (a ``SessionNotification``, or a bare
        ``SessionUpdate`` model as ``prompt_turn()`` emits them); ``self`` is unchanged.

        Raises ``ValueError`` for a notification of another session than the one this state
        follows, and ``TypeError`` for anything that is not a session update.
        """
        own = self._session_id
        if isinstance(notification, SessionNotification):
            sid = notification.session_id
            if own is None:
                own = sid
            elif sid != own:
                raise ValueError(
                    f"a session/update of session {sid!r} applied to the state of session "
                    f"{own!r} (fold each session's updates into its own state)"
                )
            update = notification.update
        else:
            update = notification
        handler = _HANDLERS.get(type(update))
        if handler is None and not isinstance(getattr(update, "session_update", None), str):
            raise TypeError(
                f"SessionState.apply takes a SessionNotification or a SessionUpdate model, "
                f"not {type(notification).__name__}"
            )
        nxt = _new_state(SessionState)
        nxt._session_id = own
        nxt._messages = self._messages
        nxt._thoughts = self._thoughts
        nxt._rest = self._rest
        nxt._last = self._last
        nxt._last_at = self._last_at
        nxt._ids = self._ids
        nxt._count = self._count + 1
        if handler is None:
            _edit(nxt).unknown = (*self._rest.unknown, update)
        else:
            handler(nxt, update)
        return nxt

    def with_setup(self, response: Any) -> SessionState:
        """The state after an agent's answer that carries the session's ``modes`` and
        ``configOptions`` (``session/new``, ``session/load``, ``session/resume``,
        ``session/set_config_option``); fields the answer omits are unchanged."""
        nxt = self._copy()
        modes = getattr(response, "modes", None)
        if modes is not None:
            _edit(nxt).mode = modes.current_mode_id
            _edit(nxt).modes = tuple(modes.available_modes)
        options = getattr(response, "config_options", None)
        if options is not None:
            _edit(nxt).config_options = tuple(options)
        return nxt

    def with_mode(self, mode_id: str) -> SessionState:
        """The state with ``mode_id`` as the current mode (a ``session/set_mode`` that
        succeeded: the agent need not send ``current_mode_update`` for it)."""
        nxt = self._copy()
        _edit(nxt).mode = mode_id
        return nxt

    def with_turn_end(self) -> SessionState:
        """The state at the end of a prompt turn: the next chunk without a ``messageId``
        starts a new message (the next turn's answer is not glued to this one's). Nothing
        visible changes. The client applies it when each of its ``session/prompt`` requests end
        (answered, failed or disposed), and
        :func:`~rxacp.client.fold_session_state` on a ``prompt_turn()``'s ``PromptResponse``."""
        nxt = self._copy()
        nxt._last = None
        return nxt

    def _copy(self) -> SessionState:
        new = _new_state(SessionState)
        new._session_id = self._session_id
        new._messages = self._messages
        new._thoughts = self._thoughts
        new._rest = self._rest
        new._last = self._last
        new._last_at = self._last_at
        new._ids = self._ids
        new._count = self._count
        return new

    # ------------------------------------------------------------------ value semantics
    def _public(self) -> tuple[Any, ...]:
        return (
            self._session_id,
            self._messages,
            self._thoughts,
            dict(self._rest.tool_calls),
            self._rest.plan,
            self._rest.mode,
            self._rest.modes,
            self._rest.config_options,
            self._rest.commands,
            self._rest.usage,
            self._rest.title,
            self._rest.updated_at,
            self._rest.notices,
            dict(self._rest.compactions),
            self._rest.unknown,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionState):
            return NotImplemented
        return self._public() == other._public()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SessionState(session_id={self._session_id!r}, messages={len(self._messages)}, "
            f"thoughts={len(self._thoughts)}, tool_calls={len(self._rest.tool_calls)}, "
            f"plan={len(self._rest.plan)}, mode={self._rest.mode!r}, title={self._rest.title!r}, "
            f"updates={self._count})"
        )


_new_state = object.__new__


# ---------------------------------------------------------------------- per-kind handlers
# Each takes the fresh copy and the update and sets the fields the update changes.


def _add_id(state: SessionState, key: str, message_id: str, index: int) -> None:
    ids = dict(state._ids)
    ids[(key, message_id)] = index
    state._ids = MappingProxyType(ids)


def _message_chunk(state: SessionState, update: UserMessageChunk | AgentMessageChunk) -> None:
    if type(update) is AgentMessageChunk:
        role: Role = "agent"
        kind = "agent_message_chunk"
    else:
        role = "user"
        kind = "user_message_chunk"
    messages = state._messages
    mid = update.message_id
    if mid is None:
        at = state._last_at if state._last == kind else -1
    else:
        at = state._ids.get((role, mid), -1)
    block = update.content
    part = (
        block.text
        if type(block) is TextContent
        and block.annotations is None
        and block.meta is None
        and not block.__pydantic_extra__
        else block
    )
    state._last = kind
    if at < 0:
        at = len(messages)
        if mid is not None:
            _add_id(state, role, mid, at)
        state._messages = (*messages, Message._first(role, mid, part))
    elif at == len(messages) - 1:
        state._messages = (*messages[:-1], messages[-1]._appended(part))
    else:
        state._messages = (*messages[:at], messages[at]._appended(part), *messages[at + 1 :])
    state._last_at = at


def _thought_chunk(state: SessionState, update: AgentThoughtChunk) -> None:
    thoughts = state._thoughts
    mid = update.message_id
    if mid is None:
        at = state._last_at if state._last == "agent_thought_chunk" else -1
    else:
        at = state._ids.get(("thought", mid), -1)
    part = _part(update.content)
    state._last = "agent_thought_chunk"
    if at < 0:
        at = len(thoughts)
        if mid is not None:
            _add_id(state, "thought", mid, at)
        state._thoughts = (*thoughts, Thought._first(mid, part))
    else:
        state._thoughts = (*thoughts[:at], thoughts[at]._appended(part), *thoughts[at + 1 :])
    state._last_at = at


def _tool_call(state: SessionState, update: ToolCall | ToolCallUpdateNotification) -> None:
    calls = dict(state._rest.tool_calls)
    tid = update.tool_call_id
    current = calls.get(tid) or ToolCallState(tid)
    calls[tid] = current.merged(update)
    _edit(state).tool_calls = MappingProxyType(calls)
    state._last = update.session_update


def _plan(state: SessionState, update: Plan) -> None:
    _edit(state).plan = tuple(update.entries)


def _commands(state: SessionState, update: AvailableCommandsUpdate) -> None:
    _edit(state).commands = tuple(update.available_commands)


def _mode(state: SessionState, update: CurrentModeUpdate) -> None:
    _edit(state).mode = update.current_mode_id


def _config(state: SessionState, update: ConfigOptionUpdate) -> None:
    _edit(state).config_options = tuple(update.config_options)


def _info(state: SessionState, update: SessionInfoUpdate) -> None:
    given = update.model_fields_set
    if "title" in given:
        _edit(state).title = update.title
    if "updated_at" in given:
        _edit(state).updated_at = update.updated_at


def _usage(state: SessionState, update: UsageUpdate) -> None:
    _edit(state).usage = update


def _notice(state: SessionState, update: Notice) -> None:
    _edit(state).notices = (*state._rest.notices, update)


def _compaction(state: SessionState, update: CompactionUpdate) -> None:
    compactions = dict(state._rest.compactions)
    cid = update.compaction_id
    current = compactions.get(cid) or Compaction(cid)
    given = update.model_fields_set
    compactions[cid] = Compaction(
        cid,
        str(update.status),
        (tuple(update.summary or ()) if "summary" in given else current.summary),
        update.error if "error" in given else current.error,
        update.meta if "meta" in given else current.meta,
    )
    _edit(state).compactions = MappingProxyType(compactions)


def _compaction_chunk(state: SessionState, update: CompactionSummaryChunk) -> None:
    compactions = dict(state._rest.compactions)
    cid = update.compaction_id
    current = compactions.get(cid) or Compaction(cid)
    compactions[cid] = current._replace(summary=(*current.summary, update.content))
    _edit(state).compactions = MappingProxyType(compactions)


_HANDLERS: dict[type[AcpModel], Any] = {
    UserMessageChunk: _message_chunk,
    AgentMessageChunk: _message_chunk,
    AgentThoughtChunk: _thought_chunk,
    ToolCall: _tool_call,
    ToolCallUpdateNotification: _tool_call,
    Plan: _plan,
    AvailableCommandsUpdate: _commands,
    CurrentModeUpdate: _mode,
    ConfigOptionUpdate: _config,
    SessionInfoUpdate: _info,
    UsageUpdate: _usage,
    Notice: _notice,
    CompactionUpdate: _compaction,
    CompactionSummaryChunk: _compaction_chunk,
}
"""One handler per known update model (exact types; anything else is kept in ``unknown``)."""
