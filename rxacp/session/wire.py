"""The wire: frames in and out of one connection's transport.

:class:`Wire` is the transport's :class:`~rxacp.transport.base.FrameReceiver`: it parses each
incoming frame and routes it (responses to the pending-requests table and then the inbox,
notifications to the inbox or ``$/cancel_request`` to the in-flight table, requests to the
in-flight table), answers malformed input with the right JSON-RPC error, and writes outgoing
messages (queued until the transport started).

Malformed input is answered (``-32700``, ``-32600``) only while the peer still sends something
well-formed now and then: after :data:`MAX_MALFORMED_IN_A_ROW` malformed frames without a
request or notification between them, further ones are counted and not answered until the
peer sends one. Two peers that answer each other's garbage (an agent that echoes its stdin)
would otherwise loop forever; a response never resets the count (it may be an echo of ours)
and is never answered.

This module is *not* responsible for what messages mean or when the connection closes (it
reports the end of the stream to the ``on_eof`` callable it is given).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .. import jsonrpc
from ..errors import AcpConnectionException, AcpErrorCodes
from ..transport.base import AcpTransport, Frame, TransportClosed
from .pending import to_wire_value
from .requests import CANCEL_REQUEST
from .state import CLOSED, CLOSING, NEW, OPEN, STARTING, ConnectionState

if TYPE_CHECKING:
    from .backpressure import OutboundGate
    from .dispatch import InFlightRequests
    from .inbox import Inbox
    from .requests import PendingRequests
    from .stats import SessionStats

__all__ = ["Wire", "WireObserver"]

_log = logging.getLogger("rxacp.session")
_wire = logging.getLogger("rxacp.wire")

MAX_MALFORMED_IN_A_ROW = 100
"""Malformed frames in a row (no request or notification from the peer between them) that are
still answered; the ones after are only counted (``stats.malformed_unanswered``)."""


class WireObserver(Protocol):
    """Watches one connection's messages on its loop (``rxacp.tracing.WireTracer`` is one)."""

    def outgoing(self, msg: dict[str, Any]) -> dict[str, Any]:
        """A message about to be written; returns what to write (the same, or a copy with
        additions such as ``params._meta`` trace context)."""
        ...

    def incoming(self, msg: Any) -> None:
        """A parsed incoming message (a ``jsonrpc`` Request, Notification, Response or
        ErrorResponse), before it is routed."""
        ...


