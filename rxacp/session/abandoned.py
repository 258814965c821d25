"""What the engine remembers about requests it gave up on: whether the peer takes
``$/cancel_request`` at all, and who waits for the late answer of an abandoned request.

* ``$/cancel_request`` is a notification, so a peer should never answer it. Production agents
  that do not implement it answer ``-32601`` anyway, some without an ``id`` (codex-acp), some
  with ``"id": null``. The first such answer marks the connection "no ``$/cancel_request``"
  (one debug log) and the engine stops sending it there; every other stray error answer stays a
  debug log.
* An abandoned request's late answer is discarded, but someone may want to know it arrived
  (the role layer may hold later work until it did): such
  a request is kept here, its late answer goes through the ordered inbox like any answer (so
  it comes after the notifications that arrived before it), and its ``late`` callback runs
  once then, or when the connection ends.

This module is *not* responsible for writing anything (the outgoing-requests part does) or for
deciding what to send when a request is abandoned (the caller does, through ``on_abandon``).
"""

from __future__ import annotations

import collections
import logging
import re
from collections.abc import Callable
from typing import Any

from ..errors import AcpErrorCodes
from .pending import PendingRequest

__all__ = ["AbandonedRequests"]

_log = logging.getLogger("rxacp.session")

CANCEL_REQUEST = "$/cancel_request"

# method-like words in an error text ("session/cancel", "$/cancel_request", "fs/read_text_file")
_METHOD_WORD = re.compile(r"\$/[\w/]+|[A-Za-z_]\w*/[\w/]+")

MAX_LATE_WAITERS = 1024
"""At most this many abandoned requests wait for a late answer; the oldest is released first."""


class AbandonedRequests:
    """Per-connection state of given-up requests (touched on the connection's loop only)."""

    __slots__ = ("_late", "_role", "cancel_request_supported", "cancel_requests_sent")

    def __init__(self, role: str) -> None:
        self._role = role
        self.cancel_request_supported = True
        """False once the peer answered ``$/cancel_request`` with ``-32601``: not sent again."""
        self.cancel_requests_sent = 0
        """How many ``$/cancel_request`` notifications this connection wrote."""
        self._late: collections.OrderedDict[Any, PendingRequest] = collections.OrderedDict()

    def wait_for_late_answer(self, state: PendingRequest, callback: Callable[[], None]) -> None:
        """Keep abandoned ``state`` until its answer arrives, then run ``callback()`` once."""
        state.late = callback
        self._late[state.id] = state
        if len(self._late) > MAX_LATE_WAITERS:
            _, oldest = self._late.popitem(last=False)
            _run(oldest)

    def take(self, rid: Any) -> PendingRequest | None:
        """The abandoned request waiting for the answer ``rid`` arrived with, if any."""
        return self._late.pop(rid, None) if self._late else None

    def on_stray_answer(self, rid: Any, error: dict[str, Any] | None) -> None:
        """An answer to no pending request: late, or a peer answering a notification."""
        if error is not None and self._answers_cancel_request(rid, error):
            self.cancel_request_supported = False
            _log.debug(
                "%s: the peer answered $/cancel_request with -32601 (%s): "
                "not sending $/cancel_request on this connection any more",
                self._role,
                error.get("message"),
            )
            return
        _log.debug("%s: ignoring answer to unknown or finished request id %r", self._role, rid)

    def _answers_cancel_request(self, rid: Any, error: dict[str, Any]) -> bool:
        if not self.cancel_request_supported or self.cancel_requests_sent == 0:
            return False
        if error.get("code") != AcpErrorCodes.METHOD_NOT_FOUND:
            return False
        text = f"{error.get('message', '')} {error.get('data', '')}"
        named = _METHOD_WORD.findall(text)
        if named:  # the peer says which method it does not know
            return CANCEL_REQUEST in named
        return rid is None  # a nameless -32601 without an id: the only notification it answers

    def release_all(self) -> None:
        """The connection ended: release everyone still waiting for a late answer."""
        waiting = list(self._late.values())
        self._late.clear()
        for state in waiting:
            _run(state)


def _run(state: PendingRequest) -> None:
    try:
        state.run_late()
    except Exception:
        _log.exception("the late-answer callback of %s failed", state.method)
