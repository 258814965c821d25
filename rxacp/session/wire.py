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
from typing import TYPE_CHECKING, Any, Protocol, cast

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


class ConnectionEvents(Protocol):
    """What the wire tells the connection's state machine (``connection.Connection``; loop
    thread)."""

    def ensure_started(self) -> None:
        """A message is written before the transport started: start it."""

    def peer_closed(self, reason: AcpConnectionException) -> None:
        """The incoming stream ended, for ``reason``."""


class Wire:
    """Frame intake and writing for one connection (loop thread).

    Args:
        transport: moves the frames.
        state: the connection's phase (read; ``start`` moves it to ``open``).
        gate: the producer gate (paused and resumed by the transport's write buffer).
        stats: counts malformed input.
        role: for log messages.

    :meth:`route` sets where incoming messages go and the connection it reports to (why the
    incoming stream ended; a write before the transport started).
    """

    def __init__(
        self,
        transport: AcpTransport,
        state: ConnectionState,
        gate: OutboundGate,
        stats: SessionStats,
        *,
        role: str,
    ) -> None:
        self._transport = transport
        self._state = state
        self._gate = gate
        self._stats = stats
        self._role = role
        self._objects = transport.carries_objects
        self._early: list[Frame] = []
        self._malformed_in_a_row = 0
        self.observer: WireObserver | None = None
        """Sees every message written (and may add to it) and read: the tracing hook."""
        self.batches = False
        """Accept JSON-RPC batch arrays (ACP v2 transports; v1 answers one ``-32600``)."""
        self._batch_of: dict[tuple[type, Any], _Batch] = {}

    _pending: PendingRequests
    _inbox: Inbox
    _in_flight: InFlightRequests
    _connection: ConnectionEvents

    def route(
        self,
        pending: PendingRequests,
        inbox: Inbox,
        in_flight: InFlightRequests,
        connection: ConnectionEvents,
    ) -> None:
        """Where incoming messages go, and the connection told of its events (set once,
        before :meth:`start`)."""
        self._pending, self._inbox, self._in_flight = pending, inbox, in_flight
        self._connection = connection

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
        if self._batch_of and "method" not in msg and self._batched(msg):
            return
        self._send_frame(msg)

    def _send_frame(self, msg: dict[str, Any] | list[dict[str, Any]]) -> None:
        frame: Frame = cast(Frame, msg) if self._objects else jsonrpc.serialize(msg)
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("%s -> %s", self._role, frame)
        phase = self._state.phase
        if phase in (OPEN, CLOSING):
            self._transport.send(frame)
        elif phase in (NEW, STARTING):
            self._connection.ensure_started()
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
            if self.batches and self._on_batch(frame):
                return
            self._stats.invalid_messages += 1
            if exc.answerable:
                self._answer_malformed(
                    exc.id, AcpErrorCodes.INVALID_REQUEST, f"Invalid request: {exc.reason}"
                )
            elif exc.id is not None:  # a broken answer to one of our requests: it settles it
                _log.warning("%s: invalid answer to request %r: %s", self._role, exc.id, exc.reason)
                broken = jsonrpc.ErrorResponse(
                    exc.id,
                    {
                        "code": AcpErrorCodes.INTERNAL_ERROR,
                        "message": f"Malformed response: {exc.reason}",
                    },
                )
                pending = self._pending.take(broken)
                if pending is not None:
                    self._inbox.on_answer(pending, broken)
            else:
                _log.warning("%s: ignoring invalid message: %s", self._role, exc.reason)
            return
        self._route(msg)

    def _route(self, msg: jsonrpc.Message) -> None:
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

    # ------------------------------------------------------------------ batches (v2)
    def _on_batch(self, frame: Frame) -> bool:
        """A JSON-RPC batch (ACP v2 ``transports.mdx``): each entry is handled as if it came
        alone, in order; the answers of its requests go out together as one array once all
        are answered (an invalid entry is answered ``-32600`` with ``id: null`` in it; a
        notification-only batch gets nothing). False if ``frame`` is not an array."""
        items = frame if isinstance(frame, list) else None
        if items is None and not isinstance(frame, dict):
            try:
                decoded = jsonrpc.decode_json(frame)  # type: ignore[arg-type]
            except (jsonrpc.ParseError, TypeError):
                return False
            items = decoded if isinstance(decoded, list) else None
        if items is None:
            return False
        if not items:
            self.write_error(None, AcpErrorCodes.INVALID_REQUEST, "Invalid request: empty batch")
            return True
        batch = _Batch()
        routed: list[jsonrpc.Message] = []
        for item in items:
            try:
                msg = jsonrpc.classify(item)
            except jsonrpc.InvalidMessage as exc:
                self._stats.invalid_messages += 1
                reason = f"Invalid request: {exc.reason}"
                error = {"code": int(AcpErrorCodes.INVALID_REQUEST), "message": reason}
                batch.answers.append(jsonrpc.error_obj(None, error))
                continue
            if type(msg) is jsonrpc.Request:
                key = _id_key(msg.id)
                batch.waiting.add(key)
                self._batch_of[key] = batch
            routed.append(msg)
        for msg in routed:
            self._route(msg)
        if not batch.waiting and batch.answers:
            self._send_frame(batch.answers)
        return True

    def _batched(self, msg: dict[str, Any]) -> bool:
        """Keep an answer that belongs to a batch; write the batch's array when complete."""
        key = _id_key(msg.get("id"))
        batch = self._batch_of.pop(key, None)
        if batch is None:
            return False
        batch.waiting.discard(key)
        batch.answers.append(msg)
        if not batch.waiting:
            self._send_frame(batch.answers)
        return True

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
        self._connection.peer_closed(
            AcpConnectionException(reason, exit_code=info.exit_code, stderr_tail=info.stderr_tail)
        )


class _Batch:
    """The answers of one incoming batch, until every request in it was answered."""

    __slots__ = ("answers", "waiting")

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.waiting: set[tuple[type, Any]] = set()


def _id_key(rid: Any) -> tuple[type, Any]:
    """A request id as a dict key that keeps ``1`` and ``"1"`` apart."""
    return (type(rid), rid) if isinstance(rid, int | str) else (type(rid), repr(rid))