class Wire:
    """Frame intake and writing for one connection (loop thread).

    Args:
        transport: moves the frames.
        state: the connection's phase (read; ``start`` moves it to ``open``).
        gate: the producer gate (paused and resumed by the transport's write buffer).
        stats: counts malformed input.
        role: for log messages.
        on_eof: told why the incoming stream ended.
        on_first_write: called when a message is written before the transport started.
    """

    def __init__(
        self,
        transport: AcpTransport,
        state: ConnectionState,
        gate: OutboundGate,
        stats: SessionStats,
        *,
        role: str,
        on_eof: Callable[[AcpConnectionException], None],
        on_first_write: Callable[[], None],
    ) -> None:
        self._transport = transport
        self._state = state
        self._gate = gate
        self._stats = stats
        self._role = role
        self._on_eof = on_eof
        self._on_first_write = on_first_write
        self._objects = transport.carries_objects
        self._early: list[Frame] = []
        self._malformed_in_a_row = 0
        self.observer: WireObserver | None = None
        """Sees every message written (and may add to it) and read: the tracing hook."""

    _pending: PendingRequests
    _inbox: Inbox
    _in_flight: InFlightRequests

    def route(self, pending: PendingRequests, inbox: Inbox, in_flight: InFlightRequests) -> None:
        """Where incoming messages go (set once, before :meth:`start`)."""
        self._pending, self._inbox, self._in_flight = pending, inbox, in_flight

    async def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the transport, then write what was queued meanwhile."""
        await self._transport.start(loop, self)
        self._state.advance(STARTING, OPEN)
        early, self._early = self._early, []
        for frame in early:
            self._transport.send(frame)

    # ------------------------------------------------------------------ writing
    def send(self, msg: dict[str, Any]) -> None:
        """Write one message; raises ``TypeError``/``ValueError`` if it is not JSON (then
        nothing is written). Dropped once the connection closed."""
        if self.observer is not None:
            msg = self.observer.outgoing(msg)
        frame = msg if self._objects else jsonrpc.serialize(msg)
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("%s -> %s", self._role, frame)
        phase = self._state.phase
        if phase in (OPEN, CLOSING):
            self._transport.send(frame)
        elif phase in (NEW, STARTING):
            self._on_first_write()
            self._early.append(frame)

    def write(self, msg: dict[str, Any]) -> None:
        """Write one message; one that is not JSON is logged and dropped."""
        try:
            self.send(msg)
        except (TypeError, ValueError) as exc:
            _log.error("%s: cannot serialize outgoing message: %s", self._role, exc)

    def notify(self, method: str, params: Any) -> None:
        """Write one notification (a model or JSON params); dropped once the connection closed,
        logged and dropped if it is not JSON."""
        if self._state.phase == CLOSED:
            _log.debug("%s: dropping %s notification: connection closed", self._role, method)
            return
        try:
            self.send(jsonrpc.notification_obj(method, to_wire_value(params)))
        except (TypeError, ValueError) as exc:
            _log.error("%s: cannot send %s notification: %s", self._role, method, exc)

    def write_error(self, rid: Any, code: int, message: str) -> None:
        """Write one error answer."""
        self.write(jsonrpc.error_obj(rid, {"code": int(code), "message": message}))

    # ------------------------------------------------------------------ FrameReceiver
    def on_frame(self, frame: Frame) -> None:
        """One incoming message."""
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("%s <- %s", self._role, frame)
        try:
            msg = jsonrpc.parse_message(frame)
        except jsonrpc.ParseError as exc:
            self._stats.parse_errors += 1
            self._answer_malformed(None, AcpErrorCodes.PARSE_ERROR, f"Parse error: {exc}")
            return
        except jsonrpc.InvalidMessage as exc:
            self._stats.invalid_messages += 1
            if exc.answerable:
                self._answer_malformed(
                    exc.id, AcpErrorCodes.INVALID_REQUEST, f"Invalid request: {exc.reason}"
                )
            else:
                _log.warning("%s: ignoring invalid message: %s", self._role, exc.reason)
            return
        if self.observer is not None:
            self.observer.incoming(msg)
        kind = type(msg)
        if kind is not jsonrpc.Response and kind is not jsonrpc.ErrorResponse:
            self._malformed_in_a_row = 0
        if kind is jsonrpc.Notification:
            if msg.method == CANCEL_REQUEST:  # type: ignore[union-attr]
                self._in_flight.on_cancel_request(msg.params)  # type: ignore[union-attr]
            else:
                self._inbox.on_notification(msg)  # type: ignore[arg-type]
        elif kind is jsonrpc.Request:
            self._in_flight.on_request(msg)  # type: ignore[arg-type]
        else:
            pending = self._pending.take(msg)  # type: ignore[arg-type]
            if pending is not None:
                self._inbox.on_answer(pending, msg)  # type: ignore[arg-type]

    def on_frame_too_large(self, size: int) -> None:
        """An oversized line was discarded."""
        self._stats.oversized_frames += 1
        _log.warning(
            "%s: discarded an incoming message of %d bytes (over the size cap)", self._role, size
        )
        self._answer_malformed(
            None,
            AcpErrorCodes.PARSE_ERROR,
            f"Parse error: message of {size} bytes exceeds the size cap",
        )

    def _answer_malformed(self, rid: Any, code: int, message: str) -> None:
        """Answer one malformed frame, unless the peer sent nothing but malformed ones lately
        (then count it: see the module docstring)."""
        self._malformed_in_a_row += 1
        if self._malformed_in_a_row <= MAX_MALFORMED_IN_A_ROW:
            self.write_error(rid, code, message)
            return
        self._stats.malformed_unanswered += 1
        if self._malformed_in_a_row == MAX_MALFORMED_IN_A_ROW + 1:
            _log.warning(
                "%s: the peer sent %d malformed messages in a row; not answering more of them "
                "until it sends a request or notification (a peer that echoes our answers "
                "would loop forever)",
                self._role,
                MAX_MALFORMED_IN_A_ROW,
            )

    def on_write_paused(self) -> None:
        """The transport's write buffer passed its high-water mark."""
        self._gate.pause()

    def on_write_resumed(self) -> None:
        """The transport's write buffer drained below its low-water mark: producers go on,
        and the requests held meanwhile reach their handlers."""
        self._gate.resume()
        self._in_flight.release_held()

    def on_closed(self, info: TransportClosed) -> None:
        """The incoming stream ended."""
        self._gate.open_forever()
        reason = info.reason if info.error is None else f"{info.reason}: {info.error}"
        self._on_eof(
            AcpConnectionException(reason, exit_code=info.exit_code, stderr_tail=info.stderr_tail)
        )
