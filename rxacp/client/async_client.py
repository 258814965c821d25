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
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from reactivex import operators as ops
from reactivex.disposable import Disposable

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..errors import AcpCapabilityException, AcpTimeoutException
from ..roles.handlers import check_ext_method
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
from ..session import AcpObservable, AcpSession, Completion
from ._calls import (
    CONTENT_CAPABILITIES,
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpProtocolVersionException,
    ClosesGracefully,
    RequestLike,
    coerce,
    sent_on_subscribe,
    stoppable,
)
from ._plain_calls import PlainCalls
from .cancellation import CancellationSignal
from .handlers import ClientHandlers, KnownSessions, PermissionTracker
from .read_model import SessionState
from .session_states import SessionStates
from .streams import UpdateStream
from .turns import SettlingTurns, with_updates

if TYPE_CHECKING:
    from ..schema.v2 import InitializeRequest as InitializeRequestV2
    from ..schema.v2 import PromptRequest as PromptRequestV2

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


def defer_send(client: AcpAsyncClient, method: str, request: Any) -> AcpObservable[Any]:
    """``client._send(method, request)`` decided at subscription: a method the connection's
    version does not have errors there (cold, like every call), instead of at call time."""

    def subscribe(observer: Any, scheduler: Any = None) -> Any:
        try:
            source = client._send(method, request)
        except Exception as exc:
            observer.on_error(exc)
            return Disposable()
        return source.subscribe(observer, scheduler=scheduler)

    return AcpObservable(subscribe)


