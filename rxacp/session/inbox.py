"""The ordered inbox: incoming notifications, one finished before the next starts, and answers
delivered only after the notifications that arrived before them.

:class:`Inbox` holds small slotted items (:class:`_Note`, :class:`_Answer`) in arrival order.
A notification handler that returns an Observable holds the inbox until it completes; an
unordered handler (cancellation) runs at once, ahead of queued items.

This module is *not* responsible for routing requests or settling outgoing requests (it hands
answers to the ``deliver`` callable it is given).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import reactivex

from .. import jsonrpc
from .incoming import IncomingNotification
from .pending import PendingRequest

if TYPE_CHECKING:
    from .backpressure import InboundGate
    from .loop import LoopRunner

__all__ = ["Inbox", "NotificationHandler"]

_log = logging.getLogger("rxacp.session")

NotificationHandler = Callable[[IncomingNotification], "reactivex.Observable[Any] | None"]
"""Handles one notification: return ``None`` when done, or an Observable the drain waits for."""

Answer = jsonrpc.Response | jsonrpc.ErrorResponse


class _Note:
    """A notification waiting for its handler."""

    __slots__ = ("handler", "note")

    def __init__(self, handler: NotificationHandler, note: IncomingNotification) -> None:
        self.handler = handler
        self.note = note


class _Answer:
    """An answer waiting behind earlier notifications."""

    __slots__ = ("msg", "pending")

    def __init__(self, pending: PendingRequest, msg: Answer) -> None:
        self.pending = pending
        self.msg = msg


class Inbox:
    """Ordered delivery of notifications and answers (loop thread).

    Args:
        runner: resumes the drain on the loop when an awaited handler finishes elsewhere.
        deliver: settles an outgoing request with its answer.
        role: for log messages.
        gate: told how deep the queue is (stops reading from the peer while it is too deep).
    """

    def __init__(
        self,
        runner: LoopRunner,
        deliver: Callable[[PendingRequest, Answer], None],
        *,
        role: str,
        gate: InboundGate | None = None,
    ) -> None:
        self._gate = gate
        self._runner = runner
        self._deliver = deliver
        self._role = role
        self.handlers: dict[str, tuple[NotificationHandler, bool]] = {}
        """Notification handlers by method name, with their ``ordered`` flag."""
        self._queue: collections.deque[_Note | _Answer] = collections.deque()
        self._busy = False
        self._idle_waiters: list[asyncio.Future[None]] = []

    @property
    def idle(self) -> bool:
        """True when nothing is queued and no handler holds the inbox."""
        return not self._queue and not self._busy

    def set_handler(
        self, method: str, handler: NotificationHandler, *, ordered: bool = True
    ) -> None:
        """Register the handler of incoming notifications for ``method``.

        ``ordered=False`` runs it as soon as the notification arrives, ahead of queued ones
        (used for cancellation, which must not wait behind a slow consumer).
        """
        self.handlers[method] = (handler, ordered)

    def on_notification(self, msg: jsonrpc.Notification) -> None:
        """Queue (or run at once, when unordered or idle) one incoming notification."""
        entry = self.handlers.get(msg.method)
        if entry is None:
            _log.debug("%s: no handler for notification %s; ignored", self._role, msg.method)
            return
        handler, ordered = entry
        note = IncomingNotification(msg.method, msg.params)
        if not ordered:
            self._run_unordered(handler, note)
            return
        queue = self._queue
        queue.append(_Note(handler, note))
        if not self._busy and len(queue) == 1:
            self._drain()
        elif self._gate is not None:
            self._gate.grew(len(queue))

    def on_answer(self, pending: PendingRequest, msg: Answer) -> None:
        """Deliver an answer now, or after the notifications queued before it."""
        if self._busy or self._queue:
            self._queue.append(_Answer(pending, msg))
            if self._gate is not None:
                self._gate.grew(len(self._queue))
        else:
            self._deliver(pending, msg)

    def _run_unordered(self, handler: NotificationHandler, note: IncomingNotification) -> None:
        try:
            source = handler(note)
            if source is not None:
                source.subscribe(on_error=lambda e: self._log_error(note, e))
        except Exception as exc:
            self._log_error(note, exc)

    def _log_error(self, note: IncomingNotification, exc: BaseException) -> None:
        _log.error(
            "%s: handler of notification %s failed: %s", self._role, note.method, exc, exc_info=exc
        )

    def _drain(self) -> None:
        """Deliver queued notifications and answers in order."""
        queue = self._queue
        gate = self._gate
        while queue and not self._busy:
            item = queue.popleft()
            if gate is not None:
                gate.shrank(len(queue))
            if type(item) is _Answer:
                self._deliver(item.pending, item.msg)
                continue
            note = item.note  # type: ignore[union-attr]
            try:
                source = item.handler(note)  # type: ignore[union-attr]
            except Exception as exc:
                self._log_error(note, exc)
                continue
            if source is not None and not self._await(source, note):
                return
        if not queue and not self._busy:
            self._wake_idle_waiters()

    def _await(self, source: reactivex.Observable[Any], note: IncomingNotification) -> bool:
        """Subscribe to a handler's work; True if it already finished (else the inbox is held
        until it does)."""
        flags = {"sync": True, "done": False}

        def finish(error: Exception | None = None) -> None:
            if error is not None:
                self._log_error(note, error)
            if flags["done"]:
                return
            flags["done"] = True
            if not flags["sync"]:
                self._runner.call(self._resume)

        self._busy = True
        try:
            source.subscribe(on_error=finish, on_completed=finish)
        except Exception as exc:
            finish(exc)
        flags["sync"] = False
        if flags["done"]:
            self._busy = False
            return True
        return False

    def _resume(self) -> None:
        self._busy = False
        self._drain()

    async def wait_idle(self) -> None:
        """Wait (on the loop) until the inbox is idle, or cleared."""
        if self.idle:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_waiters.append(waiter)
        await waiter

    def clear(self) -> list[PendingRequest]:
        """Drop everything queued; return the outgoing requests whose answers were queued."""
        queued = list(self._queue)
        self._queue.clear()
        self._busy = False
        self._wake_idle_waiters()
        return [item.pending for item in queued if type(item) is _Answer]

    def _wake_idle_waiters(self) -> None:
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
