"""``PromptTurn``: one ``session/prompt`` from arrival to its single answer (SDK policy).

The rules are ``docs/cancellation.md`` S4-S11: one active turn per session; ``session/cancel``,
``session/close``, ``$/cancel_request``, the grace period, the maximum duration and the
connection closing all fire the turn's :class:`CancelSignal`; ``cancelled`` after
``session/cancel`` whatever the handler does (*spec*); the cascade to the turn's agent→client
requests (*spec*); exactly one answer, and no ``session/update`` after it. All state
transitions happen on the connection's event loop, so they need no locks.

This module is *not* responsible for the handler API (see ``context.py``) or for routing
requests (see ``core.py``).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable, SingleAssignmentDisposable

from .._durations import iso8601_duration
from ..errors import AcpErrorCodes, AcpProtocolException
from ..roles.signal import CancelReason
from ..schema import PromptRequest, PromptResponse, SessionNotification
from ..session import AcpObservable, IncomingRequest
from ..session.direct import subscribe_direct
from .cancel_signal import CancelSignal

if TYPE_CHECKING:
    from .core import AgentCore

__all__ = ["PromptTurn"]


def _turn_cancelled() -> AcpProtocolException:
    return AcpProtocolException.request_cancelled("the prompt turn was cancelled")


_log = logging.getLogger("rxacp.agent.turn")

RUNNING, CANCELLING, ANSWERED = "running", "cancelling", "answered"

SESSION_CLOSE = CancelReason.SESSION_CLOSE
"""The reason (and method name) of ``session/close`` (used by the core)."""


def _plain_wire(result: Any) -> Any:
    """A ``PromptResponse`` that only carries a stop reason, as its wire dict (skips the
    serializer for the common answer); anything else unchanged."""
    if (
        type(result) is PromptResponse
        and result.model_fields_set == {"stop_reason"}
        and not result.__pydantic_extra__
        and type(result.stop_reason) is str
    ):
        return {"stopReason": result.stop_reason}
    return result


class _HandlerObserver(abc.ObserverBase[Any]):
    """The prompt handler's observer: hands the first value, the error or the end to the turn
    (which answers once) and ignores everything after a terminal event."""

    __slots__ = ("_stopped", "_turn")

    def __init__(self, turn: PromptTurn) -> None:
        self._turn = turn
        self._stopped = False

    def on_next(self, value: Any) -> None:
        if not self._stopped:
            self._turn._on_result(value)

    def on_error(self, error: Exception) -> None:
        if not self._stopped:
            self._stopped = True
            self._turn._on_error(error)

    def on_completed(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._turn._on_completed()


class PromptTurn:
    """The state of one prompt turn. Created and driven by :class:`AgentCore` on the loop."""

    def __init__(
        self, core: AgentCore, incoming: IncomingRequest, session_id: str, request: PromptRequest
    ) -> None:
        self._core = core
        self.incoming = incoming
        self.session_id = session_id
        self.request = request
        self.state = RUNNING
        self.session_cancelled = False
        """True once ``session/cancel`` or ``session/close`` arrived (answer: ``cancelled``)."""
        self.signal = CancelSignal()
        self._children: dict[int, abc.DisposableBase] = {}
        self._children_lock = threading.Lock()
        self._handler_sub: abc.DisposableBase | None = None
        self._grace_timer: abc.DisposableBase | None = None
        self._max_timer: abc.DisposableBase | None = None
        self._got_value = False
        incoming.handle_cancel_with(self._on_cancel_request)

    # ------------------------------------------------------------------ lifecycle (loop)
    def start(self, source: reactivex.Observable[Any]) -> None:
        """Subscribe the handler's work and arm the maximum-duration timer."""
        max_seconds = self._core.max_prompt_duration
        if max_seconds is not None:
            self._max_timer = self._core.session.scheduler.schedule_relative(
                max_seconds, lambda _s, _st: self._on_loop(self._on_max_duration)
            )
        # the turn's state machine tolerates emissions before `sub` is assigned; the observer
        # is a bare one (no AutoDetachObserver): answering disposes the subscription anyway
        sub = subscribe_direct(source, observer=_HandlerObserver(self))
        if self.state == ANSWERED:
            sub.dispose()
        else:
            self._handler_sub = sub

    def finish_now(self, result: Any = None, error: BaseException | None = None) -> None:
        """The handler answered synchronously with a plain value (or raised): answer at once,
        without subscribing anything (same answer as ``start(reactivex.of(result))``)."""
        self._answer(result=result, error=error)

    def _on_loop(self, fn: Any) -> None:
        self._core.session.run_on_loop(fn)

    def _on_loop_in_order(self, fn: Any) -> None:
        """``fn`` on the loop, inline there; from another thread queued (gated:
        ``queue_on_loop``), in order with the thread's other updates."""
        session = self._core.session
        if session.in_loop():
            fn()
        else:
            session.queue_on_loop(fn)

    def _on_result(self, value: Any) -> None:
        self._got_value = True
        self._on_loop(lambda: self._answer(result=value))

    def _on_error(self, error: Exception) -> None:
        self._on_loop(lambda: self._answer(error=error))

    def _on_completed(self) -> None:
        if not self._got_value:
            self._on_loop(lambda: self._answer(result=None))

    # ------------------------------------------------------------------ triggers (loop)
    def cancel_from_session(self, reason: CancelReason = CancelReason.SESSION_CANCEL) -> None:
        """``session/cancel`` or ``session/close`` for this turn's session."""
        if self.state != RUNNING:
            return  # already cancelling (grace not extended) or answered
        self.session_cancelled = True
        self.state = CANCELLING
        self._fire(reason)
        grace = self._core.cancel_grace_period
        if grace is not None:
            self._grace_timer = self._core.session.scheduler.schedule_relative(
                grace, lambda _s, _st: self._on_loop(self._on_grace_expired)
            )

    def _on_cancel_request(self, _req: IncomingRequest) -> bool:
        # S9: -32800 at once (``cancelled`` if session/cancel came first: see ``_respond``)
        cancelled = AcpProtocolException.request_cancelled()
        self._answer(error=cancelled, reason=CancelReason.CANCEL_REQUEST)
        return True

    def _on_grace_expired(self) -> None:
        if self.state == ANSWERED:
            return
        _log.warning(
            "prompt handler for session %s did not answer within the cancel grace period; "
            "answering `cancelled` for it",
            self.session_id,
        )
        self._answer(result=None, reason=CancelReason.GRACE_PERIOD)

    def _on_max_duration(self) -> None:  # -32800, or ``cancelled`` if cancelling already
        seconds = self._core.max_prompt_duration or 0.0
        error = AcpProtocolException(
            AcpErrorCodes.REQUEST_CANCELLED,
            "Prompt turn exceeded the maximum prompt duration",
            {"maxPromptDuration": iso8601_duration(seconds)},
        )
        self._answer(error=error, reason=CancelReason.MAX_DURATION)

    def on_connection_closed(self) -> None:
        """The connection ended: stop the handler; no answer can be written any more."""
        if self.state == ANSWERED:
            return
        self.state = ANSWERED
        self._teardown()
        self.signal.fire(CancelReason.CONNECTION_CLOSED)

    def _fire(self, reason: CancelReason) -> None:
        if self.signal.fire(reason):
            self._dispose_children()

    # ------------------------------------------------------------------ the one answer (loop)
    def _answer(
        self,
        *,
        result: Any = None,
        error: BaseException | None = None,
        reason: CancelReason = CancelReason.ANSWERED,
    ) -> None:
        """Send the turn's one answer. The SDK decides *before* the handler hears about it:
        state, handler subscription and children are settled first, then the signal fires,
        so a handler reacting synchronously to cancellation can no longer claim the answer."""
        if self.state == ANSWERED:
            return
        self.state = ANSWERED
        self._teardown()
        self._respond(result, error)
        self.signal.fire(reason)

    def _respond(self, result: Any, error: BaseException | None) -> None:
        if self.session_cancelled:
            meta = result.meta if isinstance(result, PromptResponse) else None
            if meta is None:
                self.incoming.respond({"stopReason": "cancelled"})
            else:  # the handler's response's ``_meta`` is kept (S6)
                response = PromptResponse.cancelled()
                response.meta = meta
                self.incoming.respond(response)
        elif error is not None:
            self.incoming.respond_error(error)
        elif result is None:
            self.incoming.respond({"stopReason": "end_turn"})
        else:
            self.incoming.respond(_plain_wire(result))

    def _teardown(self) -> None:
        grace, max_timer, handler = self._grace_timer, self._max_timer, self._handler_sub
        self._grace_timer = self._max_timer = self._handler_sub = None
        for disposable in (grace, max_timer, handler):
            if disposable is not None:
                disposable.dispose()
        if self._children:  # children register under the lock and re-check the signal after
            self._dispose_children()
        # the hook is the turn's bound method: without this the turn, its request (a prompt may
        # be 16 MiB) and the incoming request keep each other alive until a full gc
        self.incoming.handle_cancel_with(None)
        self._core.turn_finished(self)

    # ------------------------------------------------------------------ updates and children
    def send_update(self, update: Any) -> None:
        """Write a ``session/update`` for this turn unless the turn was already answered.

        Callable from any thread; the check happens on the loop at write time, so an update
        is either written before the answer or dropped (and logged), never after it.
        """
        notification = (
            update
            if isinstance(update, SessionNotification)
            else SessionNotification(session_id=self.session_id, update=update)
        )
        self._on_loop_in_order(lambda: self._write_update(notification))

    def send_wire_update(self, update: dict[str, Any]) -> None:
        """Like :meth:`send_update` with the update's wire form (built by the SDK, not the user:
        it is not validated again)."""
        notification = {"sessionId": self.session_id, "update": update}
        self._on_loop_in_order(lambda: self._write_update(notification))

    def _write_update(self, notification: SessionNotification | dict[str, Any]) -> None:
        if self.state == ANSWERED:
            _log.info(
                "dropping a session/update for session %s sent after the prompt was answered",
                self.session_id,
            )
            return
        self._core.session.send_notification("session/update", notification)

    def track(self, source: AcpObservable[Any]) -> AcpObservable[Any]:
        """Tie an agent→client request to this turn (cascading cancellation)::

            --R|                  answered before the turn ends
            --X  (-32800)         the turn was cancelled: $/cancel_request sent for it

        When the turn is cancelled the request is disposed (the client gets
        ``$/cancel_request``) and its subscriber errors with ``-32800``. Once the turn is
        cancelled or answered, new requests fail the same way without being sent.
        """

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            if self.signal.is_set():
                observer.on_error(_turn_cancelled())
                return Disposable()
            inner = SingleAssignmentDisposable()

            def cascade() -> None:
                inner.dispose()
                observer.on_error(_turn_cancelled())

            child = Disposable(cascade)
            key = id(child)
            with self._children_lock:
                self._children[key] = child

            def finished() -> None:
                with self._children_lock:
                    self._children.pop(key, None)

            def on_error(error: Exception) -> None:
                finished()
                observer.on_error(error)

            def on_completed() -> None:
                finished()
                observer.on_completed()

            inner.disposable = source.subscribe(
                observer.on_next, on_error, on_completed, scheduler=scheduler
            )
            if self.signal.is_set():  # cancelled while subscribing
                with self._children_lock:
                    pending = self._children.pop(key, None)
                if pending is not None:
                    pending.dispose()

            def dispose() -> None:
                finished()
                inner.dispose()

            return Disposable(dispose)

        return AcpObservable(subscribe)

    def _dispose_children(self) -> None:
        with self._children_lock:
            children = list(self._children.values())
            self._children.clear()
        for child in children:
            child.dispose()
