"""Client-side handling of agent→client traffic, table-driven from ``rxacp.schema.methods``.

:class:`ClientHandlers` collects what a builder registered (typed request handlers keyed by
method name, ``session/update`` and ``elicitation/complete`` consumers, ``_``-extension
handlers); :func:`install` wires them into an :class:`~rxacp.session.AcpSession`:

* request params are parsed with the method's params model (a validation error answers
  ``-32602``), the user's handler runs (async style: returns an Observable, a coroutine or a
  value; blocking style: runs on the worker pool via ``session.run_blocking``), and its value
  answers the request. ``None`` (or an empty Observable) answers ``{}`` for methods whose
  response has no required field, and is an internal error (``-32603``) otherwise;
* pending ``session/request_permission`` requests are tracked per session
  (:class:`PermissionTracker`) so that sending ``session/cancel`` answers them ``cancelled``;
* unhandled requests get ``-32601`` whose message names the builder method to call.

This module is *not* responsible for client→agent calls, for the wire protocol (the engine) or
for deciding when to cancel (the client does).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, cast

import reactivex
from reactivex import operators as ops

from ..roles.handlers import loop_hop, request_handler, unhandled_hint
from ..schema import (
    AcpModel,
    CompleteElicitationNotification,
    SessionNotification,
)
from ..schema.methods import (
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    METHODS,
    SESSION_REQUEST_PERMISSION,
    SESSION_UPDATE,
    MethodSpec,
)
from ..session import AcpSession, IncomingNotification, IncomingRequest
from ..session.adapters import Started, as_observable
from ..session.blocking import wait_for
from ._tracking import MAX_PENDING_PERMISSIONS, KnownSessions, PermissionTracker, unknown_session
from .consumers import ConsumerThread
from .session_states import SessionStates
from .streams import UpdateStream, call_logged

__all__ = [
    "HANDLED_REQUESTS",
    "MAX_PENDING_PERMISSIONS",
    "ClientHandlers",
    "Consumer",
    "KnownSessions",
    "PermissionTracker",
    "default_client_capabilities",
    "install",
    "register_requests",
]

_log = logging.getLogger("rxacp.client")

HANDLED_REQUESTS: tuple[MethodSpec, ...] = tuple(
    spec
    for spec in METHODS.values()
    if spec.side == "client" and spec.kind == "request" and not spec.unstable
)
"""The agent→client requests a client builder offers a typed handler setter for."""

Consumer = Callable[[Any], "reactivex.Observable[Any] | Awaitable[Any] | None"]
"""A notification consumer: returns ``None``, or an Observable that holds the next one."""


class ClientHandlers:
    """What a client builder registered for agent→client traffic (filled in by the builder)."""

    def __init__(self, *, blocking: bool) -> None:
        self.blocking = blocking
        """True for the sync builder: request handlers return values and run on workers."""
        self.requests: dict[str, Callable[[Any], Any]] = {}
        self.ext_requests: dict[str, Callable[[Any], Any]] = {}
        self.ext_notifications: dict[str, Callable[[Any], Any]] = {}
        self.update_consumers: list[Consumer] = []
        self.update_stream = UpdateStream()
        """Every ``session/update``, hot (``AcpAsyncClient.updates()`` / ``prompt_turn()``)."""
        self.session_states: SessionStates | None = None
        """The read model (``session_state()``); ``None`` once the builder turned it off."""
        self.elicitation_complete_consumers: list[Consumer] = []
        self.close_listeners: list[Callable[[], object]] = []
        """Called on the loop when the connection ends (``LocalTerminals`` kills its commands)."""
        self.session_closed_listeners: list[Callable[[str], object]] = []
        """Called with the session id after the client's ``session/close`` for it settled."""
        self.consumer_thread: ConsumerThread | None = (
            ConsumerThread(caller_runs=True) if blocking else None
        )
        """The sync client's consumers (and extension notification handlers) run here, in
        arrival order, off the loop (on the thread waiting in a blocking call of the client,
        else on the consumer thread); the async client's run on the loop."""


