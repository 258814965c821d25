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


class _Text:
    """The text and content of a streamed message: an append-only part buffer shared by
    successive snapshots, each seeing its first ``n`` parts (``str`` for text, else the block).

    Appending on the newest snapshot is O(1); appending on an older one (a branch) copies
    its prefix first. Exactly one appender wins index ``n`` (``list.append`` is atomic), so
    two threads appending to the same snapshot never see each other's part.
    """

    __slots__ = ("_joined", "_n", "_parts")

    def __init__(self, parts: list[str | ContentBlock], n: int) -> None:
        self._parts = parts
        self._n = n
        self._joined: str | None = None

    def appended(self, part: str | ContentBlock) -> _Text:
        parts, n = self._parts, self._n
        if len(parts) == n:
            parts.append(part)
            if parts[n] is part:
                return _Text(parts, n + 1)
        fresh = parts[:n]
        fresh.append(part)
        return _Text(fresh, n + 1)

    @property
    def text(self) -> str:
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


class _Chunked:
    """Base of :class:`Message` and :class:`Thought`: joined chunks with an optional id."""

    __slots__ = ("_body", "_message_id")

    _body: _Text
    _message_id: str | None

    @property
    def message_id(self) -> str | None:
        """The agent's ``messageId`` of the chunks (``None`` when it sent none)."""
        return self._message_id

    @property
    def text(self) -> str:
        """The text of every text chunk, joined (other blocks are only in :attr:`content`)."""
        return self._body.text

    @property
    def content(self) -> tuple[ContentBlock, ...]:
        """Every chunk's content block in order, adjacent text chunks merged into one
        ``TextContent`` (text chunks' own ``annotations``/``_meta`` are kept as their blocks)."""
        return self._body.content


class Message(_Chunked):
    """One user or agent message, joined from its ``*_message_chunk`` updates (immutable)."""

    __slots__ = ("_role",)

    def __init__(self, role: Role, text: str = "", message_id: str | None = None) -> None:
        self._role = role
        self._message_id = message_id
        self._body = _Text([text] if text else [], 1 if text else 0)

    @classmethod
    def _of(cls, role: Role, message_id: str | None, body: _Text) -> Message:
        message = cls.__new__(cls)
        message._role = role
        message._message_id = message_id
        message._body = body
        return message

    def _appended(self, part: str | ContentBlock) -> Message:
        return Message._of(self._role, self._message_id, self._body.appended(part))

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
        self._message_id = message_id
        self._body = _Text([text] if text else [], 1 if text else 0)

    @classmethod
    def _of(cls, message_id: str | None, body: _Text) -> Thought:
        thought = cls.__new__(cls)
        thought._message_id = message_id
        thought._body = body
        return thought

    def _appended(self, part: str | ContentBlock) -> Thought:
        return Thought._of(self._message_id, self._body.appended(part))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Thought):
            return NotImplemented
        return (self._message_id, self.content) == (other._message_id, other.content)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Thought(text={self.text!r}, message_id={self._message_id!r})"


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


_SPLITS = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
    }
)
"""Updates that end a run of id-less chunks (see the module docstring)."""