def _wants_v2(request: Any) -> bool:
    version = (
        request.get("protocolVersion")
        if isinstance(request, Mapping)
        else getattr(request, "protocol_version", None)
    )
    return isinstance(version, int) and not isinstance(version, bool) and version >= 2


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
        session_states: SessionStates | None = None,
        handlers: ClientHandlers | None = None,
        protocol_v2: bool = False,
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
        self._settling = SettlingTurns(session, self._cancel_now)
        self._states = session_states
        self._handlers = handlers
        self._protocol_v2 = protocol_v2
        self._protocol_version = 1
        self._methods: Mapping[str, m.MethodSpec] = m.METHODS
        self._content_capabilities: Mapping[str, str] = CONTENT_CAPABILITIES

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
    def protocol_version(self) -> int:
        """The connection's ACP protocol version: 1, or 2 once ``initialize`` negotiated the
        v2 Draft (opt-in: the builder's ``protocol_v2()``; see :mod:`rxacp.client.v2`)."""
        return self._protocol_version

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
        spec = self._spec(method)
        params = coerce(spec, request)
        kwargs: dict[str, Any] = {} if timeout is _DEFAULT else {"timeout": timeout}
        if on_abandon is not None:
            kwargs["on_abandon"] = on_abandon
        hooks = self._states.hooks(method) if self._states is not None else None
        start = hooks.start if hooks is not None else None

        def before() -> None:
            self._gate(spec, params)
            if start is not None:
                start(params, None)

        # one Observable: the gate runs at each subscription, before anything is sent
        sessions = self._sessions
        if sessions is not None and method in _TRACKED:
            source = self._tracked(sessions, method, params, spec, kwargs, before)
        else:
            if sessions is not None:
                named = getattr(params, "session_id", None)
                if named is not None:  # a prompt...: this client's session (no pipe: hot)
                    sessions.add(str(named))
            source = self._session.send_request(  # spec.name: v2 renamed some methods
                spec.name, params, spec.result_type, before=before, **kwargs
            )
        if hooks is None:
            return source
        answer, end = hooks.answer, hooks.end
        if answer is not None:
            source = source.pipe(ops.do_action(on_next=lambda result: answer(params, result)))
        if end is not None:
            source = source.pipe(ops.finally_action(lambda: end(params, None)))
        return source

    def _tracked(
        self,
        sessions: KnownSessions,
        method: str,
        params: Any,
        spec: m.MethodSpec,
        kwargs: dict[str, Any],
        gate: Callable[[], None],
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
            gate()
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
            spec.name, params, spec.result_type, before=before, **kwargs
        )
        tracked: AcpObservable[Any] = source.pipe(
            ops.do_action(on_next=on_next, on_error=on_error), ops.finally_action(settled)
        )
        return tracked

    def _spec(self, method: str) -> m.MethodSpec:
        spec = self._methods.get(method)
        if spec is None and self._protocol_version == 2:
            from .v2 import V1_NAMES

            spec = self._methods.get(V1_NAMES.get(method, ""))
            if spec is None:
                raise AcpCapabilityException(
                    method, f"{method} does not exist in ACP v2 (this connection); nothing sent"
                )
        if spec is None:
            raise AcpCapabilityException(method, f"unknown ACP method {method!r}; nothing sent")
        return spec

    def _gate(self, spec: m.MethodSpec, params: AcpModel) -> None:
        caps = self._agent_capabilities
        if caps is None:
            return  # not initialized: nothing negotiated to check against
        if spec.capability is not None:
            caps.require(spec.capability)
        if spec.name == m.SESSION_PROMPT:
            for block in getattr(params, "prompt", None) or ():
                needed = self._content_capabilities.get(getattr(block, "type", ""))
                if needed is not None and not caps.supports(needed):
                    raise AcpCapabilityException(
                        needed,
                        f"the agent did not advertise {needed!r}, so a prompt with "
                        f"{getattr(block, 'type', '?')!r} content cannot be sent; nothing was sent",
                    )

    # ------------------------------------------------------------------ initialization
    def initialize(
        self, request: InitializeRequest | InitializeRequestV2 | RequestLike | None = None
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
        if (self._protocol_v2 and request is None) or (request is not None and _wants_v2(request)):
            from . import v2

            return v2.initialize(self, request)
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
        params = coerce(self._spec(m.SESSION_CLOSE), request)
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
        self,
        request: PromptRequest | PromptRequestV2 | RequestLike,
        stop: CancellationSignal | None = None,
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
        self,
        request: PromptRequest | PromptRequestV2 | RequestLike,
        stop: CancellationSignal | None = None,
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

    def session_state(self, session_id: str) -> AcpObservable[SessionState]:
        """A **hot** Observable of the session's read model: its latest
        :class:`~rxacp.client.SessionState` at subscription, then a new snapshot after every
        ``session/update`` of the session (and after this client's ``session/new``/``load``/
        ``resume``/``set_mode``/``set_config_option`` answers for it); completes when the
        connection ends or this client closed or deleted the session::

            updates(sid)        ──n1─────n2─────n3──|
            session_state(sid)  S0─S1────S2─────S3──|
            subscribed later           S1─S2─────S3──|   (replays the latest first)

        ``client.session_state(sid).subscribe(render)`` is a UI. Updates are folded as they
        arrive, watched or not, so those the agent sends before its ``session/new`` answer
        (e.g. ``available_commands_update``) are in the first snapshot. Emitted on the
        connection's loop (or on the subscribing thread for the replay); do not block there.
        Needs the builder's ``track_session_states()`` (the read model is off by default;
        without it this raises ``RuntimeError`` saying so).
        """
        return self._require_states().observable(str(session_id))

    def _require_states(self) -> SessionStates:
        if self._states is None:
            raise RuntimeError(
                "this client keeps no read model: build it with track_session_states() (off by "
                "default), or fold updates(session_id) with fold_session_state()"
            )
        return self._states

    def _prompt(
        self,
        request: PromptRequest | PromptRequestV2 | RequestLike,
        stop: CancellationSignal | None,
        updates: bool,
        hold: Callable[[], Any] | None = None,
    ) -> AcpObservable[Any]:
        if self._protocol_version == 2:
            from . import v2

            turn = v2.prompt_turn(self, request, stop)
            return turn if updates else v2.last_update(turn)
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
        return stoppable(source, stop, lambda: self._cancel_now(session_id))

    def cancel_tool_call(self, request: RequestLike | AcpModel) -> AcpObservable[Any]:
        """ACP v2 ``tool_call/cancel`` (a tool call whose ``capabilities.cancel`` the agent
        advertised); on a v1 connection it errors with ``AcpCapabilityException``, nothing
        sent::

            ──request──▶ ─────R|
        """
        return defer_send(self, "tool_call/cancel", request)

    def cancel_terminal(self, request: RequestLike | AcpModel) -> AcpObservable[Any]:
        """ACP v2 ``terminal/cancel`` (an agent-owned display terminal that advertised it);
        on a v1 connection it errors with ``AcpCapabilityException``, nothing sent::

            ──request──▶ ─────R|
        """
        return defer_send(self, "terminal/cancel", request)

    def cancel(self, notification: CancelNotification | RequestLike | str) -> AcpObservable[Any]:
        """A cold Observable that sends ``session/cancel`` for a session (a
        ``CancelNotification`` or a session id) when subscribed, then completes, like every
        other call (``await client.cancel(sid)`` sends it). The notification is checked at call
        time. With it this client answers its pending ``session/request_permission`` requests
        of that session with outcome ``cancelled``, disposing their handlers (spec: the client
        MUST do so); both are written before the turn's answer can be read::

            subscribe ──session/cancel, permission answers──▶ |
        """
        spec = m.METHODS[m.SESSION_CANCEL]
        note = coerce(
            spec, {"sessionId": notification} if isinstance(notification, str) else notification
        )
        return sent_on_subscribe(
            lambda: self._cancel_now(str(getattr(note, "session_id", "")), note)
        )

    def _cancel_now(self, session_id: str, note: Any = None) -> None:
        """Send ``session/cancel``, then answer the session's pending permission requests
        ``cancelled`` (any thread). Both are written in one step on the loop, so the turn's
        answer (which the agent sends after it got the cancel) cannot be read in between.
        """
        body = {"sessionId": session_id} if note is None else note

        def cancel_and_answer() -> None:
            self._session.send_notification(m.SESSION_CANCEL, body)
            self._permissions.cancel_session(session_id)

        self._session.runner.call(cancel_and_answer)

    # ------------------------------------------------------------------ extensions
    def ext_method(self, method: str, params: Any = None) -> AcpObservable[Any]:
        """Call an extension method (its name must start with ``_``); emits the raw result::

        ──request──▶ ─────R|       (R: the result JSON)
        """
        check_ext_method(method)
        return self._session.send_request(method, {} if params is None else params, None)

    def ext_notification(self, method: str, params: Any = None) -> AcpObservable[Any]:
        """A cold Observable that sends an extension notification (name must start with ``_``,
        checked at call time) when subscribed, then completes::

            subscribe ──notification──▶ |
        """
        check_ext_method(method)
        body = {} if params is None else params
        return sent_on_subscribe(lambda: self._session.send_notification(method, body))

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close at once: pending calls error with ``AcpConnectionException``. Idempotent."""
        self._session.close()

    def close_gracefully(self, timeout: Duration | None = None) -> Completion:
        """Let queued notifications drain and writes flush, then close (bounded by ``timeout``,
        a ``timedelta`` or seconds, default the request timeout). Idempotent.

        Returns the close's :class:`~rxacp.session.Completion`, already started (Java
        ``closeGracefully()``: ``client.close_gracefully().block(timeout)`` works)::

            close_gracefully() ──▶ --None|     (connection ended)

        Off the connection's loop it returns once the connection ended; on the loop the close
        is scheduled and the completion settles when it finished.
        """
        return self._session.close_gracefully(timeout)

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
