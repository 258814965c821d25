"""The negotiated, gated sending under :class:`~rxacp.client.AcpAsyncClient`: ``initialize``
(version check, recorded capabilities), the one generic :meth:`GatedCalls._send` every call
goes through (params coerced, capability gate at subscription, read-model hooks, session
bookkeeping), and the connection's negotiated state.

This module is *not* responsible for the calls with behaviour of their own (the prompt turn,
``session/cancel``, ``session/close``, extensions, lifecycle: ``async_client.py``) or for the
wire protocol (``rxacp.session``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from reactivex import operators as ops
from reactivex.disposable import Disposable

from .._durations import Duration
from ..capabilities import NegotiatedCapabilities
from ..errors import AcpCapabilityException, AcpTimeoutException
from ..schema import AcpModel, InitializeRequest, InitializeResponse
from ..schema import methods as m
from ..session import AcpObservable, AcpSession
from ._calls import (
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpProtocolVersionException,
    RequestLike,
    coerce,
)
from ._plain_calls import PlainCalls
from ._tracking import TRACKED, KnownSessions
from .session_states import SessionStates

if TYPE_CHECKING:
    from ..schema.v2 import InitializeRequest as InitializeRequestV2
    from .async_client import AcpAsyncClient

__all__ = ["GatedCalls", "defer_send"]

_DEFAULT: Any = object()


def defer_send(client: GatedCalls, method: str, request: Any) -> AcpObservable[Any]:
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


class GatedCalls(PlainCalls):
    """The base of :class:`~rxacp.client.AcpAsyncClient` that negotiates and sends (its
    ``__init__`` sets these fields)."""

    _session: AcpSession
    _client_capabilities: Any
    _client_info: Any
    _stderr_tail: Callable[[], str | None] | None
    _sessions: KnownSessions | None
    _states: SessionStates | None
    _protocol_v2: bool
    _protocol_version: int
    _methods: Mapping[str, m.MethodSpec]
    _content_capabilities: Mapping[str, str]
    _agent_capabilities: NegotiatedCapabilities | None
    _initialize_response: InitializeResponse | None

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

    def _send(
        self,
        method: str,
        request: Any,
        *,
        timeout: Duration | None = _DEFAULT,
        on_abandon: Any = None,
    ) -> AcpObservable[Any]:
        """The cold Observable of one client→agent request, typed and gated by ``METHODS``."""
        spec = self._methods.get(method) or self._spec(method)
        params = coerce(spec, request)
        kwargs: dict[str, Any] = {} if timeout is _DEFAULT else {"timeout": timeout}
        if on_abandon is not None:
            kwargs["on_abandon"] = on_abandon
        hooks = self._states.hooks(method) if self._states is not None else None
        start = hooks.start if hooks is not None else None
        gate = self._gate

        def before() -> None:
            gate(spec, params)
            if start is not None:
                start(params, None)

        def send(hook: Callable[[], None]) -> AcpObservable[Any]:  # spec.name: v2 renames
            return self._session.send_request(
                spec.name, params, spec.result_type, before=hook, **kwargs
            )

        # one Observable: the gate runs at each subscription, before anything is sent
        sessions = self._sessions
        if sessions is not None and method in TRACKED:
            source = sessions.tracked(method, params, send, before)
        else:
            named = getattr(params, "session_id", None)
            if sessions is not None and named is not None:  # a prompt...: (no pipe: hot)
                sessions.add(named if type(named) is str else str(named))
            source = send(before)
        if hooks is None:
            return source
        answer, end = hooks.answer, hooks.end
        if answer is not None:
            source = source.pipe(ops.do_action(on_next=lambda result: answer(params, result)))
        if end is not None:
            source = source.pipe(ops.finally_action(lambda: end(params, None)))
        return source

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

            return v2.initialize(cast("AcpAsyncClient", self), request)  # the only subclass
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
