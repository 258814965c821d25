"""``HeldPrompts``: the ``hold_prompt_while_cancelling`` agent option (SDK policy, off by
default; ``docs/cancellation.md`` S16). A prompt that arrives while its session's turn is
*cancelling* waits for that turn's answer instead of getting ``-32600`` (real clients send the
next question right after ``session/cancel``), bounded by the cancel grace period;
``session/cancel``/``session/close`` answers it ``cancelled`` without running it.

All state lives on the connection's loop. This module is *not* responsible for the turn
itself (``turn.py``) or for routing (``core.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from reactivex import abc

from ..errors import AcpProtocolException, peer_echo
from ..schema import PromptResponse
from ..session import IncomingRequest
from .turn import CANCELLING

if TYPE_CHECKING:
    from ..session import AcpSession
    from .turn import PromptTurn

__all__ = ["HeldPrompts", "busy_error"]

_log = logging.getLogger("rxacp.agent")


def busy_error(session_id: str) -> AcpProtocolException:
    """The ``-32600`` of a prompt for a session whose turn is still active."""
    return AcpProtocolException.invalid_request(
        f"session {peer_echo(session_id)} already has an active prompt turn; wait for its "
        "answer (also after session/cancel) before prompting again"
    )


class _Held:
    __slots__ = ("request", "start", "timer")

    def __init__(self, request: IncomingRequest, start: Callable[[], None]) -> None:
        self.request = request
        self.start = start
        self.timer: abc.DisposableBase | None = None


class HeldPrompts:
    """At most one held prompt per session, waiting for its cancelling turn to answer."""

    def __init__(
        self,
        session: AcpSession,
        grace: float | None,
        *,
        enabled: bool,
        active: Callable[[str], bool],
    ) -> None:
        self._session = session
        self._active = active
        self._grace = grace
        self.enabled = enabled
        self._held: dict[str, _Held] = {}

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, turn: PromptTurn, request: IncomingRequest, start: Callable[[], None]) -> bool:
        """Hold ``request`` (a prompt for ``turn``'s session) if the policy allows; True if
        held (``start`` runs once the turn answered), False to refuse it ``-32600``."""
        sid = turn.session_id
        if not self.enabled or self._grace is None or turn.state != CANCELLING or sid in self._held:
            return False
        entry = _Held(request, start)
        session = self._session
        entry.timer = self._session.scheduler.schedule_relative(
            self._grace, lambda _s, _st: session.run_on_loop(lambda: self._expire(sid, entry))
        )
        self._held[sid] = entry
        _log.debug("session %s: holding a prompt until the cancelled turn answers", sid)
        return True

    def turn_answered(self, session_id: str) -> None:
        """The session's turn was answered: start its held prompt after that answer."""
        entry = self._held.get(session_id)
        if entry is not None:
            self._session.queue_on_loop(lambda: self._start(session_id, entry))

    def _start(self, session_id: str, entry: _Held) -> None:
        if self._held.get(session_id) is not entry:
            return  # cancelled, expired or dropped meanwhile
        self._drop(session_id)
        if not entry.request.answered:  # not cancelled by $/cancel_request meanwhile
            entry.start()

    def cancel(self, session_id: str) -> None:
        """``session/cancel``/``session/close`` for the session: answer the held prompt
        ``cancelled`` without running it."""
        entry = self._drop(session_id)
        if entry is not None:
            entry.request.respond(PromptResponse.cancelled())

    def _expire(self, session_id: str, entry: _Held) -> None:
        if self._held.get(session_id) is not entry:
            return
        if not self._active(session_id):  # answered at the same instant: its start is queued
            self._start(session_id, entry)
            return
        self._drop(session_id)
        _log.debug("session %s: the cancelled turn did not answer in time; refusing", session_id)
        entry.request.respond_error(busy_error(session_id))

    def _drop(self, session_id: str) -> _Held | None:
        entry = self._held.pop(session_id, None)
        if entry is not None and entry.timer is not None:
            entry.timer.dispose()
        return entry

    def clear(self) -> None:
        """The connection ended: forget every held prompt (they can no longer be answered)."""
        for session_id in list(self._held):
            self._drop(session_id)
