"""``AcpClient``: the entry point that builds async and sync ACP clients.

``AcpClient.async_(transport)`` returns an :class:`AcpAsyncClientBuilder` (handlers return
Observables) and ``AcpClient.sync(transport)`` an :class:`AcpSyncClientBuilder` (handlers return
values and run on a worker pool). Both are one definition,
:class:`AcpClientBuilder` (``_builder_base.py``): its typed
handler setters come from the method table (:mod:`rxacp.roles.builders`), typed per flavour.

This module is *not* responsible for the calls themselves (``async_client.py``,
``sync_client.py``) or for dispatching agent→client requests (``handlers.py``).
"""

from __future__ import annotations

from .._durations import to_seconds
from ..roles.builders import AsyncHandler, BlockingBuilder, ReactiveBuilder, SyncHandler
from ..transport.base import AcpTransport
from ._builder_base import AcpClientBuilder
from .async_client import AcpAsyncClient
from .sync_client import AcpSyncClient

__all__ = [
    "AcpAsyncClientBuilder",
    "AcpClient",
    "AcpClientBuilder",
    "AcpSyncClientBuilder",
    "AsyncHandler",
    "SyncHandler",
]


class AcpAsyncClientBuilder(AcpClientBuilder[AcpAsyncClient], ReactiveBuilder):
    """Builds an :class:`AcpAsyncClient`. Handlers return Observables (or coroutines/values)
    and run on the connection's loop: they must not block.

    A plain return value answers at once, without Rx; an Observable that emits while it is
    subscribed (``reactivex.just(r)``, ``reactivex.defer(lambda _: reactivex.just(r))``)
    answers at once too, after one subscription; any other Observable answers with its first
    value whenever it comes (disposed if the agent cancels the request)."""

    def build(self) -> AcpAsyncClient:
        """Create the client (the connection starts on the first call). Built inside a running
        asyncio loop it runs on that loop unless :meth:`event_loop` said otherwise."""
        return self._build_async(on_running_loop=True)


class AcpSyncClientBuilder(AcpClientBuilder[AcpSyncClient], BlockingBuilder):
    """Builds an :class:`AcpSyncClient`. Handlers return values and run on the worker pool
    (they may block); consumers run off the loop (on a thread waiting in a blocking call of the
    client, else on its consumer thread), one notification after
    another in arrival order (they may block too: the agent is then read more slowly)."""

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
