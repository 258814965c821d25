"""What :class:`MockAcpAgent` and :class:`MockAcpClient` share: scripts, recordings, lifecycle.

:class:`MockPeer` holds the per-method scripts (``on(method, answer)`` stores them; an answer
is a value, an exception to raise, or ``fn(request)`` returning or raising one), the recorded
traffic (``received``, ``frames``, ``calls``), the in-memory pair a mock creates when given no
transport, extension-method handlers, and the lifecycle names of the Java kit (``with``,
``close_gracefully``, ``create_default``). :class:`MockBuilder` is the common half of the two
Java-style builders.

This module is *not* responsible for what either mock answers by default or how it drives its
peer (``_mock_agent.py``, ``_mock_client.py``), nor for recording itself (``_traffic.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Self, TypeVar

import reactivex

from rxacp._durations import Duration, to_seconds, wait_seconds
from rxacp.session import Completion, IncomingRequest
from rxacp.transport.base import AcpTransport

from ._traffic import RecordingTransport, TrafficLog, WireFrame
from .memory import InMemoryTransport, InMemoryTransportPair

if TYPE_CHECKING:
    from rxacp.session import AcpSession

__all__ = ["UNSCRIPTED", "MockBuilder", "MockPeer"]

UNSCRIPTED: Any = object()
"""What :meth:`MockPeer._script` returns for a method nobody scripted."""


class MockPeer:
    """The shared half of the two mocks (thread-safe; scripts run on worker threads)."""

    _own_end: ClassVar[Literal["agent", "client"]]
    """Which end of a created :class:`InMemoryTransportPair` the mock serves."""

    def __init__(self, transport: AcpTransport | None) -> None:
        self._pair: InMemoryTransportPair | None = None
        if transport is None:
            pair = self._pair = InMemoryTransportPair.create()
            agent_end = self._own_end == "agent"
            transport = pair.agent_transport if agent_end else pair.client_transport
        self._traffic = TrafficLog()
        self._recording = RecordingTransport(transport, self._traffic)
        """The transport to build the real peer on: it records every frame."""
        self._scripts_lock = threading.Lock()
        self._scripts: dict[str, Any] = {}

    def _other_end(self) -> InMemoryTransport:
        """The end of the created pair the peer under test uses."""
        name = type(self).__name__
        if self._pair is None:
            other = "client" if self._own_end == "agent" else "agent"
            raise RuntimeError(f"this {name} was given a transport; it has no {other} end")
        pair = self._pair
        return pair.client_transport if self._own_end == "agent" else pair.agent_transport

    # ------------------------------------------------------------------ scripts
    def _set_script(self, method: str, answer: Any) -> None:
        with self._scripts_lock:
            self._scripts[method] = answer

    def _script(self, method: str) -> Any:
        """The script of ``method``, or :data:`UNSCRIPTED`."""
        with self._scripts_lock:
            return self._scripts.get(method, UNSCRIPTED)

    def _scripted_methods(self) -> list[str]:
        with self._scripts_lock:
            return list(self._scripts)

    @staticmethod
    def _play(script: Any, request: Any) -> Any:
        """Run one script: call it (if callable) with ``request``; raise an exception value."""
        value = script(request) if callable(script) else script
        if isinstance(value, BaseException):
            raise value
        return value

    @property
    def _engine(self) -> AcpSession:
        """The engine of the real peer underneath (for raw handlers)."""
        raise NotImplementedError

    def _answer_extension(self, method: str, params: Any) -> Any:
        """The answer to the extension request ``method`` (raw ``params``)."""
        raise NotImplementedError

    def _ext_handler(self, method: str) -> Callable[[IncomingRequest], Any]:
        """A raw handler answering the extension ``method`` on a worker thread."""

        def handle(req: IncomingRequest) -> reactivex.Observable[Any]:
            return self._engine.run_blocking(lambda: self._answer_extension(method, req.params))

        return handle

    def _serve_extension(self, method: str) -> None:
        if not self._engine.has_request_handler(method):
            self._engine.set_request_handler(method, self._ext_handler(method))

    # ------------------------------------------------------------------ recordings
    @property
    def received(self) -> list[tuple[str, Any]]:
        """``(method, params)`` of every request/notification received, in order (raw JSON)."""
        return self._traffic.received()

    @property
    def frames(self) -> list[WireFrame]:
        """Every frame received (``"in"``) and sent (``"out"``), in order."""
        return self._traffic.frames

    def calls(self, method: str) -> list[Any]:
        """The raw params of every received ``method`` message, in order."""
        return [params for name, params in self.received if name == method]

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Stop the mock and join its threads. Idempotent."""
        raise NotImplementedError

    def close_gracefully(self, timeout: Duration | None = None) -> Completion:
        """Close (Java ``closeGracefully``); :meth:`close` already lets answers in flight go.
        Returns the close's :class:`~rxacp.session.Completion`, already done (so
        ``mock.close_gracefully().block(timeout)`` works); ``timeout`` is accepted for the
        Java signature (a ``timedelta`` or seconds) and checked."""
        to_seconds(timeout, name="timeout")
        self.close()
        return Completion.of_done("mock close")

    @classmethod
    def create_default(cls, transport: AcpTransport | None = None) -> Self:
        """A mock with the default answers (Java ``createDefault``)."""
        return cls(transport)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


_M = TypeVar("_M", bound=MockPeer)


class MockBuilder(Generic[_M]):
    """The shared half of ``MockAcpAgentBuilder`` and ``MockAcpClientBuilder``: options for
    the mock's constructor, and :meth:`build`, which closes the mock if scripting it fails."""

    def __init__(self, transport: AcpTransport | None = None) -> None:
        self._transport = transport
        self._options: dict[str, Any] = {}

    def _option(self, name: str, value: Any) -> Self:
        self._options[name] = value
        return self

    def request_timeout(self, timeout: Duration | None) -> Self:
        """Timeout of the mock's own requests to its peer (default 5 s)."""
        return self._option("request_timeout", timeout)

    def timeout(self, seconds: Duration) -> Self:
        """Bound of the mock's own waits (``expect_*``, ``prompt``; a ``timedelta`` or
        seconds; default 5 s)."""
        return self._option("timeout", wait_seconds(seconds, default=5.0))

    def _create(self) -> _M:
        raise NotImplementedError

    def _script(self, mock: _M) -> None:
        raise NotImplementedError

    def build(self) -> _M:
        """The mock, running."""
        mock = self._create()
        try:
            self._script(mock)
        except BaseException:
            mock.close()
            raise
        return mock
