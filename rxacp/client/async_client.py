"""``AcpAsyncClient``: every client→agent ACP method as a cold, awaitable Observable.

Its bases do the rest: :class:`~rxacp.client._gated_calls.GatedCalls` negotiates
(``initialize``) and sends every call through one gated ``_send``; the calls that are nothing
more are one-line descriptors of :class:`~rxacp.client._plain_calls.PlainCalls`. This module
holds the calls with behaviour of their own: ``session/close``'s listeners, the prompt turn
(:class:`~rxacp.client.CancellationSignal` handling), ``session/cancel``, extensions, the
read model's and updates' streams, and the lifecycle.

Observables returned here are :class:`~rxacp.session.AcpObservable`\\ s: nothing is sent until
subscription; disposing before the answer sends ``$/cancel_request``; they can be awaited from
any asyncio loop. Values are emitted on the connection's loop thread: do not block there.

This module is *not* responsible for the wire protocol (``rxacp.session``), for handling
agent→client requests (``handlers.py``) or for blocking (``sync_client.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from reactivex import operators as ops

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..roles.handlers import check_ext_method
from ..schema import (
    AcpModel,
    CancelNotification,
    CloseSessionRequest,
    CloseSessionResponse,
    InitializeResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
)
from ..schema import methods as m
from ..session import AcpObservable, AcpSession, Completion
from ..session._forward import Forwarded
from ._calls import (
    CONTENT_CAPABILITIES,
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpProtocolVersionException,
    ClosesGracefully,
    RequestLike,
    coerce,
    sent_on_subscribe,
    stoppable,
)
from ._gated_calls import GatedCalls, defer_send
from ._tracking import KnownSessions, PermissionTracker
from .cancellation import CancellationSignal
from .handlers import ClientHandlers
from .read_model import SessionState
from .session_states import SessionStates
from .streams import UpdateStream, call_logged
from .turns import SettlingTurns, with_updates

if TYPE_CHECKING:
    from ..schema.v2 import PromptRequest as PromptRequestV2

__all__ = [
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AcpAsyncClient",
    "AcpProtocolVersionException",
    "RequestLike",
]


class AcpAsyncClient(GatedCalls, ClosesGracefully):
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
    def prompt_timeout(self) -> float | None:
        """Bound of a prompt turn in seconds (``None``: unbounded, the default)."""
        return self._prompt_timeout

    @property
    def pending_permission_requests(self) -> int:
        """Incoming ``session/request_permission`` requests not answered yet."""
        return self._permissions.pending_count()

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
            call_logged("a session-closed listener failed", listener, session_id)

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

        self._session.run_on_loop(cancel_and_answer)

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
    # the end of the connection, waited for as on the session (one lifecycle vocabulary)
    wait_closed = Forwarded("session", AcpSession.wait_closed)
    wait_closed_async = Forwarded("session", AcpSession.wait_closed_async)

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
