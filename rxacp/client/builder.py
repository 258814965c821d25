"""``AcpClient``: the entry point that builds async and sync ACP clients.

``AcpClient.async_(transport)`` returns an :class:`AcpAsyncClientBuilder` (handlers return
Observables) and ``AcpClient.sync(transport)`` an :class:`AcpSyncClientBuilder` (handlers return
values and run on a worker pool). Both share the connection options and consumers of
:class:`~rxacp.client._builder_base.ClientBuilderBase` (``_builder_base.py``); the typed handler
setters here are one-liners into a table keyed by method name (see ``handlers.py``).

This module is *not* responsible for the calls themselves (``async_client.py``,
``sync_client.py``) or for dispatching agent→client requests (``handlers.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Self, TypeAlias, TypeVar

import reactivex

from .._durations import to_seconds
from ..schema import methods as m
from ..transport.base import AcpTransport
from ._builder_base import ClientBuilderBase
from .async_client import AcpAsyncClient
from .sync_client import AcpSyncClient

if TYPE_CHECKING:  # the handlers' request and response models, for annotations only
    from .. import schema

__all__ = [
    "AcpAsyncClientBuilder",
    "AcpClient",
    "AcpSyncClientBuilder",
    "AsyncHandler",
    "SyncHandler",
]

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

AsyncHandler: TypeAlias = Callable[
    [_Req], reactivex.Observable[_Resp] | Awaitable[_Resp] | _Resp | None
]
"""An async-builder handler: takes the request model, returns an Observable of the response
(first value answers), a coroutine, or the response itself. ``None``/empty answers ``{}`` when
the response has no required field."""

SyncHandler: TypeAlias = Callable[[_Req], _Resp | Awaitable[_Resp] | None]
"""A sync-builder handler: runs on the worker pool (may block) and returns the response (an
``async def`` handler's coroutine is awaited on the connection's loop)."""


class AcpAsyncClientBuilder(ClientBuilderBase[AcpAsyncClient]):
    """Builds an :class:`AcpAsyncClient`. Handlers return Observables (or coroutines/values)
    and run on the connection's loop: they must not block.

    A plain return value answers at once, without Rx; an Observable that emits while it is
    subscribed (``reactivex.just(r)``, ``reactivex.defer(lambda _: reactivex.just(r))``)
    answers at once too, after one subscription; any other Observable answers with its first
    value whenever it comes (disposed if the agent cancels the request)."""

    def __init__(self, transport: AcpTransport) -> None:
        super().__init__(transport, blocking=False)

    def read_text_file_handler(
        self, fn: AsyncHandler[schema.ReadTextFileRequest, schema.ReadTextFileResponse]
    ) -> Self:
        """Serve ``fs/read_text_file`` (advertises ``fs.readTextFile`` by default)."""
        return self._request_handler(m.FS_READ_TEXT_FILE, fn)

    def write_text_file_handler(
        self, fn: AsyncHandler[schema.WriteTextFileRequest, schema.WriteTextFileResponse]
    ) -> Self:
        """Serve ``fs/write_text_file`` (advertises ``fs.writeTextFile`` by default)."""
        return self._request_handler(m.FS_WRITE_TEXT_FILE, fn)

    def request_permission_handler(
        self, fn: AsyncHandler[schema.RequestPermissionRequest, schema.RequestPermissionResponse]
    ) -> Self:
        """Answer ``session/request_permission`` (without one, permission requests are refused
        with ``-32601``, never approved). Disposed when the client sends ``session/cancel`` for
        the session (the request is then answered ``cancelled``) or the agent cancels it."""
        return self._request_handler(m.SESSION_REQUEST_PERMISSION, fn)

    def create_terminal_handler(
        self, fn: AsyncHandler[schema.CreateTerminalRequest, schema.CreateTerminalResponse]
    ) -> Self:
        """Serve ``terminal/create`` (``terminal`` is advertised iff all terminal handlers are)."""
        return self._request_handler(m.TERMINAL_CREATE, fn)

    def terminal_output_handler(
        self, fn: AsyncHandler[schema.TerminalOutputRequest, schema.TerminalOutputResponse]
    ) -> Self:
        """Serve ``terminal/output``."""
        return self._request_handler(m.TERMINAL_OUTPUT, fn)

    def release_terminal_handler(
        self, fn: AsyncHandler[schema.ReleaseTerminalRequest, schema.ReleaseTerminalResponse]
    ) -> Self:
        """Serve ``terminal/release``."""
        return self._request_handler(m.TERMINAL_RELEASE, fn)

    def wait_for_terminal_exit_handler(
        self,
        fn: AsyncHandler[schema.WaitForTerminalExitRequest, schema.WaitForTerminalExitResponse],
    ) -> Self:
        """Serve ``terminal/wait_for_exit``."""
        return self._request_handler(m.TERMINAL_WAIT_FOR_EXIT, fn)

    def kill_terminal_handler(
        self, fn: AsyncHandler[schema.KillTerminalRequest, schema.KillTerminalResponse]
    ) -> Self:
        """Serve ``terminal/kill``."""
        return self._request_handler(m.TERMINAL_KILL, fn)

    def create_elicitation_handler(
        self, fn: AsyncHandler[schema.CreateElicitationRequest, schema.CreateElicitationResponse]
    ) -> Self:
        """Serve ``elicitation/create`` (advertises ``elicitation.form`` by default)."""
        return self._request_handler(m.ELICITATION_CREATE, fn)

    def ext_request_handler(self, method: str, fn: AsyncHandler[Any, Any]) -> Self:
        """Serve the extension request ``method`` (must start with ``_``); gets the raw params,
        returns an Observable of the raw result (``None`` answers ``{}``)."""
        return self._ext_request(method, fn)

    def build(self) -> AcpAsyncClient:
        """Create the client (the connection starts on the first call). Built inside a running
        asyncio loop it runs on that loop unless :meth:`event_loop` said otherwise."""
        return self._build_async(on_running_loop=True)


class AcpSyncClientBuilder(ClientBuilderBase[AcpSyncClient]):
    """Builds an :class:`AcpSyncClient`. Handlers return values and run on the worker pool
    (they may block); consumers run off the loop (on a thread waiting in a blocking call of the
    client, else on its consumer thread), one notification after
    another in arrival order (they may block too: the agent is then read more slowly)."""

    def __init__(self, transport: AcpTransport) -> None:
        super().__init__(transport, blocking=True)

    def read_text_file_handler(
        self, fn: SyncHandler[schema.ReadTextFileRequest, schema.ReadTextFileResponse]
    ) -> Self:
        """Serve ``fs/read_text_file`` (advertises ``fs.readTextFile`` by default)."""
        return self._request_handler(m.FS_READ_TEXT_FILE, fn)

    def write_text_file_handler(
        self, fn: SyncHandler[schema.WriteTextFileRequest, schema.WriteTextFileResponse]
    ) -> Self:
        """Serve ``fs/write_text_file`` (advertises ``fs.writeTextFile`` by default)."""
        return self._request_handler(m.FS_WRITE_TEXT_FILE, fn)

    def request_permission_handler(
        self, fn: SyncHandler[schema.RequestPermissionRequest, schema.RequestPermissionResponse]
    ) -> Self:
        """Answer ``session/request_permission`` (without one, they are refused, never
        approved). After ``session/cancel`` the request is answered ``cancelled`` at once and
        whatever this handler returns later is discarded."""
        return self._request_handler(m.SESSION_REQUEST_PERMISSION, fn)

    def create_terminal_handler(
        self, fn: SyncHandler[schema.CreateTerminalRequest, schema.CreateTerminalResponse]
    ) -> Self:
        """Serve ``terminal/create`` (``terminal`` is advertised iff all terminal handlers are)."""
        return self._request_handler(m.TERMINAL_CREATE, fn)

    def terminal_output_handler(
        self, fn: SyncHandler[schema.TerminalOutputRequest, schema.TerminalOutputResponse]
    ) -> Self:
        """Serve ``terminal/output``."""
        return self._request_handler(m.TERMINAL_OUTPUT, fn)

    def release_terminal_handler(
        self, fn: SyncHandler[schema.ReleaseTerminalRequest, schema.ReleaseTerminalResponse]
    ) -> Self:
        """Serve ``terminal/release``."""
        return self._request_handler(m.TERMINAL_RELEASE, fn)

    def wait_for_terminal_exit_handler(
        self, fn: SyncHandler[schema.WaitForTerminalExitRequest, schema.WaitForTerminalExitResponse]
    ) -> Self:
        """Serve ``terminal/wait_for_exit``."""
        return self._request_handler(m.TERMINAL_WAIT_FOR_EXIT, fn)

    def kill_terminal_handler(
        self, fn: SyncHandler[schema.KillTerminalRequest, schema.KillTerminalResponse]
    ) -> Self:
        """Serve ``terminal/kill``."""
        return self._request_handler(m.TERMINAL_KILL, fn)

    def create_elicitation_handler(
        self, fn: SyncHandler[schema.CreateElicitationRequest, schema.CreateElicitationResponse]
    ) -> Self:
        """Serve ``elicitation/create`` (advertises ``elicitation.form`` by default)."""
        return self._request_handler(m.ELICITATION_CREATE, fn)

    def ext_request_handler(self, method: str, fn: SyncHandler[Any, Any]) -> Self:
        """Serve the extension request ``method`` (must start with ``_``); gets the raw params,
        returns the raw result (``None`` answers ``{}``)."""
        return self._ext_request(method, fn)

    def build(self) -> AcpSyncClient:
        """Create the client (the connection starts on the first call)."""
        delegate = self._build_async()
        return AcpSyncClient(
            delegate,
            request_timeout=to_seconds(self._request_timeout, name="request_timeout"),
            consumer_thread=self._handlers.consumer_thread,
        )


class AcpClient:
    """Factory of ACP client builders (``AcpClient.async_(t)`` / ``AcpClient.sync(t)``)."""

    def __init__(self) -> None:
        raise TypeError(
            "AcpClient is a factory: use AcpClient.async_(transport) or AcpClient.sync(transport)"
        )

    @staticmethod
    def async_(transport: AcpTransport) -> AcpAsyncClientBuilder:
        """A builder of an :class:`AcpAsyncClient` (Observable API) over ``transport``."""
        return AcpAsyncClientBuilder(transport)

    @staticmethod
    def sync(transport: AcpTransport) -> AcpSyncClientBuilder:
        """A builder of an :class:`AcpSyncClient` (blocking API) over ``transport``."""
        return AcpSyncClientBuilder(transport)
