"""The JSON-RPC engine: ids, cold-Observable requests, ``$/cancel_request`` both ways, timeouts,
ordered notifications and close. Serves both roles; knows nothing of clients or agents.

Public here is what users of the engine need; its machinery (the loop runner, the worker pool,
the blocking wait, the engine's parts) lives in its submodules (``rxacp.session.loop``,
``.workers``, ``.blocking``...), which are not part of the public API.
"""

from __future__ import annotations

from .completion import Completion
from .incoming import CancelRequestHook, IncomingNotification, IncomingRequest
from .observable import AcpObservable, as_acp_observable
from .session import CANCEL_REQUEST, AcpSession, NotificationHandler, RequestHandler
from .stats import SessionStats

__all__ = [
    "CANCEL_REQUEST",
    "AcpObservable",
    "AcpSession",
    "CancelRequestHook",
    "Completion",
    "IncomingNotification",
    "IncomingRequest",
    "NotificationHandler",
    "RequestHandler",
    "SessionStats",
    "as_acp_observable",
]
