"""The items of a :class:`~rxacp.client.SessionState` snapshot: :class:`Message`,
:class:`Thought`, :class:`ToolCallState` and :class:`Compaction` (all immutable).

A message or thought is joined from its chunks without copying them: its parts live in an
append-only buffer that successive snapshots share (see :class:`_Chunked`).

This module is *not* responsible for deciding which chunk goes to which item, or for the
snapshot itself (``read_model.py``).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from ..schema import (
    ContentBlock,
    TextContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallUpdateNotification,
)

__all__ = ["Compaction", "Message", "Role", "Thought", "ToolCallState", "chunk_part"]

Role = Literal["user", "agent"]
"""Who a :class:`Message` is from."""


class _Chunked:
    """Base of :class:`Message` and :class:`Thought`: chunks joined, with an optional id.

    The parts (``str`` for plain text, else the content block) live in an append-only list
    shared by successive snapshots, each seeing its first ``_n``: appending on the newest
    snapshot is O(1); appending on an older one (a branch) copies its prefix first. Exactly one
    appender wins index ``_n`` (``list.append`` is atomic), so two threads appending to the same
    snapshot never see each other's part. Every :data:`_RUN` text chunks in a row (from
    ``_tail`` on) are joined into one string in a new list, so a long message costs about its
    text's size, not an object per chunk. The text is joined on first read and cached.
    """

    __slots__ = ("_joined", "_message_id", "_n", "_parts", "_role", "_tail")

    _parts: list[str | ContentBlock]
    _n: int
    _tail: int
    _joined: str | None
    _message_id: str | None
    _role: Any  # a Message's Role; None for a Thought

    def _init(self, role: Any, text: str, message_id: str | None) -> None:
        self._role = role
        self._message_id = message_id
        self._parts = [text] if text else []
        self._n = len(self._parts)
        self._tail = 0
        self._joined = None

    def _appended(self, part: str | ContentBlock) -> Any:
        """This item with ``part`` appended (a new item; ``self`` is unchanged)."""
        item = _new_item(self.__class__)
        item._role = self._role
        item._message_id = self._message_id
        item._parts, item._n, item._tail = _grow(self._parts, self._n, self._tail, part)
        item._joined = None
        return item

    def _appended_all(self, parts: list[str | ContentBlock]) -> Any:
        """As :meth:`_appended`, for several parts at once (one item made, not one per part)."""
        item = self._appended(parts[0]) if parts else self
        for part in parts[1:]:
            item._parts, item._n, item._tail = _grow(item._parts, item._n, item._tail, part)
        return item

    @property
    def message_id(self) -> str | None:
        """The agent's ``messageId`` of the chunks (``None`` when it sent none)."""
        return self._message_id

    @property
    def text(self) -> str:
        """The text of every text chunk, joined (other blocks are only in :attr:`content`)."""
        joined = self._joined
        if joined is None:
            texts = (p if isinstance(p, str) else _text_of(p) for p in self._parts[: self._n])
            joined = self._joined = "".join(t for t in texts if t is not None)
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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Chunked) or isinstance(other, Message) != isinstance(
            self, Message
        ):
            return NotImplemented
        return (self._role, self._message_id, self.content) == (
            other._role,
            other._message_id,
            other.content,
        )

    __hash__ = None  # type: ignore[assignment]


def _text_of(block: Any) -> str | None:
    """The text of a text content block of either protocol version's schema (v1 and v2 are
    two classes), ``None`` for any other block."""
    text = getattr(block, "text", None)
    return text if isinstance(text, str) and getattr(block, "type", None) == "text" else None


def chunk_part(block: ContentBlock) -> str | ContentBlock:
    """A text block's text (kept as a plain ``str``: cheaper and smaller), else the block."""
    if type(block) is not TextContent:
        text = _text_of(block)  # a v2 text block, or another kind of block
        return text if text is not None and _plain(block) else block
    if block.annotations is None and block.meta is None and not block.__pydantic_extra__:
        return block.text
    return block


class Message(_Chunked):
    """One user or agent message, joined from its ``*_message_chunk`` updates (immutable)."""

    __slots__ = ()

    def __init__(self, role: Role, text: str = "", message_id: str | None = None) -> None:
        self._init(role, text, message_id)

    @property
    def role(self) -> Role:
        """``"user"`` (``user_message_chunk``) or ``"agent"`` (``agent_message_chunk``)."""
        role: Role = self._role
        return role

    def __repr__(self) -> str:
        return f"Message(role={self._role!r}, text={self.text!r}, message_id={self._message_id!r})"


class Thought(_Chunked):
    """The agent's reasoning, joined from its ``agent_thought_chunk`` updates (immutable)."""

    __slots__ = ()

    def __init__(self, text: str = "", message_id: str | None = None) -> None:
        self._init(None, text, message_id)

    def __repr__(self) -> str:
        return f"Thought(text={self.text!r}, message_id={self._message_id!r})"


_new_item = object.__new__

_RUN = 64
"""Text chunks joined into one string once this many are in a row (see :func:`_grow`)."""


def _grow(
    parts: list[str | ContentBlock], n: int, tail: int, part: str | ContentBlock
) -> tuple[list[str | ContentBlock], int, int]:
    """``(parts, n, tail)`` of an item seeing ``parts[:n]`` with ``part`` appended (see
    :class:`_Chunked`): on the shared list when this is its newest snapshot, else on a copy;
    a run of :data:`_RUN` text parts from ``tail`` on is joined into one string."""
    if len(parts) == n:
        parts.append(part)
        if parts[n] is not part:  # another thread appended to this snapshot first
            parts = [*parts[:n], part]
    else:  # appending to an older snapshot: a branch of its own
        parts = [*parts[:n], part]
    n += 1
    if n - tail < _RUN:
        return parts, n, tail
    window = parts[tail:n]
    if not all(type(p) is str for p in window):
        return parts, n, n  # a block in the run: no compaction, a new run starts here
    # a run of _RUN small strings becomes one: memory stays near the text's own size
    compacted = [*parts[:tail], "".join(window)]  # type: ignore[arg-type]
    return compacted, tail + 1, tail + 1


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

    def upserted(self, update: Any) -> ToolCallState:
        """This tool call after an ACP v2 ``tool_call_update`` upsert (patch fields: omitted
        unchanged, ``null`` cleared, a value replaces)."""
        given = update.model_fields_set

        def patched(name: str, current: Any, empty: Any = None) -> Any:
            if name not in given:
                return current
            value = getattr(update, name)
            if value is None:
                return empty
            return tuple(value) if isinstance(value, list) else value

        return ToolCallState(
            self.tool_call_id,
            patched("title", self.title),
            patched("kind", self.kind),
            patched("status", self.status),
            patched("name", self.name),
            patched("content", self.content, ()),
            patched("locations", self.locations, ()),
            patched("raw_input", self.raw_input),
            patched("raw_output", self.raw_output),
            patched("meta", self.meta),
        )

    def with_content(self, content: ToolCallContent) -> ToolCallState:
        """This tool call with one more content item (ACP v2 ``tool_call_content_chunk``)."""
        return self._replace(content=(*self.content, content))

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
        return "".join(t for t in map(_text_of, self.summary) if t is not None)


def _plain(block: Any) -> bool:
    return (
        getattr(block, "annotations", None) is None
        and getattr(block, "meta", None) is None
        and not block.__pydantic_extra__
    )