_FIELDS = (
    "_session_id",
    "_messages",
    "_thoughts",
    "_tool_calls",
    "_plan",
    "_mode",
    "_modes",
    "_config_options",
    "_commands",
    "_usage",
    "_title",
    "_updated_at",
    "_notices",
    "_compactions",
    "_unknown",
    "_last",
    "_last_at",
    "_ids",
    "_count",
)


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
    _tool_calls: Mapping[str, ToolCallState]
    _plan: tuple[PlanEntry, ...]
    _mode: str | None
    _modes: tuple[SessionMode, ...]
    _config_options: tuple[SessionConfigOption, ...]
    _commands: tuple[AvailableCommand, ...]
    _usage: UsageUpdate | None
    _title: str | None
    _updated_at: str | None
    _notices: tuple[Notice, ...]
    _compactions: Mapping[str, Compaction]
    _unknown: tuple[Any, ...]
    _last: str | None
    _last_at: int
    _ids: Mapping[tuple[str, str], int]
    _count: int

    def __init__(self, session_id: str | None = None) -> None:
        self._session_id = session_id
        self._messages = ()
        self._thoughts = ()
        self._tool_calls = _EMPTY_MAP
        self._plan = ()
        self._mode = None
        self._modes = ()
        self._config_options = ()
        self._commands = ()
        self._usage = None
        self._title = None
        self._updated_at = None
        self._notices = ()
        self._compactions = _EMPTY_MAP
        self._unknown = ()
        self._last = None  # the kind of the latest update that ends a chunk run (_SPLITS)
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
        return self._tool_calls

    @property
    def plan(self) -> tuple[PlanEntry, ...]:
        """The latest plan's entries (``content``, ``priority``, ``status``)."""
        return self._plan

    @property
    def mode(self) -> str | None:
        """The current mode id (``current_mode_update``, the session setup answer, or this
        client's successful ``session/set_mode``), ``None`` until known."""
        return self._mode

    @property
    def modes(self) -> tuple[SessionMode, ...]:
        """The modes the agent offers (from its ``session/new``/``load``/``resume`` answer)."""
        return self._modes

    @property
    def config_options(self) -> tuple[SessionConfigOption, ...]:
        """The latest full set of session configuration options (``config_option_update``,
        the session setup answer, or a ``session/set_config_option`` answer)."""
        return self._config_options

    @property
    def commands(self) -> tuple[AvailableCommand, ...]:
        """The latest available (slash) commands."""
        return self._commands

    @property
    def usage(self) -> UsageUpdate | None:
        """The latest context usage (``used``, ``size``, ``cost``), ``None`` until reported."""
        return self._usage

    @property
    def title(self) -> str | None:
        """The session title (``session_info_update``)."""
        return self._title

    @property
    def updated_at(self) -> str | None:
        """The session's last-activity timestamp (``session_info_update``), ISO 8601."""
        return self._updated_at

    @property
    def notices(self) -> tuple[Notice, ...]:
        """Notices for the user (``severity``, ``title``, ``description``), in arrival order."""
        return self._notices

    @property
    def compactions(self) -> Mapping[str, Compaction]:
        """Context compactions by id (read-only mapping, in first-seen order)."""
        return self._compactions

    @property
    def unknown(self) -> tuple[Any, ...]:
        """Updates of kinds this SDK does not know (``UnknownSessionUpdate``: the raw payload
        is kept), in arrival order — never dropped."""
        return self._unknown

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
        if isinstance(notification, SessionNotification):
            sid = notification.session_id
            if self._session_id is None:
                nxt = self._copy()
                nxt._session_id = sid
            elif sid != self._session_id:
                raise ValueError(
                    f"a session/update of session {sid!r} applied to the state of session "
                    f"{self._session_id!r} (fold each session's updates into its own state)"
                )
            else:
                nxt = self._copy()
            update = notification.update
        else:
            nxt = self._copy()
            update = notification
        kind = getattr(update, "session_update", None)
        if not isinstance(kind, str):
            raise TypeError(
                f"SessionState.apply takes a SessionNotification or a SessionUpdate model, "
                f"not {type(notification).__name__}"
            )
        handler = _HANDLERS.get(type(update))
        if handler is None:
            nxt._unknown = (*self._unknown, update)
        else:
            handler(nxt, update)
        if kind in _SPLITS:
            nxt._last = kind
        nxt._count = self._count + 1
        return nxt

    def with_setup(self, response: Any) -> SessionState:
        """The state after an agent's answer that carries the session's ``modes`` and
        ``configOptions`` (``session/new``, ``session/load``, ``session/resume``,
        ``session/set_config_option``); fields the answer omits are unchanged."""
        nxt = self._copy()
        modes = getattr(response, "modes", None)
        if modes is not None:
            nxt._mode = modes.current_mode_id
            nxt._modes = tuple(modes.available_modes)
        options = getattr(response, "config_options", None)
        if options is not None:
            nxt._config_options = tuple(options)
        return nxt

    def with_mode(self, mode_id: str) -> SessionState:
        """The state with ``mode_id`` as the current mode (a ``session/set_mode`` that
        succeeded: the agent need not send ``current_mode_update`` for it)."""
        nxt = self._copy()
        nxt._mode = mode_id
        return nxt

    def with_turn_end(self) -> SessionState:
        """The state at the end of a prompt turn: the next chunk without a ``messageId``
        starts a new message (the next turn's answer is not glued to this one's). Nothing
        visible changes. The client applies it on each ``session/prompt`` answer, and
        :func:`~rxacp.client.fold_session_state` on a ``prompt_turn()``'s ``PromptResponse``."""
        nxt = self._copy()
        nxt._last = None
        return nxt

    def _copy(self) -> SessionState:
        new = _new_state(SessionState)
        new._session_id = self._session_id
        new._messages = self._messages
        new._thoughts = self._thoughts
        new._tool_calls = self._tool_calls
        new._plan = self._plan
        new._mode = self._mode
        new._modes = self._modes
        new._config_options = self._config_options
        new._commands = self._commands
        new._usage = self._usage
        new._title = self._title
        new._updated_at = self._updated_at
        new._notices = self._notices
        new._compactions = self._compactions
        new._unknown = self._unknown
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
            dict(self._tool_calls),
            self._plan,
            self._mode,
            self._modes,
            self._config_options,
            self._commands,
            self._usage,
            self._title,
            self._updated_at,
            self._notices,
            dict(self._compactions),
            self._unknown,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionState):
            return NotImplemented
        return self._public() == other._public()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SessionState(session_id={self._session_id!r}, messages={len(self._messages)}, "
            f"thoughts={len(self._thoughts)}, tool_calls={len(self._tool_calls)}, "
            f"plan={len(self._plan)}, mode={self._mode!r}, title={self._title!r}, "
            f"updates={self._count})"
        )


