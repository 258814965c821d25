"""The transport contract: move framed JSON-RPC messages between two peers.

A transport is driven by exactly one asyncio event loop (the connection's loop). The session
engine calls :meth:`AcpTransport.start` once, on that loop, with a :class:`FrameReceiver`; from
then on the transport calls the receiver *on the loop* for every incoming frame, in arrival order,
and exactly once :meth:`FrameReceiver.on_closed` when the stream ends for any reason.

A frame (:data:`Frame`) is one JSON-RPC message: ``bytes`` holding one line of UTF-8 JSON without
its newline, or, for in-memory transports that skip serialization (``carries_objects``), the
decoded JSON value itself (:data:`JsonValue`: in practice the message's ``dict``).

A transport is *not* responsible for JSON parsing, ids, requests, ACP methods or timeouts; it
knows nothing about what the frames mean.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING, Protocol, TypeAlias

from .._durations import Duration, to_seconds

if TYPE_CHECKING:
    from ..session.completion import Completion

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "AcpTransport",
    "Frame",
    "FrameReceiver",
    "JsonValue",
    "TransportClosed",
]

_log = logging.getLogger("rxacp.transport")

DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Default cap on one incoming line (64 MiB)."""

JsonValue: TypeAlias = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None
"""A decoded JSON value, as :func:`json.loads` returns it."""

Frame: TypeAlias = bytes | JsonValue
"""One message: a UTF-8 JSON line without its newline (``bytes``: every byte transport), or its
decoded value (transports with ``carries_objects``, the in-memory fast path)."""


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class TransportClosed:
    """Why a transport closed; passed to :meth:`FrameReceiver.on_closed`.

    ``error`` is set when the stream failed rather than ended cleanly; ``exit_code`` and
    ``stderr_tail`` when the peer was a process the transport spawned (left out of the repr:
    it is the peer's output).
    """

    reason: str
    _: dataclasses.KW_ONLY
    error: BaseException | None = None
    exit_code: int | None = None
    stderr_tail: str | None = dataclasses.field(default=None, repr=False)


class FrameReceiver(Protocol):
    """What a transport calls, always on the connection's event loop.

    Every method is declared here, the optional flow-control pair included, so a transport
    calls them directly (no attribute probing) and mypy checks every receiver against them.
    """

    def on_frame(self, frame: Frame) -> None:
        """One complete incoming message (a line without newline, or a decoded value)."""

    def on_frame_too_large(self, size: int) -> None:
        """An incoming line exceeded the cap and was discarded up to its newline."""

    def on_closed(self, info: TransportClosed) -> None:
        """The incoming stream ended (EOF, error, peer exit or close). Called exactly once."""

    # Flow control: optional for a receiver. A class that subclasses FrameReceiver explicitly
    # inherits these no-op defaults; a structural one must define them (mypy checks it).

    def on_write_paused(self) -> None:
        """The transport's outgoing buffer passed its high-water mark (the peer is not reading
        fast enough): stop producing for now. Transports with a bounded write buffer call it
        (both stdio transports, the agent-side WebSocket ones). Default: nothing."""
        return None

    def on_write_resumed(self) -> None:
        """The outgoing buffer drained below its low-water mark after :meth:`on_write_paused`
        (or the stream ended): produce again. Default: nothing."""
        return None


class AcpTransport(abc.ABC):
    """Base class of every transport. Subclasses implement the four abstract methods.

    Lifecycle: ``await start(loop, receiver)`` once → any number of ``send(frame)`` →
    ``await close()`` (idempotent). ``send`` and ``close`` are only called on the loop passed to
    ``start``.
    """

    #: True when the transport carries decoded values instead of bytes (in-memory fast path).
    carries_objects: bool = False

    #: True when :meth:`cork` / :meth:`uncork` batch writes (the engine then corks the
    #: transport around each batch of loop hand-offs).
    batches_writes: bool = False

    @abc.abstractmethod
    async def start(self, loop: asyncio.AbstractEventLoop, receiver: FrameReceiver) -> None:
        """Begin moving frames; incoming frames go to ``receiver`` on ``loop``."""

    @abc.abstractmethod
    def send(self, frame: Frame) -> None:
        """Queue one outgoing frame; never blocks. After close it is dropped silently."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop at once: release the stream (and the process, if spawned). Idempotent.

        ``receiver.on_closed`` is called (if it was not already) before this returns.
        """

    async def drain(self) -> None:  # noqa: B027 - optional hook with a sensible default
        """Wait until queued outgoing frames are handed to the OS (used by graceful close)."""

    def cork(self) -> None:  # noqa: B027 - optional hook with a sensible default
        """Hold the frames sent from now on until the matching :meth:`uncork` (then write them
        at once). Only called when :attr:`batches_writes` is true. Default: no batching."""

    def uncork(self) -> None:  # noqa: B027 - optional hook with a sensible default
        """End one :meth:`cork`; the outermost one writes what was held."""

    def pause_reading(self) -> None:  # noqa: B027 - optional hook with a sensible default
        """Stop reading incoming data for now (the engine's inbox is full: consumers fell
        behind). Frames already read may still be delivered. Default: keep reading."""

    def resume_reading(self) -> None:  # noqa: B027 - optional hook with a sensible default
        """Read again after :meth:`pause_reading`."""

    def started_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop :meth:`start` was called with (``None`` before it). Default: ``None``;
        rxacp's transports return it, which :meth:`close_gracefully` needs."""
        return None

    def close_gracefully(self, timeout: Duration | None = None) -> Completion:
        """Flush queued frames (:meth:`drain`, bounded by ``timeout``: a ``timedelta`` or
        seconds, default 10 s), then :meth:`close`, on the loop the transport runs on; returns
        the close's :class:`~rxacp.session.Completion` (Java's transport
        ``closeGracefully()``), already started::

            close_gracefully() ──▶ --None|     (transport closed)

        Off that loop the call returns once the transport closed (at most ``timeout`` + 5 s);
        on it the close is scheduled and the completion settles when it finished. A transport
        never started (or whose loop is gone) has nothing to close: ``--None|`` at once.
        Usually the client or agent that owns the transport closes it; this is for tests and
        for transports driven by hand.
        """
        # The one use of the session layer here: the lifecycle result type every close shares.
        from ..session.completion import Completion

        bound = to_seconds(timeout, name="timeout") or 10.0
        loop = self.started_loop()
        if loop is None or loop.is_closed() or not loop.is_running():
            return Completion.of_done("transport close")

        async def graceful() -> None:
            try:
                await asyncio.wait_for(self.drain(), bound)
            except TimeoutError:
                _log.warning("transport close: drain did not finish within %.1f s", bound)
            await self.close()

        completion = Completion.of_awaitable(loop, graceful, "transport close")
        if not _runs(loop):
            completion.wait(bound + 5.0)
        return completion


def _runs(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
