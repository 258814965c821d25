"""What every prompt context shares, v1 and v2, async and sync: :class:`TurnView` (the turn's
identity, the connection's scheduler, the client's capabilities, cancellation, tool call ids),
:class:`WhenCancelled` (the async contexts' Observable of it) and the permission answers'
readers (:func:`selected_option`, :func:`allowed`, :func:`chosen`).

This module is *not* responsible for what a version sends (``context.py``, ``v2/context.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import reactivex
from reactivex import abc

from ..capabilities import NegotiatedCapabilities
from ..roles.signal import CancelReason
from .turn import PromptTurn

if TYPE_CHECKING:
    from .core import AgentCore

__all__ = ["TurnView", "WhenCancelled", "allowed", "chosen", "selected_option", "tool_ids"]

tool_ids = itertools.count(1)
"""The ids of the tool calls and permission requests the contexts make up (``call_1``...)."""


def selected_option(response: Any) -> str | None:
    """The option a permission answer (v1 or v2) selected; ``None`` when cancelled or an
    outcome this SDK does not know (never an approval, as the spec says)."""
    outcome = response.to_wire().get("outcome") or {}
    option = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
    return option if isinstance(option, str) else None


def allowed(response: Any) -> bool:
    """The permission answer selected the ``allow`` option."""
    return selected_option(response) == "allow"


def chosen(options: Sequence[str]) -> Callable[[Any], str | None]:
    """``ask_choice``'s answer: the text of the option (``"0"``, ``"1"``...) selected."""

    def text(response: Any) -> str | None:
        selected = selected_option(response)
        if selected is not None and selected.isdigit() and int(selected) < len(options):
            return options[int(selected)]
        return None

    return text


_Request = TypeVar("_Request")


class TurnView(Generic[_Request]):
    """What every prompt context shares (v1 and v2, async and sync): the turn's identity, the
    connection's scheduler, what the client advertised, and cancellation."""

    _protocol_version = 1  # of the empty capabilities before ``initialize``

    def __init__(self, core: AgentCore, turn: PromptTurn) -> None:
        self._core = core
        self._turn = turn

    @property
    def session_id(self) -> str:
        """The ACP session this turn belongs to."""
        return self._turn.session_id

    @property
    def request(self) -> _Request:
        """The ``session/prompt`` request being handled (of the connection's protocol
        version: ``rxacp.schema.PromptRequest``, or ``rxacp.schema.v2.PromptRequest``)."""
        return cast(_Request, self._turn.request)

    @property
    def client_capabilities(self) -> NegotiatedCapabilities:
        """What the client advertised in ``initialize`` (empty if it never initialized)."""
        return self._core.client_capabilities or NegotiatedCapabilities(
            {}, self._protocol_version, peer="client"
        )

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

    def start_tool_call(
        self,
        title: str,
        *,
        kind: str | None = None,
        status: str = "pending",
        tool_call_id: str | None = None,
        **fields: Any,
    ) -> str:
        """Announce a tool call and return its id (v1: a ``tool_call`` update; v2: the first
        ``tool_call_update`` of the id, which creates it)."""
        call_id = tool_call_id or f"call_{next(tool_ids)}"
        self._announce_tool_call(call_id, title, kind, status, fields)
        return call_id

    def _announce_tool_call(
        self, call_id: str, title: str, kind: str | None, status: str, fields: dict[str, Any]
    ) -> None:
        raise NotImplementedError


class WhenCancelled:
    """The async contexts' (v1 and v2) Observable of the cancellation."""

    _turn: Any  # the context's turn (a PromptTurn, or the v2 one)

    def when_cancelled(self) -> reactivex.Observable[CancelReason]:
        """Emits the reason and completes when the turn is cancelled (late subscribers too)::

        work.pipe(ops.take_until(ctx.when_cancelled()))

        when_cancelled()   ----------r|
        """
        turn: PromptTurn = self._turn
        return turn.signal.when_cancelled()