def default_client_capabilities(handlers: ClientHandlers) -> dict[str, Any]:
    """The ``clientCapabilities`` the registered handlers imply (wire JSON).

    A capability is advertised iff every request it gates has a handler: ``fs.readTextFile``
    (read handler), ``fs.writeTextFile`` (write handler), ``terminal`` (all five terminal
    handlers), ``elicitation`` (create handler: ``{"form": {}}``, plus ``"url": {}`` when an
    ``elicitation_complete_consumer`` is registered as well).
    """
    gated: dict[str, bool] = {}
    for spec in HANDLED_REQUESTS:
        if spec.capability is not None:
            has = spec.name in handlers.requests
            gated[spec.capability] = gated.get(spec.capability, True) and has
    caps: dict[str, Any] = {}
    for path, enabled in gated.items():
        if not enabled:
            continue
        value: Any = True
        if path == METHODS[ELICITATION_CREATE].capability:
            value = {"form": {}}
            if handlers.elicitation_complete_consumers:
                value["url"] = {}
        node = caps
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return caps


def install(
    session: AcpSession,
    handlers: ClientHandlers,
    permissions: PermissionTracker,
    sessions: KnownSessions | None = None,
) -> None:
    """Register everything in ``handlers`` on ``session`` (before it starts); with
    ``sessions``, an agent's request for a session not in it is answered ``-32002``."""
    register_requests(session, handlers, permissions, HANDLED_REQUESTS, sessions)
    for method, fn in handlers.ext_requests.items():
        session.set_request_handler(
            method, request_handler(session, None, fn, blocking=handlers.blocking)
        )
    thread = handlers.consumer_thread
    for method, fn in handlers.ext_notifications.items():
        session.set_notification_handler(method, _ext_notification_handler(fn, thread, session))
    stream = handlers.update_stream
    session.set_notification_handler(
        SESSION_UPDATE,
        _consumers_handler(SessionNotification, handlers.update_consumers, stream, thread, session),
    )
    session.add_close_listener(lambda _reason: stream.complete())
    states = handlers.session_states
    if states is not None:
        stream.tap(states.on_update)  # first: the state has an update before anyone sees it
        session.add_close_listener(lambda _reason: states.complete())
    session.set_notification_handler(
        ELICITATION_COMPLETE,
        _consumers_handler(
            CompleteElicitationNotification,
            handlers.elicitation_complete_consumers,
            thread=thread,
            session=session,
        ),
    )
    if thread is not None:
        session.add_close_listener(lambda _reason: thread.stop())
    session.unhandled_request_hint = unhandled_hint("client")
    for listener in handlers.close_listeners:
        session.add_close_listener(_ignore_reason(listener))


def register_requests(
    session: AcpSession,
    handlers: ClientHandlers,
    permissions: PermissionTracker,
    specs: Iterable[MethodSpec],
    sessions: KnownSessions | None = None,
) -> None:
    """Register the typed request handlers ``handlers`` has for ``specs`` (a method table's)."""
    for spec in specs:
        fn = handlers.requests.get(spec.name)
        if fn is not None:
            session.set_request_handler(
                spec.name,
                _request_handler(session, spec, fn, handlers.blocking, permissions, sessions),
            )


def _ignore_reason(listener: Callable[[], object]) -> Callable[[Any], None]:
    def on_close(_reason: Any) -> None:
        listener()

    return on_close


def _request_handler(
    session: AcpSession,
    spec: MethodSpec,
    fn: Callable[[Any], Any],
    blocking: bool,
    permissions: PermissionTracker,
    sessions: KnownSessions | None = None,
) -> Callable[[IncomingRequest], reactivex.Observable[Any] | None]:
    def known(params: Any) -> None:
        session_id = getattr(params, "session_id", None)
        if sessions is not None and session_id is not None and not sessions.accepts(session_id):
            raise unknown_session(str(session_id))

    if spec.name != SESSION_REQUEST_PERMISSION:

        def check(_req: IncomingRequest, params: Any) -> None:
            known(params)

        return request_handler(session, spec, fn, blocking=blocking, before=check)

    def track(req: IncomingRequest, params: Any) -> Callable[[], None]:
        # tracked before the user's handler runs, so a concurrent session/cancel cannot miss it
        known(params)
        session_id = str(getattr(params, "session_id", ""))
        permissions.track(session_id, req)
        return lambda: permissions.untrack(session_id, req)

    return request_handler(session, spec, fn, blocking=blocking, before=track)


