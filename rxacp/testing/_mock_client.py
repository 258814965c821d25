"""``MockAcpClient``: a scriptable fake ACP client for testing *agents*.

It is a real rxacp client (``AcpClient.sync`` underneath) that auto-initializes, serves canned
files, permission answers and terminals to the agent under test, records every
``session/update`` and every frame, and offers bounded, assertion-friendly conveniences
(``prompt(text)``, ``expect_updates(n)``, ``prompt_and_cancel_after(n)``).

This module is *not* responsible for starting agents (``_agents.py``), for testing clients
(``_mock_agent.py``) or for transports.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rxacp._durations import Duration, wait_seconds
from rxacp.client import AcpClient, AcpSyncClient, CancellationSignal
from rxacp.schema import (
    AcpModel,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionRequest,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    RequestPermissionRequest,
    SessionNotification,
    WriteTextFileRequest,
)
from rxacp.schema.methods import METHODS
from rxacp.session import AcpSession
from rxacp.transport.base import AcpTransport

from ._client_answers import DEFAULT_CLIENT_CAPABILITIES, CannedClientAnswers
from ._mock_peer import UNSCRIPTED, MockPeer
from ._traffic import PendingCall, describe_messages, summarize
from .memory import InMemoryTransport

if TYPE_CHECKING:
    from ._mock_builders import MockAcpClientBuilder

__all__ = ["DEFAULT_CLIENT_CAPABILITIES", "MockAcpClient"]

_CLIENT_REQUESTS = [s for s in METHODS.values() if s.side == "client" and s.kind == "request"]


class MockAcpClient(MockPeer, CannedClientAnswers):
    """A fake client that drives an agent under test and records what the agent does.

    Without a ``transport`` it creates an :class:`InMemoryTransportPair` and exposes
    :attr:`agent_transport` for the agent; :meth:`connect` also starts the agent for you::

        with MockAcpClient.connect(lambda t: AcpAgent.sync(t).prompt_handler(echo)) as client:
            assert client.prompt("hi").stop_reason == "end_turn"
            assert client.text() == "hi"

    The first call that needs it sends ``initialize`` (with ``client_capabilities``, default
    :data:`DEFAULT_CLIENT_CAPABILITIES`); :meth:`prompt` creates a session if there is none.
    It serves the agent's requests from construction on. Every wait is bounded by ``timeout``
    (default 5 s) and fails with an ``AssertionError`` describing what was seen. :meth:`close`
    closes the client and whatever :meth:`connect` started.
    """

    _own_end = "client"

    def __init__(
        self,
        transport: AcpTransport | None = None,
        *,
        client_capabilities: ClientCapabilities | Mapping[str, Any] | None = None,
        client_info: Implementation | Mapping[str, Any] | None = None,
        auto_initialize: bool = True,
        request_timeout: Duration | None = 5.0,
        timeout: Duration = 5.0,
        cwd: str = "/",
    ) -> None:
        MockPeer.__init__(self, transport)
        CannedClientAnswers.__init__(self)
        self.timeout: float = wait_seconds(timeout, default=5.0)
        """The bound of every wait, in seconds (given as a ``timedelta`` or seconds)."""
        self.cwd = cwd
        self._auto_initialize = auto_initialize
        self._updates: list[SessionNotification] = []
        self._closers: list[Callable[[], None]] = []
        self._init_lock = threading.Lock()
        self.session_id: str | None = None
        """The session :meth:`prompt` uses by default (the last one :meth:`new_session` made)."""
        builder = (
            AcpClient.sync(self._recording)
            .request_timeout(request_timeout)
            .client_capabilities(
                DEFAULT_CLIENT_CAPABILITIES if client_capabilities is None else client_capabilities
            )
            .session_update_consumer(self._on_update)
        )
        if client_info is not None:
            builder.client_info(client_info)
        for spec in _CLIENT_REQUESTS:
            setter = getattr(builder, f"{spec.python_name}_handler", None)
            if setter is not None:
                setter(self._handler(spec.name))
        self.client: AcpSyncClient = builder.build()
        """The rxacp client underneath (full API; ``client.async_client`` for Observables)."""
        self.client.session.start()  # serve agent requests even before our first call

    @classmethod
    def connect(cls, agent: Any, **options: Any) -> MockAcpClient:
        """A client connected in memory to a freshly started ``agent`` (closed with it).

        ``agent`` is a factory ``fn(transport)`` returning an agent builder, an agent or a
        decorator-agent builder; an ``@acp_agent`` object or class; or an
        ``AcpAgentSupportBuilder`` without a transport. ``options`` go to the constructor.
        """
        from ._agents import start_agent

        client = cls(**options)
        try:
            started = start_agent(agent, client.agent_transport)
        except BaseException:
            client.close()
            raise
        client._closers.append(started.close)
        client.agent = started
        return client

    agent: Any = None
    """The agent :meth:`connect` started (``None`` otherwise)."""

    @property
    def agent_transport(self) -> InMemoryTransport:
        """The agent end of the in-memory pair (only when the mock created the pair)."""
        return self._other_end()

    # ------------------------------------------------------------------ protocol calls
    def initialize(self) -> InitializeResponse:
        """Send ``initialize`` now (normally done by the first call that needs it)."""
        with self._init_lock:
            response = self.client.initialize()
        return response

    def _ensure_initialized(self) -> None:
        if not self._auto_initialize:
            return
        with self._init_lock:
            if self.client.initialize_response is None:
                self.client.initialize()

    def new_session(self, cwd: str | None = None, **fields: Any) -> str:
        """``session/new`` (``cwd`` defaults to the mock's); returns and remembers the id."""
        self._ensure_initialized()
        request = NewSessionRequest.from_wire({"cwd": cwd or self.cwd, "mcpServers": [], **fields})
        self.session_id = self.client.new_session(request).session_id
        return self.session_id

    def _session(self, session_id: str | None) -> str:
        if session_id is not None:
            return session_id
        return self.session_id if self.session_id is not None else self.new_session()

    def _request(self, prompt: str | PromptRequest | Sequence[Any], session_id: str) -> Any:
        if isinstance(prompt, PromptRequest):
            return prompt
        if isinstance(prompt, str):
            return PromptRequest.text(session_id, prompt)
        blocks = [b.to_wire() if isinstance(b, AcpModel) else b for b in prompt]
        return PromptRequest.from_wire({"sessionId": session_id, "prompt": blocks})

    def prompt(
        self,
        prompt: str | PromptRequest | Sequence[Any],
        *,
        session_id: str | None = None,
        timeout: Duration | None = None,
    ) -> PromptResponse:
        """Send a prompt (text, a ``PromptRequest`` or content blocks) and wait for its answer.

        Uses :attr:`session_id` (creating a session if needed). Every update of the turn is in
        :attr:`updates` when this returns. Raises the agent's error, or ``AssertionError`` if no
        answer came within ``timeout`` (the prompt is then disposed: ``$/cancel_request``).
        """
        self._ensure_initialized()
        request = self._request(prompt, self._session(session_id))
        call = PendingCall(self.client.async_client.prompt(request), self._traffic)
        response: PromptResponse = call.result(
            self._bound(timeout), lambda: self._seen("answer to session/prompt")
        )
        self.client._flush_consumers(self._bound(timeout))  # the turn's updates are recorded
        return response

    def cancel(self, session_id: str | None = None) -> None:
        """Send ``session/cancel`` for ``session_id`` (default: :attr:`session_id`)."""
        sid = session_id or self.session_id
        if sid is None:
            raise ValueError("no session to cancel: create one with new_session() first")
        self.client.cancel(sid)

    def prompt_and_cancel_after(
        self,
        n_updates: int,
        prompt: str | PromptRequest | Sequence[Any] = "hello",
        *,
        session_id: str | None = None,
        timeout: Duration | None = None,
    ) -> PromptResponse:
        """Prompt, wait for ``n_updates`` updates of that session, cancel, return the answer.

        ``AssertionError`` if the turn ends before ``n_updates`` updates, or the updates or the
        answer do not arrive within ``timeout``.
        """
        if n_updates < 0:
            raise ValueError(f"n_updates must be >= 0, got {n_updates}")
        self._ensure_initialized()
        sid = self._session(session_id)
        bound = self._bound(timeout)
        base = len(self.updates_for(sid))
        stop = CancellationSignal()
        call = PendingCall(
            self.client.async_client.prompt(self._request(prompt, sid), stop), self._traffic
        )

        def enough() -> bool | None:
            return True if call.done or len(self._updates_for(sid)) >= base + n_updates else None

        try:
            self._traffic.wait_until(enough, bound, lambda: self._seen(f"{n_updates} update(s)"))
        except AssertionError:
            call.dispose()
            raise
        if call.done:
            self.client._flush_consumers(bound)  # every update before the answer is recorded
        if call.done and len(self.updates_for(sid)) < base + n_updates:
            got = len(self.updates_for(sid)) - base
            raise AssertionError(
                f"the prompt was answered ({call.describe()}) after {got} update(s), before "
                f"the {n_updates} update(s) to cancel after"
            )
        stop.cancel()
        response: PromptResponse = call.result(
            bound, lambda: self._seen("answer to the cancelled prompt")
        )
        self.client._flush_consumers(bound)
        return response

    # ------------------------------------------------------------------ recordings
    @property
    def updates(self) -> list[SessionNotification]:
        """Every ``session/update`` received, in order."""
        with self._traffic.cond:
            return list(self._updates)

    def _updates_for(self, session_id: str) -> list[SessionNotification]:
        return [u for u in self._updates if u.session_id == session_id]

    def updates_for(self, session_id: str | None = None) -> list[SessionNotification]:
        """The updates of one session (default: :attr:`session_id`)."""
        sid = session_id or self.session_id
        with self._traffic.cond:
            return self._updates_for(sid) if sid is not None else []

    def text(self, session_id: str | None = None) -> str:
        """The concatenated text of the ``agent_message_chunk`` updates (of one session, or
        of all sessions when neither ``session_id`` nor :attr:`session_id` is set)."""
        sid = session_id or self.session_id
        source = self.updates if sid is None else self.updates_for(sid)
        parts = []
        for note in source:
            update = note.update
            content = getattr(update, "content", None)
            if getattr(update, "session_update", None) == "agent_message_chunk" and isinstance(
                getattr(content, "text", None), str
            ):
                parts.append(content.text)  # type: ignore[union-attr]
        return "".join(parts)

    def expect_updates(
        self, count: int, timeout: Duration | None = None, *, session_id: str | None = None
    ) -> list[SessionNotification]:
        """Wait until ``count`` updates arrived (of ``session_id`` if given); return them all.

        ``AssertionError`` describing what arrived if ``timeout`` passes first.
        """
        bound = self._bound(timeout)

        def check() -> list[SessionNotification] | None:
            got = self._updates if session_id is None else self._updates_for(session_id)
            return list(got) if len(got) >= count else None

        def describe() -> str:
            where = "" if session_id is None else f" for session {session_id}"
            got = self._updates if session_id is None else self._updates_for(session_id)
            kinds = [str(getattr(u.update, "session_update", "?")) for u in got]
            return (
                f"MockAcpClient expected {count} session/update(s){where} within {bound} s but "
                f"got {len(got)} ({summarize(kinds)}); "
                f"received: {describe_messages(self._traffic.received())}"
            )

        return self._traffic.wait_until(check, bound, describe)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the client, then everything :meth:`connect` started. Idempotent."""
        self.client.close()
        closers, self._closers = self._closers, []
        for closer in reversed(closers):
            closer()

    # ------------------------------------------------------------------ internals
    def _bound(self, timeout: Duration | None) -> float:
        return wait_seconds(timeout, default=self.timeout)

    def _seen(self, what: str) -> str:
        kinds = [str(getattr(u.update, "session_update", "?")) for u in self.updates]
        return (
            f"MockAcpClient: no {what} within the time limit; updates so far: "
            f"{len(kinds)} ({summarize(kinds)}); "
            f"received: {describe_messages(self._traffic.received())}"
        )

    def _on_update(self, notification: SessionNotification) -> None:
        with self._traffic.cond:
            self._updates.append(notification)
            self._traffic.cond.notify_all()

    # ------------------------------------------------------------------ Java kit parity
    @staticmethod
    def builder(transport: AcpTransport | None = None) -> MockAcpClientBuilder:
        """A builder with the Java kit's methods in snake_case (Java
        ``MockAcpClient.builder(transport)``); the constructor's keyword arguments work too::

            client = (MockAcpClient.builder(transport)
                      .permission_response(lambda req: RequestPermissionResponse.selected("allow"))
                      .file_content("/path/to/file.txt", "file contents")
                      .build())
        """
        from ._mock_builders import MockAcpClientBuilder

        return MockAcpClientBuilder(transport)

    def get_received_updates(self) -> list[SessionNotification]:
        """Every ``session/update`` received (Java ``getReceivedUpdates``; :attr:`updates`)."""
        return self.updates

    def get_received_permission_requests(self) -> list[RequestPermissionRequest]:
        """Every permission request the agent made (:attr:`permission_requests`)."""
        with self._answers_lock:
            return list(self.permission_requests)

    def get_received_file_read_requests(self) -> list[ReadTextFileRequest]:
        """Every ``fs/read_text_file`` request, parsed."""
        return [ReadTextFileRequest.from_wire(p) for p in self.calls("fs/read_text_file")]

    def get_received_file_write_requests(self) -> list[WriteTextFileRequest]:
        """Every ``fs/write_text_file`` request, parsed."""
        return [WriteTextFileRequest.from_wire(p) for p in self.calls("fs/write_text_file")]

    def get_current_session_id(self) -> str | None:
        """The session :meth:`prompt` uses (:attr:`session_id`)."""
        return self.session_id

    # ------------------------------------------------------------------ answering
    def _handler(self, method: str) -> Callable[[Any], Any]:
        return lambda request: self.answer(method, request)

    def on(self, method: str, answer: Any) -> MockAcpClient:
        """Script the answer to the agent→client request ``method`` (replacing the canned one).

        ``answer``: a response model, a wire dict, an exception, or ``fn(request)`` returning
        or raising one of those (run on a worker thread). Extension methods (``_name``) get the
        raw params. Returns the mock.
        """
        spec = METHODS.get(method)
        if not method.startswith("_") and (
            spec is None or spec.side != "client" or spec.kind != "request"
        ):
            names = ", ".join(s.name for s in _CLIENT_REQUESTS)
            raise ValueError(f"{method!r} is not a client request; script one of: {names}")
        self._set_script(method, answer)
        if method.startswith("_"):
            self._serve_extension(method)
        return self

    def answer(self, method: str, request: Any) -> Any:
        """The answer to one agent→client request (a script, else the canned behaviour)."""
        script = self._script(method)
        if script is UNSCRIPTED:
            return self.canned_answer(method, request)
        return self._play(script, request)

    @property
    def _engine(self) -> AcpSession:
        return self.client.session

    def _answer_extension(self, method: str, params: Any) -> Any:
        return self.answer(method, params)
