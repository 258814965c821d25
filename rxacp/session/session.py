"""``AcpSession``: the JSON-RPC engine one ACP connection runs on, for either role.

The contract (DESIGN §3):

* Outgoing requests are **cold** :class:`AcpObservable`\\ s: nothing is sent until subscription;
  each subscription allocates an id and writes one request. A result answer emits the (typed)
  result then completes; an error answer errors with :class:`AcpProtocolException`.
* Disposing before the answer (by the subscriber, ``take_until``, ``timeout`` or the request
  timeout) removes the pending entry and sends ``$/cancel_request`` exactly once, and only if the
  request was written. A late answer is discarded.
* Every pending request settles on every path: EOF, transport error, ``close()`` and
  ``close_gracefully()`` error it with :class:`AcpConnectionException` at once.
* Incoming requests go to registered handlers that return Observables; exactly one answer per
  request whatever races. ``$/cancel_request`` disposes the handler and answers ``-32800``.
* Incoming notifications reach their handlers in arrival order, one finished before the next
  starts; a response is delivered only after the notifications that arrived before it.

Threads: all state lives on the connection's event loop; public methods may be called from any
thread and hand their work to the loop. Timers run on the injectable ``scheduler``. The parts
(``connection.py``: the state machine; ``wire.py``, ``requests.py``, ``inbox.py``, ``dispatch.py``,
``backpressure.py``) are described in ``docs/architecture.md``.

This module is *not* responsible for ACP semantics (capabilities, typed handler registration):
those live in ``rxacp.roles``, ``rxacp.client`` and ``rxacp.agent``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import abc
from reactivex.scheduler.eventloop import AsyncIOThreadSafeScheduler

from .._durations import Duration, to_seconds
from ..errors import AcpConnectionException
from ..transport.base import AcpTransport
from ._forward import Forwarded
from .backpressure import MAX_QUEUED_WRITES, GatedRunner, InboundGate, OutboundGate
from .completion import Completion
from .connection import Connection
from .dispatch import InFlightRequests, RequestHandler
from .inbox import Inbox, NotificationHandler
from .loop import LoopRunner
from .observable import AcpObservable
from .offload import run_blocking
from .requests import CANCEL_REQUEST, PendingRequests
from .state import ConnectionState
from .stats import SessionStats
from .wire import Wire, WireObserver
from .workers import ExecutorWorkers, WorkerPool, WorkerPoolStats

__all__ = ["CANCEL_REQUEST", "AcpSession", "NotificationHandler", "RequestHandler", "SessionStats"]

_T = TypeVar("_T")


class AcpSession:
    """The JSON-RPC engine of one connection (used by both clients and agents).

    Args:
        transport: moves the frames.
        role: ``"client"`` or ``"agent"``; only used in thread names and logs.
        request_timeout: default timeout of outgoing requests (``timedelta`` or seconds; ``0`` or
            ``None`` disables). A request may override it.
        scheduler: runs every timer; default ``AsyncIOThreadSafeScheduler`` on the loop.
        loop: an event loop the caller already runs; default: a new loop on a daemon thread.
        max_workers: size of the pool that runs blocking handlers.
        executor: run blocking handlers on this executor instead of the pool (the
            application owns it; ``max_workers`` is then unused).
        max_queued_writes: back-pressure bound: how many writes other threads may queue for
            the loop before they block (see ``docs/reliability.md``). The default,
            :data:`MAX_QUEUED_WRITES`, is small on purpose: it is also when a producer hands the
            loop the GIL.
        max_queued_notifications: back-pressure bound towards the peer: with this many incoming
            notifications and answers queued behind slow handlers, the transport stops reading
            until a quarter of them are left (see ``docs/reliability.md``).
    """

    def __init__(
        self,
        transport: AcpTransport,
        *,
        role: str = "peer",
        request_timeout: Duration | None = 60.0,
        scheduler: abc.SchedulerBase | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        max_workers: int = 32,
        executor: concurrent.futures.Executor | None = None,
        max_queued_writes: int = MAX_QUEUED_WRITES,
        max_queued_notifications: int = 256,
    ) -> None:
        if isinstance(max_queued_writes, bool) or not isinstance(max_queued_writes, int):
            raise TypeError(f"max_queued_writes must be an int, got {max_queued_writes!r}")
        if max_queued_writes < 1:
            raise ValueError(f"max_queued_writes must be >= 1, got {max_queued_writes}")
        self._transport = transport
        self._role = role
        self.stats = SessionStats()
        """Counters of skipped and refused input, and of producer waits."""
        read_gate = InboundGate(transport, max_queued_notifications, self.stats)
        # a client's own writes never wait behind an agent that stopped reading (see
        # OutboundGate); its handlers, and every producer of an agent, do
        self._gate = OutboundGate(max_queued_writes, self.stats, hold_producers=role != "client")
        self._runner: LoopRunner = GatedRunner(loop, name=f"rxacp-{role}-loop", gate=self._gate)
        if transport.batches_writes:  # one write per batch of hand-offs (measured)
            self._runner.set_batch_hooks(transport.cork, transport.uncork)
        self.scheduler: abc.SchedulerBase = scheduler or AsyncIOThreadSafeScheduler(
            self._runner.loop
        )
        self._workers: WorkerPool | ExecutorWorkers = (
            WorkerPool(max_workers, name=f"rxacp-{role}-worker")
            if executor is None
            else ExecutorWorkers(executor)
        )
        self._conn = ConnectionState()
        self._wire = Wire(
            transport,
            self._conn,
            self._gate,
            self.stats,
            role=role,
        )
        self._pending = PendingRequests(
            self._conn,
            self._runner,
            self.scheduler,
            self._wire.send,
            role=role,
            request_timeout=to_seconds(request_timeout, name="request_timeout"),
            stats=self.stats,
        )
        self._inbox = Inbox(
            self._runner,
            self._pending.deliver,
            role=role,
            gate=read_gate,
        )
        self._in_flight = InFlightRequests(
            self._conn,
            self._runner,
            self._wire.send,
            self._wire.write,
            role=role,
            outbound=self._gate,
            inbound=read_gate,
            max_per_method=max_workers,
            stats=self.stats,
        )
        self._connection = Connection(
            self._conn,
            self._runner,
            transport,
            wire=self._wire,
            gate=self._gate,
            pending=self._pending,
            in_flight=self._in_flight,
            inbox=self._inbox,
            workers=self._workers,
        )
        self._wire.route(self._pending, self._inbox, self._in_flight, self._connection)

    # ------------------------------------------------------------------ properties
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop that drives this connection."""
        return self._runner.loop

    @property
    def owns_loop(self) -> bool:
        """True when the connection runs its own event loop on a daemon thread; False when it
        runs on a loop the caller passed in (or the running loop an async client was built
        in)."""
        return self._runner.owned

    def in_loop(self) -> bool:
        """True when called on the connection's loop thread. Thread-safe."""
        return self._runner.in_loop()

    def run_on_loop(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` on the connection's loop: at once when called there, else queued behind
        every earlier call, in call order. Thread-safe; never blocks (a call queued after the
        loop closed is dropped)."""
        self._runner.call(fn)

    def queue_on_loop(self, fn: Callable[[], object]) -> None:
        """Queue ``fn`` on the connection's loop, never inline, in call order. Thread-safe.
        From another thread it first waits while the outbound buffer is full (the
        back-pressure ``send_notification`` applies); on the loop it never blocks."""
        self._runner.call_later(fn)

    def worker_stats(self, lane: str | None = None) -> WorkerPoolStats | None:
        """The blocking-handler pool's counters (summed over its lanes), or one ``lane``'s
        (``None``: that lane never ran anything, or handlers run on the application's own
        ``handler_executor``, which rxacp cannot observe). Thread-safe."""
        workers = self._workers
        if not isinstance(workers, WorkerPool):
            return None
        return workers.stats() if lane is None else workers.lane_stats(lane)

    @property
    def request_timeout(self) -> float | None:
        """Default timeout of outgoing requests in seconds (``None``: none)."""
        return self._pending.request_timeout

    @property
    def is_open(self) -> bool:
        """True until the connection closed (EOF, error or close)."""
        return not self._conn.refusing

    @property
    def closed_error(self) -> AcpConnectionException | None:
        """Why the connection ended, once it has."""
        return self._conn.error

    @property
    def pending_request_count(self) -> int:
        """Outgoing requests still waiting for an answer."""
        return len(self._pending)

    @property
    def incoming_request_count(self) -> int:
        """Incoming requests not answered yet."""
        return len(self._in_flight)

    @property
    def outbound_paused(self) -> bool:
        """True while the transport's write buffer is over its high-water mark (back-pressure:
        producer threads calling ``send_notification``/``send_update`` wait; see
        ``docs/reliability.md``). Loop-thread producers may poll it."""
        return self._gate.paused

    # ------------------------------------------------------------------ registration
    set_request_handler = Forwarded("_in_flight", InFlightRequests.set_handler)
    """Register the handler of incoming requests for a method (``InFlightRequests.set_handler``)."""

    set_notification_handler = Forwarded("_inbox", Inbox.set_handler)
    """Register the handler of incoming notifications for a method (``Inbox.set_handler``)."""

    @property
    def accept_batches(self) -> bool:
        """Whether incoming JSON-RPC batch arrays are handled (ACP v2 connections) instead of
        answered with one ``-32600`` (v1, the default)."""
        return self._wire.batches

    @accept_batches.setter
    def accept_batches(self, enabled: bool) -> None:
        self._wire.batches = bool(enabled)

    def remove_handler(self, method: str) -> None:
        """Forget the request and notification handlers of ``method`` (a connection whose
        ``initialize`` chose another protocol version registers that version's handlers)."""
        self._in_flight.handlers.pop(method, None)
        self._inbox.handlers.pop(method, None)

    def has_request_handler(self, method: str) -> bool:
        """True when incoming ``method`` requests have a handler."""
        return method in self._in_flight.handlers

    @property
    def unhandled_request_hint(self) -> Callable[[str], str | None] | None:
        """What to add to the ``-32601`` answer of a request without a handler."""
        return self._in_flight.unhandled_hint

    @unhandled_request_hint.setter
    def unhandled_request_hint(self, hint: Callable[[str], str | None] | None) -> None:
        self._in_flight.unhandled_hint = hint

    # ------------------------------------------------------------------ start
    def start(self, timeout: Duration = 30.0) -> Completion:
        """Start the transport. Idempotent and thread-safe; returns the start's
        :class:`Completion` (``--None|`` once started, Java's ``start()`` ``Mono<Void>``).

        From any thread but the loop's it blocks until the transport started (the completion
        is then already done) and raises :class:`AcpConnectionException` if it could not, or
        did not within ``timeout`` (a ``timedelta`` or seconds). On the loop thread it
        schedules the start (frames sent meanwhile are queued) and the completion settles
        when it finished (``--X`` if it failed); :meth:`start_async` waits there too.
        """
        if self._runner.in_loop():
            self._connection.ensure_started()
            return Completion.of_awaitable(self.loop, self.start_async, "start")
        self._connection.start(to_seconds(timeout, name="timeout") or 30.0)
        return Completion.of_done("start")

    async def start_async(self) -> None:
        """Start the transport from code running on the connection's loop, and wait for it."""
        await self._connection.start_async()

    # ------------------------------------------------------------------ close
    def set_wire_observer(self, observer: WireObserver) -> None:
        """Show ``observer`` every message this connection writes (it may add to it, e.g.
        trace context in ``params._meta``) and reads, on the loop; set it before the
        connection starts. Requests are then written in the ``contextvars`` context they were
        subscribed in. ``rxacp.tracing`` installs its tracer here."""
        self._wire.observer = observer
        self._pending.capture_context = True

    def add_close_listener(self, listener: Callable[[AcpConnectionException], None]) -> None:
        """Call ``listener(reason)`` on the loop when the connection ends (now, if it has)."""
        if self._conn.error is not None and self._conn.terminated.is_set():
            listener(self._conn.error)  # already over (the loop may be gone)
        else:
            self._runner.call(lambda: self._conn.add_listener(listener))

    def wait_closed(self, timeout: Duration | None = None) -> bool:
        """Block until the connection ended; False if ``timeout`` (a ``timedelta`` or seconds;
        ``None`` waits as long as it takes) passed first."""
        return self._conn.terminated.wait(to_seconds(timeout, name="timeout"))

    async def wait_closed_async(self) -> None:
        """Wait (in any asyncio loop) until the connection ended.

        When the close was started on the connection's own loop, this also waits for the
        transport to finish closing (for a spawned agent: until the process is gone), so a
        caller's loop may stop right after it.
        """
        await self._connection.wait_closed_async()

    def close(self, timeout: Duration = 10.0) -> None:
        """Close **at once**: pending requests error, handlers are disposed, the transport closes
        (the lifecycle vocabulary: ``close()`` immediate; ``close_gracefully()``, ``aclose()``
        and context managers graceful).

        Idempotent; safe from any thread, including handlers on the loop (then it is scheduled).
        ``timeout`` (a ``timedelta`` or seconds) bounds the wait off the loop.
        """
        self._connection.close(to_seconds(timeout, name="timeout") or 10.0)

    async def aclose(self, timeout: Duration | None = None) -> None:
        """Close gracefully (as :meth:`close_gracefully`) from asyncio code on any loop, and
        wait until the connection ended (on its own loop: until the transport closed too)."""
        if self._runner.in_loop():
            self.close_gracefully(timeout)  # scheduled as a task on this loop
            await self.wait_closed_async()
        else:
            await asyncio.get_running_loop().run_in_executor(None, self.close_gracefully, timeout)

    def close_gracefully(self, timeout: Duration | None = None) -> Completion:
        """Stop taking new work, let queued notifications drain and writes flush, then close;
        returns the close's :class:`Completion` (``--None|`` once the connection ended; Java's
        ``closeGracefully()`` ``Mono<Void>``).

        The drain is bounded by ``timeout`` (a ``timedelta`` or seconds; default: the request
        timeout, or 60 s). Off the loop the call returns once the connection ended (a second
        caller waits for the first close); on the loop the close is scheduled and the
        completion settles when it finished.
        """
        bound = to_seconds(timeout, name="timeout") or self._pending.request_timeout or 60.0
        self._connection.close_gracefully(bound)
        closed = self._connection.closed
        if not self._runner.in_loop() and not closed.wait(2 * bound + 10.0):
            closed.fail(AcpConnectionException(f"close did not finish within {2 * bound + 10:g} s"))
        return closed

    # ------------------------------------------------------------------ requests
    send_request = Forwarded("_pending", PendingRequests.request)
    """A cold Observable of one request's answer: :meth:`PendingRequests.request`, declared
    (signature and docstring) once there."""

    def send_notification(self, method: str, params: Any = None) -> None:
        """Write one notification (from any thread). Dropped with a debug log after close.

        From a thread other than the loop's it waits while the outbound buffer is full
        (back-pressure, see ``docs/reliability.md``); on the loop it never blocks.
        """
        if self._runner.in_loop():
            self._wire.notify(method, params)
        else:
            self._runner.call_later(lambda: self._wire.notify(method, params))

    def run_blocking(
        self, fn: Callable[[], _T], *, name: str | None = None, lane: str | None = None
    ) -> AcpObservable[_T]:
        """A cold Observable that runs ``fn`` on the worker pool and emits its result:
        ``--R|`` or ``--X``; disposing while it runs abandons it (its slot is given back).
        ``lane`` runs it in a lane of its own; it waits to start while the peer is not
        reading. The whole contract: :func:`rxacp.session.offload.run_blocking`.
        """
        return run_blocking(
            self._workers, self.loop, fn, name=name, lane=lane, hold=self._gate.wait_open
        )
