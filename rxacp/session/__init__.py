"""The JSON-RPC engine: ids, cold-Observable requests, ``$/cancel_request`` both ways, timeouts,
ordered notifications and close. Serves both roles; knows nothing of clients or agents."""

from __future__ import annotations

from .blocking import wait_for
from .incoming import CancelRequestHook, IncomingNotification, IncomingRequest
from .loop import LoopRunner
from .observable import AcpObservable, as_acp_observable
from .session import CANCEL_REQUEST, AcpSession, NotificationHandler, RequestHandler
from .stats import SessionStats
from .workers import WorkerPool

__all__ = [
    "CANCEL_REQUEST",
    "AcpObservable",
    "AcpSession",
    "CancelRequestHook",
    "IncomingNotification",
    "IncomingRequest",
    "LoopRunner",
    "NotificationHandler",
    "RequestHandler",
    "SessionStats",
    "WorkerPool",
    "as_acp_observable",
    "wait_for",
]