_new_state = object.__new__


# ---------------------------------------------------------------------- per-kind handlers
# Each takes the fresh copy and the update and sets the fields the update changes.


def _chunk_target(
    state: SessionState,
    items: tuple[Any, ...],
    key: str,
    message_id: str | None,
    kind: str,
) -> int | None:
    """Index of the message a chunk continues, or ``None`` for a new one."""
    if message_id is not None:
        return state._ids.get((key, message_id))
    if state._last == kind:
        return state._last_at
    return None


def _add_id(state: SessionState, key: str, message_id: str | None, index: int) -> None:
    if message_id is not None:
        ids = dict(state._ids)
        ids[(key, message_id)] = index
        state._ids = MappingProxyType(ids)


def _message_chunk(state: SessionState, update: UserMessageChunk | AgentMessageChunk) -> None:
    role: Role = "agent" if type(update) is AgentMessageChunk else "user"
    kind = update.session_update
    messages = state._messages
    mid = update.message_id
    at = _chunk_target(state, messages, role, mid, kind)
    part = _part(update.content)
    if at is None:
        state._last_at = len(messages)
        _add_id(state, role, mid, len(messages))
        state._messages = (*messages, Message._of(role, mid, _Text([part], 1)))
        return
    state._last_at = at
    if at == len(messages) - 1:
        state._messages = (*messages[:-1], messages[-1]._appended(part))
    else:
        state._messages = (*messages[:at], messages[at]._appended(part), *messages[at + 1 :])


def _thought_chunk(state: SessionState, update: AgentThoughtChunk) -> None:
    thoughts = state._thoughts
    mid = update.message_id
    at = _chunk_target(state, thoughts, "thought", mid, update.session_update)
    part = _part(update.content)
    if at is None:
        state._last_at = len(thoughts)
        _add_id(state, "thought", mid, len(thoughts))
        state._thoughts = (*thoughts, Thought._of(mid, _Text([part], 1)))
    else:
        state._last_at = at
        state._thoughts = (*thoughts[:at], thoughts[at]._appended(part), *thoughts[at + 1 :])


def _tool_call(state: SessionState, update: ToolCall | ToolCallUpdateNotification) -> None:
    calls = dict(state._tool_calls)
    tid = update.tool_call_id
    current = calls.get(tid) or ToolCallState(tid)
    calls[tid] = current.merged(update)
    state._tool_calls = MappingProxyType(calls)


def _plan(state: SessionState, update: Plan) -> None:
    state._plan = tuple(update.entries)


def _commands(state: SessionState, update: AvailableCommandsUpdate) -> None:
    state._commands = tuple(update.available_commands)


def _mode(state: SessionState, update: CurrentModeUpdate) -> None:
    state._mode = update.current_mode_id


def _config(state: SessionState, update: ConfigOptionUpdate) -> None:
    state._config_options = tuple(update.config_options)


def _info(state: SessionState, update: SessionInfoUpdate) -> None:
    given = update.model_fields_set
    if "title" in given:
        state._title = update.title
    if "updated_at" in given:
        state._updated_at = update.updated_at


def _usage(state: SessionState, update: UsageUpdate) -> None:
    state._usage = update


def _notice(state: SessionState, update: Notice) -> None:
    state._notices = (*state._notices, update)


def _compaction(state: SessionState, update: CompactionUpdate) -> None:
    compactions = dict(state._compactions)
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
    state._compactions = MappingProxyType(compactions)


def _compaction_chunk(state: SessionState, update: CompactionSummaryChunk) -> None:
    compactions = dict(state._compactions)
    cid = update.compaction_id
    current = compactions.get(cid) or Compaction(cid)
    compactions[cid] = current._replace(summary=(*current.summary, update.content))
    state._compactions = MappingProxyType(compactions)


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