def _ext_notification_handler(
    fn: Callable[[Any], Any],
    thread: ConsumerThread | None = None,
    session: AcpSession | None = None,
) -> Callable[[IncomingNotification], reactivex.Observable[Any] | None]:
    def handle(note: IncomingNotification) -> reactivex.Observable[Any] | None:
        params = note.params if note.params is not None else {}
        if thread is not None:
            return thread.submit(lambda: _blocking_call(fn, params, session))
        result = fn(params)
        if isinstance(result, reactivex.Observable) or inspect.isawaitable(result):
            return as_observable(result)  # holds the next notification until it finished
        return None

    return handle


def _consumers_handler(
    model: type[AcpModel],
    consumers: list[Consumer],
    stream: UpdateStream | None = None,
    thread: ConsumerThread | None = None,
    session: AcpSession | None = None,
) -> Callable[[IncomingNotification], reactivex.Observable[Any] | None]:
    """Deliver a notification to ``stream`` (if given), then to every consumer in
    registration order (on ``thread``, the sync client's consumer thread, when given; else on
    the loop).

    A consumer that returns an Observable holds the following consumers (and, through the
    engine's ordered delivery, the next notification) until it completes; one that completed
    while it was subscribed (``reactivex.empty()``...) holds nothing. A failing consumer is
    logged and does not stop the others.
    """

    hop = loop_hop(session)

    def run_from(value: Any, start: int) -> reactivex.Observable[Any] | None:
        for index in range(start, len(consumers)):
            try:
                result = consumers[index](value)
            except Exception:
                _log.exception("a %s consumer failed", model.__name__)
                continue
            if result is None:
                continue
            if not isinstance(result, reactivex.Observable):
                if not inspect.isawaitable(result):
                    continue  # any other value is ignored
                result = as_observable(result)  # an async def consumer: awaited on the loop
            # the fast path (Started): an Observable that completed while subscribed lets the
            # next consumer run at once; one still working holds the rest until it ends
            started = Started(result, hop=hop)
            if started.ready:
                started.subscription.dispose()  # reactivex's finally_action runs on disposal
                if started.error is not None:
                    log_error(started.error)
                continue
            return started.waiting().pipe(
                ops.ignore_elements(),
                ops.catch(log_error),
                ops.concat(reactivex.defer(functools.partial(remaining, value, index + 1))),
            )
        return None

    def remaining(value: Any, start: int, _scheduler: Any) -> reactivex.Observable[Any]:
        return run_from(value, start) or reactivex.empty()

    def log_error(error: Exception, _source: Any = None) -> reactivex.Observable[Any]:
        _log.error("a %s consumer's Observable failed: %s", model.__name__, error)
        return reactivex.empty()

    failed = f"a {model.__name__} consumer failed"

    def run_blocking(value: Any) -> None:
        for consumer in consumers:
            call_logged(failed, _blocking_call, consumer, value, session)

    def handle(note: IncomingNotification) -> reactivex.Observable[Any] | None:
        observed = stream is not None and stream.observed
        if not consumers and not observed:
            return None
        params: Any = note.params if isinstance(note.params, Mapping) else {}
        value = model.from_wire(params)
        held = None
        if observed and stream is not None:
            held = stream.emit(cast(SessionNotification, value))  # a bounded tap may hold
        if thread is not None:
            rest = thread.submit(lambda: run_blocking(value)) if consumers else None
        else:
            rest = run_from(value, 0)
        if held is None:
            return rest
        return held if rest is None else reactivex.merge(held, rest)

    return handle


def _blocking_call(fn: Callable[[Any], Any], value: Any, session: AcpSession | None) -> None:
    """A sync client's consumer call, off the loop (see ``ConsumerThread``): a returned
    Observable is waited
    for there, and an ``async def`` consumer's coroutine is awaited on the connection's loop
    (either holds the next consumer call, as on the loop)."""
    result = fn(value)
    if isinstance(result, reactivex.Observable):
        wait_for(result, None, what="consumer")
    elif inspect.isawaitable(result):
        loop = session.loop if session is not None else None
        wait_for(as_observable(result, loop), None, what="consumer")
