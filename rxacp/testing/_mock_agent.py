"""``MockAcpAgent``: a scriptable fake ACP agent for testing *clients*.

It is a real rxacp agent (``AcpAgent.sync`` underneath, so prompt turns follow the SDK's rules:
``session/cancel`` answers ``cancelled``, one turn per session) whose answers come from a
script the test sets up, and which records every frame it receives and sends.

This module is *not* responsible for testing agents (see ``_mock_client.py``), for transports
(it wraps whatever it is given, by default one end of an :class:`InMemoryTransportPair`), or for
checking that canned answers are valid: a canned wire ``dict`` is sent as is, so tests can feed a
client malformed answers on purpose.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import reactivex

from rxacp._durations import Duration, wait_seconds
from rxacp.agent import AcpAgent, AcpSyncAgent, SyncPromptContext
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    AcpModel,
    CancelNotification,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
)
from rxacp.schema.helpers import agent_message_text, session_update_from_wire
from rxacp.schema.methods import METHODS, MethodSpec
from rxacp.session import AcpSession, IncomingRequest
from rxacp.transport.base import AcpTransport

from ._mock_peer import UNSCRIPTED, MockPeer
from ._traffic import describe_messages
from .memory import InMemoryTransport

if TYPE_CHECKING:
    from ._mock_builders import MockAcpAgentBuilder

__all__ = ["DEFAULT_PROMPT_CAPABILITIES", "MockAcpAgent", "PromptScript"]

PromptScript = Callable[[PromptRequest, SyncPromptContext], Any]
"""``fn(request, ctx)`` run on a worker thread for each prompt; returns a ``PromptResponse``,
a stop-reason ``str`` or ``None`` (``end_turn``); may block and use the whole context API."""

DEFAULT_PROMPT_CAPABILITIES: dict[str, Any] = {
    "image": True,
    "audio": True,
    "embeddedContext": True,
}
"""``promptCapabilities`` a mock agent advertises unless told otherwise (it accepts anything)."""

_NOT_SCRIPTABLE = {"initialize": "", "session/prompt": "use mock.on_prompt(...)"}


def _check_method(method: str) -> MethodSpec | None:
    if not isinstance(method, str):
        raise TypeError(f"method must be a str, got {type(method).__name__}")
    if method.startswith("_"):
        return None
    spec = METHODS.get(method)
    if spec is None:
        raise ValueError(
            f"unknown ACP method {method!r}: script one of the agent methods "
            f"({', '.join(s.name for s in METHODS.values() if s.side == 'agent')}) "
            "or an extension method starting with '_'"
        )
    if spec.side != "agent":
        raise ValueError(
            f"{method!r} is answered by the client, not the agent: script it on a MockAcpClient"
        )
    if spec.kind != "request":
        raise ValueError(f"{method!r} is a notification and gets no answer; see mock.received")
    if method == "session/prompt":
        raise ValueError("script prompt turns with mock.on_prompt(...), not mock.on()")
    return spec


def _as_update(item: Any) -> Any:
    if isinstance(item, str):
        return agent_message_text(item)
    if isinstance(item, Mapping):
        return session_update_from_wire(dict(item))
    return item


class MockAcpAgent(MockPeer):
    """A fake agent whose answers are scripted and whose traffic is recorded.

    Without a ``transport`` it creates an :class:`InMemoryTransportPair`, serves its agent end
    and exposes :attr:`client_transport` for the client under test::

        with MockAcpAgent() as agent:
            agent.on_prompt(updates=["Hello", " world"], stop_reason="end_turn")
            client = AcpClient.sync(agent.client_transport).build()
            ...
            agent.expect_prompts(1)

    Answers: ``initialize`` advertises what was scripted (``loadSession`` once ``session/load``
    is, and so on) unless ``agent_capabilities`` is given; ``session/new`` answers a fresh id
    ``mock-session-N``; other unscripted methods answer their empty response when it has no
    required field, else ``-32601`` naming the method to script. The agent starts at once and
    :meth:`close` (or leaving the ``with`` block) stops it and joins its threads.
    """

    _own_end = "agent"

    def __init__(
        self,
        transport: AcpTransport | None = None,
        *,
        agent_capabilities: AcpModel | Mapping[str, Any] | None = None,
        agent_info: Implementation | Mapping[str, Any] | None = None,
        request_timeout: Duration | None = 5.0,
        cancel_grace_period: Duration | None = 5.0,
        timeout: Duration = 5.0,
    ) -> None:
        super().__init__(transport)
        self._timeout = timeout = wait_seconds(timeout, default=5.0)
        self._prompt_script: PromptScript = _canned_turn((), "end_turn", False, timeout)
        self._capabilities = _wire_or_none(agent_capabilities)
        self._info = _wire_or_none(agent_info) or {"name": "mock-agent", "version": "0"}
        self._ids = itertools.count(1)
        self._closed = threading.Event()
        builder = (
            AcpAgent.sync(self._recording)
            .request_timeout(request_timeout)
            .cancel_grace_period(cancel_grace_period)
            .initialize_handler(self._initialize)
            .prompt_handler(self._prompt)
        )
        for spec in METHODS.values():
            setter = getattr(builder, f"{spec.python_name}_handler", None)
            scriptable = spec.side == "agent" and spec.kind == "request"
            if scriptable and setter is not None and spec.name not in _NOT_SCRIPTABLE:
                setter(self._handler_for(spec))
        self._agent: AcpSyncAgent = builder.build()
        self._agent.session.unhandled_request_hint = lambda method: (
            f"MockAcpAgent: script it with mock.on({method!r}, ...)"
        )
        self._agent.start()

    # ------------------------------------------------------------------ wiring
    @property
    def client_transport(self) -> InMemoryTransport:
        """The client end of the in-memory pair (only when the mock created the pair)."""
        return self._other_end()

    @property
    def agent(self) -> AcpSyncAgent:
        """The running rxacp agent underneath (for advanced use)."""
        return self._agent

    # ------------------------------------------------------------------ scripting
    def on(self, method: str, answer: Any) -> MockAcpAgent:
        """Script the answer of the agent method ``method`` (replacing any earlier script).

        ``answer`` is a response model, a wire ``dict`` (sent as is), an exception to answer
        with (``AcpProtocolException`` keeps its code), or a callable ``fn(request_model)``
        returning/raising one of those, run on a worker thread. Extension methods (``_name``)
        get the raw params. Returns the mock, for chaining.
        """
        spec = _check_method(method)
        self._set_script(method, answer)
        if spec is None:
            self._serve_extension(method)
        elif not self._agent.session.has_request_handler(method):
            self._agent.session.set_request_handler(method, self._raw_handler(spec))
        return self

    def on_prompt(
        self,
        script: PromptScript | None = None,
        *,
        updates: Iterable[Any] = (),
        stop_reason: str = "end_turn",
        wait_for_cancel: bool = False,
    ) -> MockAcpAgent:
        """Script every following prompt turn.

        Either a callable ``script(request, ctx)`` (see :data:`PromptScript`), or canned
        ``updates`` (``str`` → an ``agent_message_chunk``; a ``SessionUpdate`` model or its
        wire dict) sent in order, then ``stop_reason``. With ``wait_for_cancel`` the turn,
        after its updates, waits for ``session/cancel`` and is answered ``cancelled`` (after
        the mock's ``timeout`` without a cancel it errors ``-32603`` instead).
        """
        if script is not None:
            if not callable(script):
                raise TypeError("on_prompt takes a callable script(request, ctx)")
            if updates or wait_for_cancel or stop_reason != "end_turn":
                raise ValueError("give on_prompt either a script or canned updates, not both")
        else:
            PromptResponse.of(stop_reason)  # validates the stop reason now
            script = _canned_turn(
                [_as_update(u) for u in updates], stop_reason, wait_for_cancel, self._timeout
            )
        with self._scripts_lock:
            self._prompt_script = script
        return self

    # ------------------------------------------------------------------ recordings
    @property
    def prompts(self) -> list[PromptRequest]:
        """Every ``session/prompt`` request received, parsed."""
        return [PromptRequest.from_wire(p) for p in self.calls("session/prompt")]

    def expect_received(
        self, method: str, count: int = 1, timeout: Duration | None = None
    ) -> list[Any]:
        """Wait until ``count`` ``method`` messages arrived; return all their raw params.

        Raises ``AssertionError`` saying what arrived instead if ``timeout`` (a ``timedelta``
        or seconds; default: the mock's) passes first.
        """
        bound = wait_seconds(timeout, default=self._timeout)

        def check() -> list[Any] | None:
            params = [p for m, p in self._traffic.received() if m == method]
            return params if len(params) >= count else None

        def describe() -> str:
            seen = self._traffic.received()
            got = sum(1 for m, _ in seen if m == method)
            return (
                f"MockAcpAgent expected {count} {method} message(s) within {bound} s but got "
                f"{got}; received: {describe_messages(seen)}"
            )

        return self._traffic.wait_until(check, bound, describe)

    def expect_prompts(self, count: int, timeout: Duration | None = None) -> list[PromptRequest]:
        """Wait until ``count`` prompts arrived (bounded); return every prompt, parsed."""
        params = self.expect_received("session/prompt", count, timeout)
        return [PromptRequest.from_wire(p) for p in params]

    # ------------------------------------------------------------------ Java kit parity
    @staticmethod
    def builder(transport: AcpTransport | None = None) -> MockAcpAgentBuilder:
        """A builder with the Java kit's methods in snake_case (Java
        ``MockAcpAgent.builder(transport)``); the keyword arguments of the constructor work
        as well. ``transport`` defaults to a new in-memory pair (see :attr:`client_transport`)::

            agent = (MockAcpAgent.builder()
                     .initialize_response(InitializeResponse.ok())
                     .prompt_response(lambda req: PromptResponse.end_turn())
                     .build())
        """
        from ._mock_builders import MockAcpAgentBuilder

        return MockAcpAgentBuilder(transport)

    def start(self) -> MockAcpAgent:
        """Nothing to do: the mock runs from construction on (Java ``start()``)."""
        return self

    def send_session_update(self, session_id: str, update: Any) -> None:
        """Send a ``session/update`` to the client outside any prompt turn (Java
        ``sendSessionUpdate``). ``update``: a ``SessionUpdate`` model, its wire dict, or a
        ``str`` (an ``agent_message_chunk``)."""
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty str, got {session_id!r}")
        self._agent.send_session_update(
            SessionNotification(session_id=session_id, update=_as_update(update))
        )

    def get_received_init_requests(self) -> list[InitializeRequest]:
        """Every ``initialize`` request received, parsed (Java ``getReceivedInitRequests``)."""
        return [InitializeRequest.from_wire(p) for p in self.calls("initialize")]

    def get_received_new_session_requests(self) -> list[NewSessionRequest]:
        """Every ``session/new`` request received, parsed."""
        return [NewSessionRequest.from_wire(p) for p in self.calls("session/new")]

    def get_received_prompts(self) -> list[PromptRequest]:
        """Every ``session/prompt`` received, parsed (same as :attr:`prompts`)."""
        return self.prompts

    def get_received_cancellations(self) -> list[CancelNotification]:
        """Every ``session/cancel`` notification received, parsed."""
        return [CancelNotification.from_wire(p) for p in self.calls("session/cancel")]

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Stop the agent (held turns are released) and join its threads. Idempotent."""
        self._closed.set()
        self._agent.close()

    # ------------------------------------------------------------------ answering
    @property
    def _engine(self) -> AcpSession:
        return self._agent.session

    def _answer(self, spec: MethodSpec | None, method: str, request: Any) -> Any:
        script = self._script(method)
        if script is UNSCRIPTED:
            return self._default(spec, method)
        return self._play(script, request)

    def _answer_extension(self, method: str, params: Any) -> Any:
        return self._answer(None, method, params)

    def _default(self, spec: MethodSpec | None, method: str) -> Any:
        if method == "session/new":
            return NewSessionResponse(session_id=f"mock-session-{next(self._ids)}")
        if spec is not None and spec.result_type is not None:
            try:
                return spec.result_type()
            except ValueError:
                pass
        raise AcpProtocolException.method_not_found(
            method, f"MockAcpAgent: script it with mock.on({method!r}, ...)"
        )

    def _handler_for(self, spec: MethodSpec) -> Callable[[Any], Any]:
        return lambda request: self._answer(spec, spec.name, request)

    def _raw_handler(self, spec: MethodSpec) -> Callable[[IncomingRequest], Any]:
        def handle(req: IncomingRequest) -> reactivex.Observable[Any]:
            def run() -> Any:
                params = spec.params_type.from_wire(req.params or {}) if spec.params_type else None
                return self._answer(spec, spec.name, params)

            return self._agent.session.run_blocking(run)

        return handle

    def _initialize(self, request: InitializeRequest) -> Any:
        if self._script("initialize") is not UNSCRIPTED:
            return self._answer(METHODS["initialize"], "initialize", request)
        return InitializeResponse.ok(self._advertised(), agent_info=self._info)

    def _advertised(self) -> dict[str, Any]:
        if self._capabilities is not None:
            return self._capabilities
        caps: dict[str, Any] = {"promptCapabilities": dict(DEFAULT_PROMPT_CAPABILITIES)}
        for method in self._scripted_methods():
            spec = METHODS.get(method)
            if spec is None or spec.capability is None:
                continue
            *parents, leaf = spec.capability.split(".")
            node = caps
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = True if spec.capability == "loadSession" else {}
        return caps

    def _prompt(self, request: PromptRequest, ctx: SyncPromptContext) -> Any:
        with self._scripts_lock:
            script = self._prompt_script
        result = script(request, ctx)
        if result is None:
            return PromptResponse.end_turn()
        if isinstance(result, str):
            return PromptResponse.of(result)
        if isinstance(result, BaseException):
            raise result
        return result


def _wire_or_none(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, AcpModel):
        return value.to_wire()
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"expected a schema model or a wire dict, got {type(value).__name__}")


def _canned_turn(
    updates: Iterable[Any], stop_reason: str, wait_for_cancel: bool, timeout: float
) -> PromptScript:
    frozen = list(updates)

    def turn(request: PromptRequest, ctx: SyncPromptContext) -> Any:
        for update in frozen:
            ctx.send_update(update)
        if wait_for_cancel:
            cancelled = threading.Event()
            ctx.on_cancel(cancelled.set)
            if not cancelled.wait(timeout):
                raise AcpProtocolException.internal_error(
                    f"MockAcpAgent: no session/cancel within {timeout} s (wait_for_cancel=True)"
                )
            return PromptResponse.cancelled()
        return PromptResponse.of(stop_reason)

    return turn
