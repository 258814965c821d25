"""``AcpSyncClient``: the blocking shell over :class:`~rxacp.client.AcpAsyncClient`.

Each call subscribes to the async client's Observable and waits for its outcome with a bound
(the request timeout, or ``prompt_timeout`` for prompts, plus a little slack); it returns the
value or raises the error. If the wait is interrupted (``KeyboardInterrupt``, any exception) or
the bound passes, the subscription is disposed, so the agent is sent ``$/cancel_request``.
The calls that are a plain row of the method table are the blocking twins of the async ones
(:class:`~rxacp.client._plain_calls.SyncPlainCalls`, over this client's ``_send`` and
``_block``); this module holds the ones with behaviour of their own.

This module is *not* responsible for any protocol logic: everything is delegated.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import reactivex

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..errors import AcpTimeoutException
from ..roles.twins import Blocking
from ..schema import methods as m
from ..session import AcpObservable, AcpSession
from ..session._forward import Forwarded, ForwardedProperty
from ..session.blocking import Waiter, wait_for
from ._calls import ClosesGracefully, send_now
from ._plain_calls import SyncPlainCalls
from .async_client import AcpAsyncClient, RequestLike
from .cancellation import CancellationSignal
from .consumers import ConsumerThread
from .read_model import SessionState
from .turns import TurnBuffer

if TYPE_CHECKING:  # models for annotations only
    from .. import schema
    from ..schema.v2 import PromptRequest as PromptRequestV2

__all__ = ["WAIT_SLACK_SECONDS", "AcpSyncClient", "Waiter"]

_T = TypeVar("_T")

_log = logging.getLogger("rxacp.client")

_DEFAULT_WAIT: Waiter = threading.Event.wait

WAIT_SLACK_SECONDS = 5.0
"""Extra time a blocking call waits beyond the engine's own timeout before giving up."""


