"""``AcpAsyncAgent`` (Observables) and ``AcpSyncAgent`` (blocking): a running ACP agent.

Both wrap one :class:`AgentCore`. Agent→client calls are gated on the client's advertised
capabilities: a call the client did not advertise raises/emits
:class:`AcpCapabilityException` and nothing is sent.

This module is *not* responsible for configuration (``builder.py``) or for the prompt-turn
rules (``turn.py``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, TypeVar, cast

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..schema import (
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from ..session import AcpObservable, AcpSession
from ..session.adapters import check_ext_method
from ..session.blocking import wait_for
from .context import PromptContext, SyncPromptContext
from .core import AgentConfig, AgentCore

__all__ = ["AcpAsyncAgent", "AcpSyncAgent"]


_R = TypeVar("_R")


class _AgentBase:
    def __init__(self, config: AgentConfig, *, blocking: bool) -> None:
        self._core = AgentCore(config, blocking=blocking)

    @property
    def session(self) -> AcpSession:
        """The underlying JSON-RPC engine (for advanced use and tests)."""
        return self._core.session

    @property
    def client_capabilities(self) -> NegotiatedCapabilities | None:
        """What the client advertised in ``initialize`` (None before it initialized)."""
        return self._core.client_capabilities

    @property
    def active_turns(self) -> int:
        """Number of prompt turns in progress."""
        return len(self._core.turns)

    def start(self) -> None:
        """Start serving the transport (idempotent)."""
        self._core.session.start()

    def run(self) -> None:
        """Serve until the client disconnects or :meth:`close` is called, then clean up.

        Ctrl-C closes the agent (active turns are cancelled) and re-raises.
        """
        self.start()
        try:
            while not self._core.session.wait_closed(0.5):
                pass
        finally:
            self.close()

    def close(self) -> None:
        """Stop **at once**: active turns are cancelled, pending requests error, the transport
        closes (``close_gracefully()``, ``aclose()`` and the context managers are graceful)."""
        self._core.session.close()

    def close_gracefully(self, timeout: Duration | None = None) -> None:
        """Stop taking work, drain queued notifications and writes, then close (bounded by
        ``timeout``, default the request timeout)."""
        self._core.session.close_gracefully(to_seconds(timeout, name="timeout"))

    def ext_notification(self, method: str, params: Any = None) -> None:
        """Send an extension notification (``method`` starts with ``_``)."""
        check_ext_method(method)
        self._core.session.send_notification(method, params)


class AcpAsyncAgent(_AgentBase):
    """An agent whose handlers return Observables; its own calls return cold Observables."""

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, blocking=False)
        self._core.set_context_factory(lambda turn: PromptContext(self._core, turn))

    async def await_termination(self) -> None:
        """Wait until the client disconnects or the agent is closed (Java ``awaitTermination``;
        the session's ``wait_closed_async``)."""
        await self._core.session.wait_closed_async()

    async def aclose(self, timeout: Duration | None = None) -> None:
        """Close gracefully (as :meth:`close_gracefully`) from asyncio code on any loop and
        wait until the connection ended."""
        await self._core.session.aclose(to_seconds(timeout, name="timeout"))

    async def __aenter__(self) -> AcpAsyncAgent:
        self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()  # graceful, like every context manager of rxacp

    def send_session_update(self, notification: SessionNotification) -> None:
        """Send a ``session/update`` outside of a prompt turn (e.g. after ``session/load``)."""
        self._core.notify("session/update", notification)

    def request_permission(
        self, request: RequestPermissionRequest
    ) -> AcpObservable[RequestPermissionResponse]:
        """``session/request_permission``. ``--response|``"""
        return self._core.call("session/request_permission", request)

    def read_text_file(self, request: ReadTextFileRequest) -> AcpObservable[ReadTextFileResponse]:
        """``fs/read_text_file`` (needs ``fs.readTextFile``). ``--response|``"""
        return self._core.call("fs/read_text_file", request)

    def write_text_file(
        self, request: WriteTextFileRequest
    ) -> AcpObservable[WriteTextFileResponse]:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``). ``--response|``"""
        return self._core.call("fs/write_text_file", request)

    def create_terminal(
        self, request: CreateTerminalRequest
    ) -> AcpObservable[CreateTerminalResponse]:
        """``terminal/create`` (needs ``terminal``). ``--response|``"""
        return self._core.call("terminal/create", request)

    def terminal_output(
        self, request: TerminalOutputRequest
    ) -> AcpObservable[TerminalOutputResponse]:
        """``terminal/output`` (needs ``terminal``). ``--response|``"""
        return self._core.call("terminal/output", request)

    def release_terminal(
        self, request: ReleaseTerminalRequest
    ) -> AcpObservable[ReleaseTerminalResponse]:
        """``terminal/release`` (needs ``terminal``). ``--response|``"""
        return self._core.call("terminal/release", request)

    def wait_for_terminal_exit(
        self, request: WaitForTerminalExitRequest
    ) -> AcpObservable[WaitForTerminalExitResponse]:
        """``terminal/wait_for_exit`` (needs ``terminal``). ``--response|``"""
        return self._core.call("terminal/wait_for_exit", request)

    def kill_terminal(self, request: KillTerminalRequest) -> AcpObservable[KillTerminalResponse]:
        """``terminal/kill`` (needs ``terminal``). ``--response|``"""
        return self._core.call("terminal/kill", request)

    def create_elicitation(
        self, request: CreateElicitationRequest
    ) -> AcpObservable[CreateElicitationResponse]:
        """``elicitation/create`` (needs ``elicitation``). ``--response|``"""
        return self._core.call("elicitation/create", request)

    def complete_elicitation(self, notification: CompleteElicitationNotification) -> None:
        """``elicitation/complete`` notification (needs ``elicitation.url``)."""
        self._core.notify("elicitation/complete", notification)

    def ext_method(self, method: str, params: Any = None) -> AcpObservable[Any]:
        """An extension request (``method`` starts with ``_``); emits the raw result::

        subscribe ──request──▶ ───────R|      dispose before R → $/cancel_request
        """
        check_ext_method(method)
        return self._core.session.send_request(method, params)


class AcpSyncAgent(_AgentBase):
    """An agent whose handlers return values (run on worker threads); its calls block."""

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, blocking=True)
        self._core.set_context_factory(lambda turn: SyncPromptContext(self._core, turn))
        self._async = _AsyncView(self._core)

    def __enter__(self) -> AcpSyncAgent:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close_gracefully()  # graceful, like every context manager of rxacp

    def _wait(self, source: AcpObservable[_R], what: str) -> _R:
        """The one blocking wait of the sync agent: ``source``'s answer, typed."""
        timeout = self._core.session.request_timeout
        return cast(_R, wait_for(source, None if timeout is None else timeout + 5.0, what=what))

    def send_session_update(self, notification: SessionNotification) -> None:
        """Send a ``session/update`` outside of a prompt turn."""
        self._core.notify("session/update", notification)

    def request_permission(self, request: RequestPermissionRequest) -> RequestPermissionResponse:
        """``session/request_permission``."""
        return self._wait(self._async.request_permission(request), "session/request_permission")

    def read_text_file(self, request: ReadTextFileRequest) -> ReadTextFileResponse:
        """``fs/read_text_file`` (needs ``fs.readTextFile``)."""
        return self._wait(self._async.read_text_file(request), "fs/read_text_file")

    def write_text_file(self, request: WriteTextFileRequest) -> WriteTextFileResponse:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``)."""
        return self._wait(self._async.write_text_file(request), "fs/write_text_file")

    def create_terminal(self, request: CreateTerminalRequest) -> CreateTerminalResponse:
        """``terminal/create`` (needs ``terminal``)."""
        return self._wait(self._async.create_terminal(request), "terminal/create")

    def terminal_output(self, request: TerminalOutputRequest) -> TerminalOutputResponse:
        """``terminal/output``."""
        return self._wait(self._async.terminal_output(request), "terminal/output")

    def release_terminal(self, request: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        """``terminal/release``."""
        return self._wait(self._async.release_terminal(request), "terminal/release")

    def wait_for_terminal_exit(
        self, request: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``."""
        return self._wait(self._async.wait_for_terminal_exit(request), "terminal/wait_for_exit")

    def kill_terminal(self, request: KillTerminalRequest) -> KillTerminalResponse:
        """``terminal/kill``."""
        return self._wait(self._async.kill_terminal(request), "terminal/kill")

    def create_elicitation(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        """``elicitation/create`` (needs ``elicitation``)."""
        return self._wait(self._async.create_elicitation(request), "elicitation/create")

    def complete_elicitation(self, notification: CompleteElicitationNotification) -> None:
        """``elicitation/complete`` notification (needs ``elicitation.url``)."""
        self._core.notify("elicitation/complete", notification)

    def ext_method(self, method: str, params: Any = None) -> Any:
        """An extension request (``method`` starts with ``_``); returns the raw result."""
        check_ext_method(method)
        return self._wait(self._core.session.send_request(method, params), method)


class _AsyncView(AcpAsyncAgent):
    """The Observable calls of an agent core, without owning it (used by the sync agent)."""

    def __init__(self, core: AgentCore) -> None:
        self._core = core
