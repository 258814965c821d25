"""What a handler sees of one incoming request or notification.

``IncomingRequest`` is handed to a request handler; it guarantees *exactly one answer* per
request: the first of the handler's result, :meth:`IncomingRequest.respond`,
:meth:`IncomingRequest.respond_error`, a ``$/cancel_request`` or the connection closing wins,
everything later is discarded.

This module is *not* responsible for parsing frames or choosing handlers (see ``session.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from reactivex import abc

from ..errors import AcpProtocolException

__all__ = ["CancelRequestHook", "IncomingNotification", "IncomingRequest"]

CancelRequestHook = Callable[["IncomingRequest"], bool]
"""Called on ``$/cancel_request`` for a request; return True when it handled the cancel itself."""


class AnswerWriter(Protocol):
    """Where an :class:`IncomingRequest` writes its one answer (the engine's in-flight table,
    ``dispatch.InFlightRequests``)."""

    def write_answer(self, req: IncomingRequest, result: Any = None, error: Any = None) -> None:
        """Write the answer of ``req`` (from any thread; the request claimed it)."""


class IncomingRequest:
    """One request from the peer, in flight until it is answered exactly once."""

    __slots__ = (
        "_cancel_hook",
        "_lock",
        "_subscription",
        "_table",
        "answered",
        "id",
        "method",
        "params",
    )

    def __init__(
        self,
        table: AnswerWriter,
        id: int | str | None,
        method: str,
        params: Any,
    ) -> None:
        self._table = table
        self.id = id
        """The request id, exactly as the peer sent it."""
        self.method = method
        self.params = params
        """The raw ``params`` JSON value (``None`` when absent)."""
        self.answered = False
        self._cancel_hook: CancelRequestHook | None = None
        self._subscription: abc.DisposableBase | None = None
        self._lock = threading.Lock()

    def respond(self, result: Any) -> bool:
        """Answer with ``result`` (a model or JSON value) if not answered yet; thread-safe.

        Returns True when this call produced the answer.
        """
        if not self._claim():
            return False
        self._table.write_answer(self, result=result)
        return True

    def respond_error(self, error: BaseException | dict[str, Any]) -> bool:
        """Answer with an error (an exception, mapped, or a wire error object); thread-safe."""
        if not self._claim():
            return False
        self._table.write_answer(self, error=error)
        return True

    def handle_cancel_with(self, hook: CancelRequestHook | None) -> None:
        """Let ``hook`` decide what the peer's ``$/cancel_request`` for this request does (the
        role layer: what a cancelled operation answers on its own); ``None``: the
        engine's default, answering ``-32800``. Loop thread."""
        self._cancel_hook = hook

    def peer_cancelled(self) -> None:
        """The peer sent ``$/cancel_request`` for this request (loop thread): the hook handles
        it, else the handler is disposed and ``-32800`` answered."""
        hook = self._cancel_hook
        if hook is None or not hook(self):
            self.respond_error(AcpProtocolException.request_cancelled())

    def _claim(self) -> bool:
        with self._lock:
            if self.answered:
                return False
            self.answered = True
        self.dispose_handler()
        return True

    def attach(self, subscription: abc.DisposableBase) -> None:
        """Keep the handler's subscription until the answer; dispose it now if already answered."""
        with self._lock:
            if not self.answered:
                self._subscription = subscription
                return
        subscription.dispose()

    def dispose_handler(self) -> None:
        """Dispose the handler's subscription (idempotent)."""
        sub, self._subscription = self._subscription, None
        if sub is not None:
            sub.dispose()

    def abandon(self) -> None:
        """Dispose the handler without answering (the connection is gone)."""
        with self._lock:
            if self.answered:
                return
            self.answered = True
        self.dispose_handler()

    def __repr__(self) -> str:
        return f"IncomingRequest(id={self.id!r}, method={self.method!r}, answered={self.answered})"


class IncomingNotification:
    """One notification from the peer."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Any) -> None:
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"IncomingNotification(method={self.method!r})"