class AcpSyncClient(SyncPlainCalls, ClosesGracefully):
    """A blocking ACP client (build it with ``AcpClient.sync(transport)``).

    Methods return the agent's answer or raise (``AcpProtocolException``,
    ``AcpCapabilityException``, ``AcpTimeoutException``, ``AcpConnectionException``). Safe to
    call from several threads at once and from request handlers (they run on the worker pool).
    Consumers run one notification after another, in arrival order, never on the loop: on a
    thread that waits in one of this client's blocking calls (it runs them while it waits, so no
    other thread is woken), else on the client's consumer thread (``rxacp-client-consumer-N``).
    A consumer may send ``cancel`` but not make a blocking call.

    Ctrl-C while a call waits disposes it: the agent gets ``$/cancel_request`` and
    ``KeyboardInterrupt`` propagates. (Test seam: ``_wait`` is the :data:`Waiter` used for every
    wait; tests replace it to simulate an interrupt without signals.)
    """

    def __init__(
        self,
        delegate: AcpAsyncClient,
        *,
        request_timeout: Duration | None,
        consumer_thread: ConsumerThread | None = None,
    ) -> None:
        self._async = delegate
        self._request_timeout = to_seconds(request_timeout, name="request_timeout")
        self._consumers = consumer_thread
        self._wait: Waiter = _DEFAULT_WAIT

    # ------------------------------------------------------------------ plumbing
    def _send(self, method: str, params: Any) -> AcpObservable[Any]:
        return self._async._send(method, params)

    def _block(self, source: reactivex.Observable[_T], what: str) -> _T:
        """The one blocking wait of a call: ``source``'s answer, bounded by the request timeout
        (+ :data:`WAIT_SLACK_SECONDS`); the consumers ran for every update before it."""
        return self._block_for(source, what, self._request_timeout)

    def _block_for(self, source: reactivex.Observable[_T], what: str, bound: float | None) -> _T:
        self._check_caller(what)
        limit = None if bound is None else bound + WAIT_SLACK_SECONDS
        consumers = self._consumers
        if consumers is not None and consumers.caller_runs and self._wait is _DEFAULT_WAIT:
            # this thread runs the consumers while it waits (no hop to the consumer thread)
            # and for the updates that came before the answer (its flush)
            wakeup = consumers.new_wakeup()
            waiter = consumers.wait_helping
            return wait_for(source, limit, what=what, waiter=waiter, event=wakeup)
        value = wait_for(source, limit, what=what, waiter=self._wait)
        self._flush_consumers(limit)
        return value

    def _check_caller(self, what: str) -> None:
        if self._async.session.in_loop():
            raise RuntimeError(
                f"AcpSyncClient.{what} called on the connection's own loop thread (from a consumer "
                "or async handler); it would wait for itself. Use the async client there."
            )
        consumers = self._consumers
        if consumers is not None and consumers.on_thread():
            raise RuntimeError(
                f"AcpSyncClient.{what} called from a consumer: the consumer thread would wait "
                "for its own updates. Send notifications (cancel) from a consumer, or hand the "
                "call to another thread."
            )

    def _flush_consumers(self, timeout: float | None) -> None:
        """Updates before the answer: wait until the consumers ran for every notification that
        arrived before the answer just received (bounded; logged if they are that slow)."""
        consumers = self._consumers
        if consumers is not None and not consumers.flush(timeout):
            _log.warning("the session update consumers are %s s behind the answer", timeout)

    def wait_for_consumers(self, timeout: Duration | None = None) -> bool:
        """Wait until the session update consumers ran for every notification received so far.

        The blocking calls do this before they return (updates come before the answer). The
        Observables of :attr:`async_client` emit on the connection's loop, where an answer can
        overtake the consumer thread: call this after waiting on one when the updates must have
        been consumed (this thread runs those still queued while it waits). Returns ``False``
        if ``timeout`` passed first; at once on the consumer thread itself.
        """
        consumers = self._consumers
        return consumers is None or consumers.flush(to_seconds(timeout, name="timeout"))

    # ------------------------------------------------------------------ state
    @property
    def async_client(self) -> AcpAsyncClient:
        """The async client this one blocks on."""
        return self._async

    # the async client's state, the same here (one declaration each, in AcpAsyncClient)
    session = ForwardedProperty[AcpSession]("_async", AcpAsyncClient)
    agent_capabilities = ForwardedProperty[NegotiatedCapabilities | None]("_async", AcpAsyncClient)
    initialize_response = ForwardedProperty["schema.InitializeResponse | None"](
        "_async", AcpAsyncClient
    )
    protocol_version = ForwardedProperty[int]("_async", AcpAsyncClient)
    client_capabilities = ForwardedProperty[Any]("_async", AcpAsyncClient)
    prompt_timeout = ForwardedProperty[float | None]("_async", AcpAsyncClient)
    pending_permission_requests = ForwardedProperty[int]("_async", AcpAsyncClient)

    # ------------------------------------------------------------------ methods
    initialize = Blocking(AcpAsyncClient.initialize, what=m.INITIALIZE)
    close_session = Blocking(AcpAsyncClient.close_session, what=m.SESSION_CLOSE)

    def prompt(
        self,
        request: schema.PromptRequest | PromptRequestV2 | RequestLike,
        stop: CancellationSignal | None = None,
    ) -> schema.PromptResponse:
        """``session/prompt``: blocks until the turn's answer (all its updates were consumed).

        ``stop.cancel()`` from another thread sends ``session/cancel`` once and this call still
        returns the agent's answer (normally ``cancelled``). A signal cancelled before the call
        sends nothing and returns ``PromptResponse.cancelled()``. Bounded only by the builder's
        ``prompt_timeout`` (off by default); Ctrl-C sends ``$/cancel_request``.
        """
        return self._block_for(
            self._async.prompt(request, stop), m.SESSION_PROMPT, self._async.prompt_timeout
        )

    def prompt_turn(
        self,
        request: schema.PromptRequest | PromptRequestV2 | RequestLike,
        stop: CancellationSignal | None = None,
    ) -> Iterator[schema.AcpModel]:
        """``session/prompt`` as an iterator: each ``SessionUpdate`` of the turn, in order, then
        the ``PromptResponse`` (the blocking twin of ``AcpAsyncClient.prompt_turn``)::

            for item in client.prompt_turn(PromptRequest.text(sid, "hi")):
                if isinstance(item, AgentMessageChunk): print(item.content.text, end="")

        Nothing is sent until the first ``next()``; each iteration is a new turn. Leaving the
        loop early (``break`` out of ``for item in client.prompt_turn(...)``, an exception,
        Ctrl-C, or ``close()`` on a kept iterator) disposes the prompt, which cancels the turn
        (``session/cancel`` and ``$/cancel_request``). ``stop`` works as for :meth:`prompt`.
        Bounded by the builder's ``prompt_timeout`` (off by default). When the loop body is
        slower than the agent, at most 256 items wait here and the client stops reading the
        agent meanwhile.
        """
        self._check_caller("prompt_turn")
        buffer = TurnBuffer(self._async.session)
        source = self._async._prompt(request, stop, updates=True, hold=buffer.hold)
        bound = self._async.prompt_timeout
        limit = None if bound is None else bound + WAIT_SLACK_SECONDS
        subscription = source.subscribe(buffer.on_next, buffer.on_error, buffer.on_completed)
        try:
            while True:
                try:
                    kind, value = buffer.take(limit)
                except TimeoutError:
                    raise AcpTimeoutException(m.SESSION_PROMPT, limit or 0.0) from None
                if kind == "c":
                    return
                if kind == "e":
                    raise value
                yield value
        finally:
            buffer.close()
            subscription.dispose()

    def session_state(self, session_id: str) -> SessionState:
        """The session's latest read model snapshot (the blocking twin of
        ``AcpAsyncClient.session_state``, which is the live Observable of them). After a
        blocking call returned, it includes every update that came before that answer —
        including those sent before the ``session/new`` answer. ``RuntimeError`` when the
        builder did not turn the read model on (``track_session_states()``; off by default)."""
        return self._async._require_states().latest(str(session_id))

    cancel_tool_call = Blocking(AcpAsyncClient.cancel_tool_call, what="tool_call/cancel")
    cancel_terminal = Blocking(AcpAsyncClient.cancel_terminal, what="terminal/cancel")

    def cancel(self, notification: schema.CancelNotification | RequestLike | str) -> None:
        """Send ``session/cancel`` (and answer the session's pending permission requests
        ``cancelled`` first)."""
        send_now(self._async.cancel(notification))

    def ext_method(self, method: str, params: Any = None) -> Any:
        """Call an extension method (name starts with ``_``); returns the raw result JSON."""
        return self._block(self._async.ext_method(method, params), method)

    def ext_notification(self, method: str, params: Any = None) -> None:
        """Send an extension notification (name starts with ``_``)."""
        send_now(self._async.ext_notification(method, params))

    # ------------------------------------------------------------------ lifecycle
    wait_closed = Forwarded("_async", AcpAsyncClient.wait_closed)

    def close(self) -> None:
        """Close at once (pending calls raise ``AcpConnectionException``). Idempotent."""
        self._async.close()

    def close_gracefully(self, timeout: Duration | None = None) -> bool:
        """Drain queued notifications (through the consumers) and flush writes, then close.
        Idempotent. Blocks; returns True when the connection ended and the consumers ran
        within the bound (Java's ``AcpSyncClient.closeGracefully()`` → ``boolean``).

        ``timeout``: a ``timedelta`` or seconds (default the request timeout).
        """
        closed = self._async.close_gracefully(timeout)
        flushed = self.wait_for_consumers(to_seconds(timeout, name="timeout") or WAIT_SLACK_SECONDS)
        return closed.done and closed.error is None and flushed
