"""``AcpAsyncAgent`` (Observables) and ``AcpSyncAgent`` (blocking): a running ACP agent.

Both wrap one :class:`AgentCore`. Agent→client calls are gated on the client's advertised
capabilities: a call the client did not advertise raises/emits
:class:`AcpCapabilityException` and nothing is sent.

This module is *not* responsible for configuration (``builder.py``) or for the prompt-turn
rules (``turn.py``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from .._durations import Duration, to_seconds
from ..capabilities import NegotiatedCapabilities
from ..roles.handlers import check_ext_method
from ..schema import SessionNotification
from ..session import AcpObservable, AcpSession, Completion
from ..session._forward import Forwarded
from .calls import AsyncClientCalls, SyncClientCalls
from .context import PromptContext, SyncPromptContext
from .core import AgentConfig, AgentCore

__all__ = ["AcpAsyncAgent", "AcpSyncAgent"]


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

    def start(self) -> Completion:
        """Start serving the transport (idempotent); returns the start's :class:`Completion`.

        The step runs now, so ``agent.start()`` alone starts the agent; the result is Java's
        ``start()`` ``Mono<Void>``, already started: ``agent.start().block()``,
        ``.subscribe(...)`` and ``await agent.start()`` work too::

            start() ──▶ --None|     (transport started)      --X   (it failed to start)

        Off the connection's loop it returns once the transport started and raises
        ``AcpConnectionException`` if it could not; on the loop it schedules the start and
        the completion settles when it finished.
        """
        return self._core.session.start()

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

    # the end of the connection, waited for as on the session (one lifecycle vocabulary)
    wait_closed = Forwarded("session", AcpSession.wait_closed)
    wait_closed_async = Forwarded("session", AcpSession.wait_closed_async)

    def close(self) -> None:
        """Stop **at once**: active turns are cancelled, pending requests error, the transport
        closes (``close_gracefully()``, ``aclose()`` and the context managers are graceful)."""
        self._core.session.close()

    def close_gracefully(self, timeout: Duration | None = None) -> Completion:
        """Stop taking work, drain queued notifications and writes, then close (bounded by
        ``timeout``, a ``timedelta`` or seconds, default the request timeout); returns the
        close's :class:`Completion` (Java ``closeGracefully()``, already started)::

            close_gracefully() ──▶ --None|     (connection ended)

        Off the connection's loop it returns once the connection ended; on the loop (in a
        handler) it schedules the close and the completion settles when it finished.
        """
        return self._core.session.close_gracefully(timeout)

    def ext_notification(self, method: str, params: Any = None) -> None:
        """Send an extension notification (``method`` starts with ``_``)."""
        check_ext_method(method)
        self._core.session.send_notification(method, params)

    def send_session_update(self, notification: SessionNotification) -> None:
        """Send a ``session/update`` outside of a prompt turn (e.g. after ``session/load``)."""
        self._core.notify("session/update", notification)

    # -- plumbing: what the table-derived calls of ``calls.py`` need ------------------------
    def _send(self, method: str, params: Any) -> AcpObservable[Any]:
        return self._core.call(method, params)

    def _notify(self, method: str, params: Any) -> None:
        self._core.notify(method, params)

    def _call_session_id(self) -> str | None:
        return None  # outside a turn, a call names its session


class AcpAsyncAgent(_AgentBase, AsyncClientCalls):
    """An agent whose handlers return Observables; its own calls return cold Observables.

    The agent→client calls (``request_permission``, ``read_text_file``, ``create_terminal``...)
    come from the method table (``rxacp.agent.calls``): each takes the request model, or its
    fields as keywords, and returns a cold :class:`AcpObservable` of the response.
    """

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, blocking=False)
        self._core.set_context_factory(lambda turn: PromptContext(self._core, turn))

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

    def ext_method(self, method: str, params: Any = None) -> AcpObservable[Any]:
        """An extension request (``method`` starts with ``_``); emits the raw result::

        subscribe ──request──▶ ───────R|      dispose before R → $/cancel_request
        """
        check_ext_method(method)
        return self._core.session.send_request(method, params)


class AcpSyncAgent(_AgentBase, SyncClientCalls):
    """An agent whose handlers return values (run on worker threads); its calls block.

    The same agent→client calls as :class:`AcpAsyncAgent`, returning the response (they wait
    at most the request timeout + 5 s, and refuse to run on the connection's event loop).
    """

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, blocking=True)
        self._core.set_context_factory(lambda turn: SyncPromptContext(self._core, turn))

    def __enter__(self) -> AcpSyncAgent:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close_gracefully()  # graceful, like every context manager of rxacp

    def ext_method(self, method: str, params: Any = None) -> Any:
        """An extension request (``method`` starts with ``_``); returns the raw result."""
        check_ext_method(method)
        return self._block(self._core.session.send_request(method, params), method)
