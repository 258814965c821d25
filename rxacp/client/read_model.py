"""``SessionState``: the client's read model of one ACP session, as immutable snapshots.

Every client folds a session's ``session/update`` notifications into "what the screen shows".
:class:`SessionState` is that fold as a pure function: ``SessionState().apply(n1).apply(n2)``;
each :meth:`SessionState.apply` returns a new snapshot and never changes the one it was called
on, so a snapshot handed to a renderer (on any thread) stays valid while later updates arrive.
What each ``sessionUpdate`` kind does (v1 and the v2 Draft's upserts), how message chunks are
joined into messages (by ``messageId``, else while the stream is contiguous; a turn's end,
:meth:`SessionState.with_turn_end`, ends a run) and what it costs: ``docs/read-model.md``.
Anything of a kind this SDK does not know is kept in :attr:`SessionState.unknown`.

This module is *not* responsible for what each kind does (``_read_fold.py``), for receiving
updates (the client's ``session_state()`` and :func:`~rxacp.client.fold_session_state`) or for
any I/O: it is pure data, no Rx, no threads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..schema import (
    AcpModel,
    AvailableCommand,
    ContentBlock,
    Notice,
    PlanEntry,
    SessionConfigOption,
    SessionMode,
    SessionNotification,
    UsageUpdate,
)
from ..schema._base import UnknownVariant
from ._read_fold import EMPTY_MAP, EMPTY_REST, V2_HANDLERS, V2_MODULES, Rest, chunk, edit, join_run
from ._read_fold import HANDLERS as _HANDLERS
from .read_items import Compaction, Message, Thought, ToolCallState, chunk_part

__all__ = ["Compaction", "Message", "SessionState", "Thought", "ToolCallState"]


class SessionState:
    """An immutable snapshot of one ACP session as a client shows it; ``SessionState()`` is
    the empty state and :meth:`apply` returns the state after one more update (what each
    ``sessionUpdate`` kind does: ``docs/read-model.md``)::

        state = SessionState()
        for note in notifications:
            state = state.apply(note)
        print(state.messages[-1].text, state.tool_calls["call_1"].status)

    Snapshots compare equal when every public field does. Pure and thread-safe: ``apply`` on
    the same snapshot from two threads gives two independent snapshots.
    """

    __slots__ = (
        "_count",
        "_ids",
        "_last",
        "_last_at",
        "_messages",
        "_rest",
        "_session_id",
        "_thoughts",
    )

    _session_id: str | None
    _messages: tuple[Message, ...]
    _thoughts: tuple[Thought, ...]
    _rest: Rest
    _last: str | None
    _last_at: int
    _ids: Mapping[tuple[str, str], int]
    _count: int

    def __init__(self, session_id: str | None = None) -> None:
        self._session_id = session_id
        self._messages = ()
        self._thoughts = ()
        self._rest = EMPTY_REST
        self._last = None  # the kind of the latest chunk or tool call (ends a chunk run)
        self._last_at = -1  # the index of the message or thought the latest chunk went to
        self._ids = EMPTY_MAP  # (list, messageId) -> index in messages / thoughts
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
        own: str | None
        if type(notification) is SessionNotification:  # the common case, inline
            own = notification.session_id
            update = notification.update
            handler = _HANDLERS.get(type(update))
            if handler is None or (self._session_id is not None and own != self._session_id):
                own, update, handler = self._resolve(notification)
        else:
            own, update, handler = self._resolve(notification)
        nxt = _new_state(SessionState)  # self._copy(), inline: this is the hot path
        nxt._session_id = own
        nxt._messages = self._messages
        nxt._thoughts = self._thoughts
        nxt._rest = self._rest
        nxt._last = self._last
        nxt._last_at = self._last_at
        nxt._ids = self._ids
        nxt._count = self._count + 1
        if handler is None:
            edit(nxt).unknown = (*self._rest.unknown, update)
        else:
            handler(nxt, update)
        return nxt

    def apply_all(self, notifications: Iterable[SessionNotification | Any]) -> SessionState:
        """The state after every notification in order — equal to applying them one by one,
        without making the snapshots in between (a run of text chunks into one message is
        appended at once). ``self`` is unchanged; errors as :meth:`apply` (nothing is
        returned then)."""
        nxt = self._copy()
        run: list[str | ContentBlock] = []  # parts waiting to join the chunk run's item
        run_kind: str | None = None
        run_id: str | None = None
        for notification in notifications:
            own, update, handler = nxt._resolve(notification)
            nxt._session_id = own
            nxt._count += 1
            if run_kind is not None and handler is chunk:
                mid = update.message_id
                if update.session_update == run_kind and (mid is None or mid == run_id):
                    run.append(chunk_part(update.content))
                    continue
            if run:
                join_run(nxt, run_kind, run)
                run = []
            if handler is None:
                edit(nxt).unknown = (*nxt._rest.unknown, update)
                continue
            handler(nxt, update)
            if handler is chunk:
                run_kind = nxt._last
                items = nxt._thoughts if run_kind == "agent_thought_chunk" else nxt._messages
                run_id = items[nxt._last_at].message_id
            elif nxt._last != run_kind:
                run_kind = None
        if run:
            join_run(nxt, run_kind, run)
        return nxt

    def _resolve(self, notification: Any) -> tuple[str | None, Any, Any]:
        """``(session id, update, handler)`` of a notification for this state (the checks
        of :meth:`apply`)."""
        own = self._session_id
        if isinstance(notification, SessionNotification) or isinstance(
            getattr(notification, "update", None), AcpModel
        ):  # a v1 SessionNotification, or a v2 UpdateSessionNotification
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
        if handler is None:
            kind = getattr(update, "session_update", None)
            v2 = update.__module__ in V2_MODULES and not isinstance(update, UnknownVariant)
            handler = V2_HANDLERS.get(kind) if v2 else None
        if handler is None and not isinstance(getattr(update, "session_update", None), str):
            raise TypeError(
                f"SessionState.apply takes a SessionNotification or a SessionUpdate model, "
                f"not {type(notification).__name__}"
            )
        return own, update, handler

    def with_setup(self, response: Any) -> SessionState:
        """The state after an agent's answer that carries the session's ``modes`` and
        ``configOptions`` (``session/new``, ``session/load``, ``session/resume``,
        ``session/set_config_option``); fields the answer omits are unchanged."""
        nxt = self._copy()
        modes = getattr(response, "modes", None)
        if modes is not None:
            rest = edit(nxt)
            rest.mode = modes.current_mode_id
            rest.modes = tuple(modes.available_modes)
        options = getattr(response, "config_options", None)
        if options is not None:
            edit(nxt).config_options = tuple(options)
        return nxt

    def with_mode(self, mode_id: str) -> SessionState:
        """The state with ``mode_id`` as the current mode (a ``session/set_mode`` that
        succeeded: the agent need not send ``current_mode_update`` for it)."""
        nxt = self._copy()
        edit(nxt).mode = mode_id
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
