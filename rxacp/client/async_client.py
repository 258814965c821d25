"""``AcpAsyncClient``: every client→agent ACP method as a cold, awaitable Observable.

One generic :meth:`AcpAsyncClient._send` does the per-method plumbing from the schema's method
table (params/result models, capability gate); the calls that are nothing more are
one-line descriptors of :class:`~rxacp.client._plain_calls.PlainCalls`, its base. This
module holds the calls with behaviour of their own: ``initialize``'s negotiation,
``session/close``'s listeners, the prompt turn (:class:`~rxacp.client.CancellationSignal`
handling, prompt-content gating), ``session/cancel``, extensions, and the lifecycle.

Observables returned here are :class:`~rxacp.session.AcpObservable`\\ s: nothing is sent until
subscription; disposing before the answer sends ``$/cancel_request``; they can be awaited from
any asyncio loop. Values are emitted on the connection's loop thread: do not block there.

This module is *not* responsible for the wire protocol (``rxacp.session``), for handling
agent→client requests (``handlers.py``) or for blocking (``sync_client.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from reactivex import operators as ops

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..errors import AcpCapabilityException, AcpTimeoutException
from ..schema import (
    AcpModel,
    CancelNotification,
    CloseSessionRequest,
    CloseSessionResponse,
    InitializeRequest,
    InitializeResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
)
from ..schema import methods as m
from ..session import AcpObservable, AcpSession
from ..session.adapters import check_ext_method
from ._calls import (
    CONTENT_CAPABILITIES,
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpProtocolVersionException,
    ClosesGracefully,
    RequestLike,
    coerce,
    completed,
    stoppable,
)
from ._plain_calls import PlainCalls
from .cancellation import CancellationSignal
from .handlers import KnownSessions, PermissionTracker
from .streams import UpdateStream
from .turns import SettlingTurns, with_updates

__all__ = [
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AcpAsyncClient",
    "AcpProtocolVersionException",
    "RequestLike",
]

_DEFAULT: Any = object()
_CREATING = frozenset((m.SESSION_NEW, m.SESSION_FORK))
"""Calls whose answer names a new session (added to ``KnownSessions``)."""
_TRACKED = _CREATING | {m.SESSION_LOAD, m.SESSION_RESUME, m.SESSION_CLOSE}
"""Calls whose outcome changes ``KnownSessions`` (:meth:`AcpAsyncClient._tracked`)."""
_log = logging.getLogger("rxacp.client")


class AcpAsyncClient(PlainCalls, ClosesGracefully):
    """An ACP client whose calls return cold Observables (build it with ``AcpClient.async_``).

    Every call is lazy: subscribing sends the request, disposing before the answer sends
    ``$/cancel_request``. ``await client.new_session(req)`` works from any asyncio loop.

    After :meth:`initialize`, methods gated by a capability the agent did not advertise
    (``loadSession``, ``sessionCapabilities.list`` ...) error with
    :class:`~rxacp.errors.AcpCapabilityException` and send nothing; so do prompts with image,
    audio or embedded-resource content the agent's ``promptCapabilities`` exclude.
    """

    def __init__(
        self,
        session: AcpSession,
        *,
        client_capabilities: Any,
        client_info: Any,
        prompt_timeout: Duration | None,
        permissions: PermissionTracker,
        sessions: KnownSessions | None = None,
        session_closed_listeners: Sequence[Callable[[str], object]] = (),
        stderr_tail: Callable[[], str | None] | None = None,
        update_stream: UpdateStream | None = None,
    ) -> None:
        self._session = session
        self._updates = update_stream if update_stream is not None else UpdateStream()
        self._client_capabilities = client_capabilities
        self._client_info = client_info
        self._prompt_timeout = to_seconds(prompt_timeout, name="prompt_timeout")
        self._permissions = permissions
        self._sessions = sessions
        self._session_closed_listeners = tuple(session_closed_listeners)
        self._stderr_tail = stderr_tail
        self._agent_capabilities: NegotiatedCapabilities | None = None
        self._initialize_response: InitializeResponse | None = None
        self._settling = SettlingTurns(session, self.cancel)

    # ------------------------------------------------------------------ state
    @property
    def session(self) -> AcpSession:
        """The JSON-RPC engine of this connection (advanced use)."""
        return self._session

    @property
    def agent_capabilities(self) -> NegotiatedCapabilities | None:
        """What the agent advertised in ``initialize`` (``None`` before it answered)."""
        return self._agent_capabilities

    @property
    def initialize_response(self) -> InitializeResponse | None:
        """The agent's ``initialize`` answer (``None`` before it answered)."""
        return self._initialize_response

    @property
    def client_capabilities(self) -> Any:
        """The capabilities the no-argument :meth:`initialize` advertises (wire JSON)."""
        return self._client_capabilities

    @property
    def prompt_timeout(self) -> float | None:
        """Bound of a prompt turn in seconds (``None``: unbounded, the default)."""
        return self._prompt_timeout

    @property
    def pending_permission_requests(self) -> int:
        """Incoming ``session/request_permission`` requests not answered yet."""
        return self._permissions.pending_count()

    # ------------------------------------------------------------------ plumbing
    def _send(
        self,
        method: str,
        request: Any,
        *,
        timeout: Duration | None = _DEFAULT,
        on_abandon: Any = None,
    ) -> AcpObservable[Any]:
        """The cold Observable of one client→agent request, typed and gated by ``METHODS``."""
        spec = m.METHODS[method]
        params = coerce(spec, request)
        kwargs: dict[str, Any] = {} if timeout is _DEFAULT else {"timeout": timeout}
        if on_abandon is not None:
            kwargs["on_abandon"] = on_abandon
        # one Observable: the gate runs at each subscription, before anything is sent
        sessions = self._sessions
        if sessions is not None:
            if method in _TRACKED:
                return self._tracked(sessions, method, params, spec, kwargs)
            named = getattr(params, "session_id", None)
            if named is not None:  # a prompt...: the session is this client's (no pipe: hot)
                sessions.add(str(named))
        return self._session.send_request(
            method, params, spec.result_type, before=lambda: self._gate(spec, params), **kwargs
        )

    def _tracked(
        self,
        sessions: KnownSessions,
        method: str,
        params: Any,
        spec: m.MethodSpec,
        kwargs: dict[str, Any],
    ) -> AcpObservable[Any]:
        """A call that creates, attaches or ends a session, kept in :class:`KnownSessions`
        (the agent's requests for any other session are refused): ``session/new`` and
        ``session/fork`` add the answered id (and accept any id while unanswered),
        ``session/load`` and ``session/resume`` theirs when sent (dropped if refused), and
        ``session/close`` drops it once answered. Any other call naming a session (a
        prompt...) adds it when the call is made (:meth:`_send`)."""
        named = str(getattr(params, "session_id", "") or "")
        creates = method in _CREATING
        sent = [False]

        def before() -> None:
            self._gate(spec, params)
            sent[0] = True
            if creates:
                sessions.creating(+1)
            elif method != m.SESSION_CLOSE:
                sessions.add(named)

        def settled() -> None:
            if sent[0] and creates:
                sent[0] = False
                sessions.creating(-1)

        def on_next(result: Any) -> None:
            if creates:
                sessions.add(str(getattr(result, "session_id", "")))
            elif method == m.SESSION_CLOSE:
                sessions.discard(named)

        def on_error(_error: Exception) -> None:
            if method in (m.SESSION_LOAD, m.SESSION_RESUME):
                sessions.discard(named)

        source = self._session.send_request(
            method, params, spec.result_type, before=before, **kwargs
        )
        tracked: AcpObservable[Any] = source.pipe(
            ops.do_action(on_next=on_next, on_error=on_error), ops.finally_action(settled)
        )
        return tracked

    def _gate(self, spec: m.MethodSpec, params: AcpModel) -> None:
        caps = self._agent_capabilities
        if caps is None:
            return  # not initialized: nothing negotiated to check against
        if spec.capability is not None:
            caps.require(spec.capability)
        if spec.name == m.SESSION_PROMPT:
            for block in getattr(params, "prompt", None) or ():
                needed = CONTENT_CAPABILITIES.get(getattr(block, "type", ""))
                if needed is not None and not caps.supports(needed):
                    raise AcpCapabilityException(
                        needed,
                        f"the agent did not advertise {needed!r}, so a prompt with "
                        f"{getattr(block, 'type', '?')!r} content cannot be sent; nothing was sent",
                    )

    # ------------------------------------------------------------------ initialization
    def initialize(
        self, request: InitializeRequest | RequestLike | None = None
    ) -> AcpObservable[InitializeResponse]:
        """``initialize``: negotiate the protocol version and exchange capabilities.

        Without ``request``, sends protocol version 1 with the builder's client capabilities and
        client info. On the answer, records :attr:`agent_capabilities` (enabling capability
        gating) and checks the agent's protocol version: an unsupported one closes the
        connection and errors with :class:`AcpProtocolVersionException`::

            subscribe ──initialize──▶
            answer    ───────────────R|      (R: InitializeResponse)
            bad version ─────────────X       (AcpProtocolVersionException)
        """
        if request is None:
            request = InitializeRequest.of(
                self._client_capabilities,
                protocol_version=LATEST_PROTOCOL_VERSION,
                client_info=self._client_info,
            )
        params = coerce(m.METHODS[m.INITIALIZE], request)
        requested = int(getattr(params, "protocol_version", LATEST_PROTOCOL_VERSION))

        def initialized(response: InitializeResponse) -> InitializeResponse:
            return self._on_initialized(requested, response)

        source: AcpObservable[InitializeResponse] = self._send(m.INITIALIZE, params).pipe(
            ops.map(initialized), ops.catch(self._with_stderr_tail)
        )
        return source

    def _with_stderr_tail(self, error: Exception, _: Any) -> Any:
        """An ``initialize`` timeout says what a spawned agent wrote to stderr (as its exit
        does): an agent stuck on a login prompt or a missing key usually says so there."""
        tail = self._stderr_tail() if self._stderr_tail is not None else None
        if isinstance(error, AcpTimeoutException) and tail and error.stderr_tail is None:
            raise AcpTimeoutException(
                error.method, error.timeout_seconds, stderr_tail=tail
            ) from error
        raise error

    def _on_initialized(self, requested: int, response: InitializeResponse) -> InitializeResponse:
        version = response.protocol_version
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            self._session.close()
            raise AcpProtocolVersionException(
                requested, version, tuple(sorted(SUPPORTED_PROTOCOL_VERSIONS))
            )
        self._initialize_response = response
        self._agent_capabilities = NegotiatedCapabilities(
            response.agent_capabilities or {},
            version,
            peer="agent",
            peer_info=response.agent_info,
        )
        return response

    # ------------------------------------------------------------------ sessions
    def close_session(
        self, request: CloseSessionRequest | RequestLike
    ) -> AcpObservable[CloseSessionResponse]:
        """``session/close`` (gated by ``sessionCapabilities.close``)::

        ──request──▶ ─────R|
        """
        params = coerce(m.METHODS[m.SESSION_CLOSE], request)
        source = self._send(m.SESSION_CLOSE, params)
        if not self._session_closed_listeners:
            return source
        session_id = str(getattr(params, "session_id", ""))
        closed: AcpObservable[CloseSessionResponse] = source.pipe(
            ops.do_action(on_completed=lambda: self._session_closed(session_id))
        )
        return closed

    def _session_closed(self, session_id: str) -> None:
        for listener in self._session_closed_listeners:
            try:
                listener(session_id)
            except Exception:
                _log.exception("a session-closed listener failed")

    # ------------------------------------------------------------------ prompt turn
    def prompt(
        self, request: PromptRequest | RequestLike, stop: CancellationSignal | None = None
    ) -> AcpObservable[PromptResponse]:
        """``session/prompt``: one prompt turn. Its ``session/update``\\ s reach the consumers
        before the answer is emitted. Not bounded by the request timeout, only by the builder's
        ``prompt_timeout`` (off by default)::

            subscribe ──prompt──▶
            updates   ──u──u──u──R|                  (R: PromptResponse)
            stop.cancel()  ──u──C──u──R(cancelled)|  (C: session/cancel, sent once)
            stop already cancelled: R(cancelled)|    (nothing sent: "cancelled" means it did
                                                      not happen, or the peer was told)
            dispose   ──u──|  → session/cancel, then $/cancel_request (each once, if written)

        ``stop.cancel()`` after the answer sends nothing. Cancelling also answers this
        session's pending permission requests ``cancelled`` (see :meth:`cancel`).

        Disposal (directly, ``take_until``, ``timeout``, the ``prompt_timeout``, Ctrl-C in the
        blocking client) ends the subscriber at once; the agent's late answer is discarded, and
        the session's next prompt is held until that answer arrived (at most
        :data:`~rxacp.client.turns.SETTLE_BOUND` seconds), so the agent has ended the old turn
        when it gets the new one. Disposal after the answer sends nothing.
        """
        return self._prompt(request, stop, updates=False)

    def prompt_turn(
        self, request: PromptRequest | RequestLike, stop: CancellationSignal | None = None
    ) -> AcpObservable[AcpModel]:
        """``session/prompt`` as a stream: every ``SessionUpdate`` of the turn (the models, in
        order), then the ``PromptResponse``, then completion. Cold: each subscription is a new
        turn, and only updates that arrive while it is in flight are its own::

            subscribe ──prompt──▶
            emits     ──u──u──u──R|               (u: SessionUpdate; R: PromptResponse)
            stop.cancel()  ──u──C──u──R(cancelled)|   (C: session/cancel, sent once)
            dispose   ──u──|  → session/cancel, then $/cancel_request (each once, if written)

        Disposal cancels the turn exactly as for :meth:`prompt` (and the session's next prompt
        waits until the agent ended it); ``stop`` works as for :meth:`prompt`. The updates
        also reach the registered consumers and :meth:`updates` subscribers. Emitted on the
        connection's loop; do not block there.
        """
        return self._prompt(request, stop, updates=True)

    def updates(self, session_id: str | None = None) -> AcpObservable[SessionNotification]:
        """A **hot** Observable of every ``SessionNotification`` this client receives (only
        ``session_id``'s when given), in arrival order, emitted on the connection's loop before
        the consumers see it. Subscribing late sees only later updates; it completes when the
        connection ends::

            updates()         ──n──n──n──n──n──|
            updates("s1")     ──n─────n─────n──|      (s1's only)
            subscribed later         ──n──n──|

        A subscriber runs on the loop: a slow one delays the connection (and so the reading of
        the agent's output, which is the back-pressure). ``observe_on`` hands updates to another
        thread through RxPY's own unbounded queue.
        """
        return self._updates.observable(session_id)

    def _prompt(
        self,
        request: PromptRequest | RequestLike,
        stop: CancellationSignal | None,
        updates: bool,
        hold: Callable[[], Any] | None = None,
    ) -> AcpObservable[Any]:
        params = coerce(m.METHODS[m.SESSION_PROMPT], request)
        session_id = str(getattr(params, "session_id", ""))
        settling = self._settling
        source = self._send(
            m.SESSION_PROMPT,
            params,
            timeout=self._prompt_timeout,
            on_abandon=lambda: settling.abandon(session_id),
        )
        if updates:
            source = with_updates(self._updates, session_id, source, hold)
        source = settling.hold(session_id, source, stop)
        # stop, and a RequestCancellation.cancel_when trigger: session/cancel, keep the answer
        return stoppable(source, stop, lambda: self.cancel(session_id))

    def cancel(self, notification: CancelNotification | RequestLike | str) -> AcpObservable[Any]:
        """Send ``session/cancel`` for a session (a ``CancelNotification`` or a session id).

        Sent **at call time** (a notification has no answer to wait for); the returned
        Observable just completes, so ``await client.cancel(sid)`` works. It also answers this
        client's pending ``session/request_permission`` requests of that session with outcome
        ``cancelled`` at once, disposing their handlers (spec: the client MUST do so)::

            call ──session/cancel──▶   returns: |
        """
        spec = m.METHODS[m.SESSION_CANCEL]
        note = coerce(
            spec, {"sessionId": notification} if isinstance(notification, str) else notification
        )
        session_id = str(getattr(note, "session_id", ""))
        self._session.send_notification(m.SESSION_CANCEL, note)
        self._permissions.cancel_session(session_id)
        return completed()

    # ------------------------------------------------------------------ extensions
    def ext_method(self, method: str, params: Any = None) -> AcpObservable[Any]:
        """Call an extension method (its name must start with ``_``); emits the raw result::

        ──request──▶ ─────R|       (R: the result JSON)
        """
        check_ext_method(method)
        return self._session.send_request(method, {} if params is None else params, None)

    def ext_notification(self, method: str, params: Any = None) -> AcpObservable[Any]:
        """Send an extension notification (name must start with ``_``) at call time; the
        returned Observable just completes::

            call ──notification──▶   returns: |
        """
        check_ext_method(method)
        self._session.send_notification(method, {} if params is None else params)
        return completed()

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close at once: pending calls error with ``AcpConnectionException``. Idempotent."""
        self._session.close()

    def close_gracefully(self, timeout: Duration | None = None) -> None:
        """Let queued notifications drain and writes flush, then close (bounded by ``timeout``,
        default the request timeout). Idempotent."""
        self._session.close_gracefully(to_seconds(timeout, name="timeout"))

    async def aclose(self, timeout: Duration | None = None) -> None:
        """Close gracefully from asyncio code (any loop) and wait until the connection ended."""
        await self._session.aclose(to_seconds(timeout, name="timeout"))

    async def __aenter__(self) -> AcpAsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
