"""ACP v2 (a **Draft**, experimental) on the client side: negotiation with fallback, the v2 turn.

Opt-in: the client builder's ``protocol_v2()`` (then ``initialize()`` asks for version 2), or an
``rxacp.schema.v2.InitializeRequest`` passed to ``initialize``. The agent's answer decides:

- ``protocolVersion`` 2: the connection speaks v2 from now on. The client's method table
  becomes :data:`rxacp.schema.v2.methods.METHODS` (v1-only calls fail locally, nothing sent),
  ``session/update`` consumers and ``updates()`` get ``rxacp.schema.v2.UpdateSessionNotification``
  and the permission handler gets v2 ``RequestPermissionRequest``\\ s;
- ``protocolVersion`` 1 (an agent that only speaks v1): the client falls back to v1, exactly
  the v1 client (the v1 agent read the v2-shaped ``initialize``: no v1 client capabilities);
- anything else: :class:`~rxacp.errors.AcpProtocolVersionException`.

On a v2 connection a prompt turn (:func:`prompt_turn`) is an Observable of the turn's
``SessionUpdate``\\ s that completes on the ``idle`` ``state_update`` (the v2 form of
``prompt_turn``); ``prompt()`` emits only that idle update.

Not responsible for the v1 calls (``async_client.py``) or the wire (``rxacp.session``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable

from ..capabilities import NegotiatedCapabilities
from ..errors import AcpProtocolVersionException, AcpTimeoutException
from ..schema import InitializeResponse as V1InitializeResponse
from ..schema import methods as m
from ..schema.v2 import InitializeRequest, InitializeResponse, SessionStateUpdate
from ..schema.v2.methods import METHODS
from ..session import AcpObservable
from ._calls import coerce
from .cancellation import CancellationSignal
from .handlers import ClientHandlers, PermissionTracker, _consumers_handler, register_requests

if TYPE_CHECKING:
    from .async_client import AcpAsyncClient

__all__ = [
    "CONTENT_CAPABILITIES_V2",
    "V1_NAMES",
    "initialize",
    "is_turn_end",
    "prompt_turn",
    "switch_handlers",
]

CONTENT_CAPABILITIES_V2 = {
    "image": "session.prompt.image",
    "audio": "session.prompt.audio",
    "resource": "session.prompt.embeddedContext",
}
"""Content block type -> the v2 capability a prompt with it needs (text and links: baseline)."""

V1_NAMES = {m.AUTHENTICATE: "auth/login", m.LOGOUT: "auth/logout"}
"""v1 method names whose v2 method was renamed: ``authenticate()``/``logout()`` keep working."""


def initialize(client: AcpAsyncClient, request: Any) -> AcpObservable[Any]:
    """A v2 ``initialize`` that falls back to v1 when the agent answers 1::

    subscribe ──initialize(2)──▶
    agent 2   ─────────R|        (R: rxacp.schema.v2.InitializeResponse; connection is v2)
    agent 1   ─────────R|        (R: rxacp.schema.InitializeResponse; connection stays v1)
    other     ─────────X         (AcpProtocolVersionException)
    """
    if request is None:
        info = client._client_info
        info = info.to_wire() if hasattr(info, "to_wire") else info
        request = InitializeRequest.of(info or None, {})
    params = coerce(METHODS[m.INITIALIZE], request)
    requested = int(getattr(params, "protocol_version", 2))

    def answered(raw: Any) -> Any:
        version = raw.get("protocolVersion") if isinstance(raw, dict) else None
        if version == 2:
            response = InitializeResponse.from_wire(raw)
            _become_v2(client, response)
            return response
        if version == 1:
            return client._on_initialized(requested, V1InitializeResponse.from_wire(raw))
        client.session.close()
        raise AcpProtocolVersionException(requested, version, (1, 2))

    source: AcpObservable[Any] = client.session.send_request(m.INITIALIZE, params, None).pipe(
        ops.map(answered), ops.catch(client._with_stderr_tail)
    )
    return source


def _become_v2(client: AcpAsyncClient, response: InitializeResponse) -> None:
    client._protocol_version = 2
    client.session.accept_batches = True  # v2 transports.mdx: batch arrays are messages too
    client._methods = METHODS
    client._content_capabilities = CONTENT_CAPABILITIES_V2
    client._initialize_response = response  # type: ignore[assignment]
    client._agent_capabilities = NegotiatedCapabilities(
        response.capabilities or {}, 2, peer="agent", peer_info=response.info
    )
    if client._handlers is not None:
        switch_handlers(client, client._handlers, client._permissions)


def switch_handlers(
    client: AcpAsyncClient, handlers: ClientHandlers, permissions: PermissionTracker
) -> None:
    """Re-register the client's agent→client handlers with the v2 models (on the loop, from
    the ``initialize`` answer, before any later message is handled; the ``_`` extension
    handlers stay as registered)."""
    session = client.session
    for spec in m.METHODS.values():
        if spec.side == "client":
            session.remove_handler(spec.name)
    requests = (s for s in METHODS.values() if s.side == "client" and s.kind == "request")
    register_requests(session, handlers, permissions, requests, client._sessions)
    session.set_notification_handler(
        m.SESSION_UPDATE,
        _consumers_handler(
            METHODS[m.SESSION_UPDATE].params_type,
            handlers.update_consumers,
            handlers.update_stream,
            handlers.consumer_thread,
            session,
        ),
    )


def is_turn_end(update: Any, running_seen: bool) -> bool:
    """True for the ``idle`` ``state_update`` that ends a turn: one with a stop reason, or
    any ``idle`` after the turn reported ``running``/``requires_action``."""
    if not isinstance(update, SessionStateUpdate) or update.state != "idle":
        return False
    return update.stop_reason is not None or running_seen


def prompt_turn(
    client: AcpAsyncClient, request: Any, stop: CancellationSignal | None
) -> AcpObservable[Any]:
    """The v2 turn: ``session/prompt`` (accepted at once), then every ``SessionUpdate`` of the
    session until the ``idle`` ``state_update`` that ends it (emitted last), then completion::

        subscribe ──prompt──▶ ◀─{messageId}
        emits     ──user_message──running──u──u──idle(end_turn)|
        stop.cancel() ──u──C──u──idle(cancelled)|     (C: session/cancel, sent once)
        dispose   ──u──|  → session/cancel (once, if the prompt was written)
        refused   ──X                                (the agent's error, e.g. -32600 busy)

    Already cancelled at subscription: ``idle(cancelled)|`` and nothing is sent.
    """
    params = coerce(METHODS[m.SESSION_PROMPT], request)
    session_id = str(getattr(params, "session_id", ""))

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        if stop is not None and stop.is_cancelled():
            observer.on_next(SessionStateUpdate(state="idle", stop_reason="cancelled"))
            observer.on_completed()
            return Disposable()
        lock = threading.Lock()
        state = {"done": False, "running": False, "written": False, "cancelled": False}

        def finish() -> bool:
            with lock:
                was, state["done"] = state["done"], True
            return not was

        def on_update(note: Any) -> None:
            if note.session_id != session_id or state["done"]:
                return None
            update = note.update
            if isinstance(update, SessionStateUpdate) and update.state != "idle":
                state["running"] = True
            end = is_turn_end(update, bool(state["running"]))
            observer.on_next(update)
            if end and finish():
                cleanup()
                observer.on_completed()
            return None

        def on_error(error: Exception) -> None:
            if finish():
                cleanup()
                observer.on_error(error)

        def cancel_once() -> None:
            with lock:
                if state["cancelled"]:
                    return
                state["cancelled"] = True
            client._cancel_now(session_id)  # at once (cancel() is cold)

        def on_stop() -> None:
            if not state["done"]:
                cancel_once()

        remove_tap = client._updates.tap(on_update)
        remove_stop = stop.add_listener(on_stop) if stop is not None else None

        timer: list[Any] = []

        def cleanup() -> None:
            remove_tap()
            if remove_stop is not None:
                remove_stop()
            if timer:
                timer[0].dispose()

        def timed_out() -> None:  # the builder's prompt_timeout: a disposal, then the error
            if finish():
                cleanup()
                if state["written"]:
                    cancel_once()
                observer.on_error(AcpTimeoutException(m.SESSION_PROMPT, bound or 0.0))

        bound = client.prompt_timeout
        if bound is not None:
            session = client.session
            timer.append(
                session.scheduler.schedule_relative(
                    bound, lambda _s, _st: session.run_on_loop(timed_out)
                )
            )

        def before() -> None:
            client._gate(METHODS[m.SESSION_PROMPT], params)
            state["written"] = True

        sub = client.session.send_request(
            m.SESSION_PROMPT, params, METHODS[m.SESSION_PROMPT].result_type, before=before
        ).subscribe(lambda _accepted: None, on_error, scheduler=scheduler)

        def dispose() -> None:
            if finish():
                cleanup()
                if state["written"]:
                    cancel_once()  # disposal stops the turn (DESIGN §10), once
            sub.dispose()

        return Disposable(dispose)

    return AcpObservable(subscribe)


def last_update(turn: AcpObservable[Any]) -> AcpObservable[Any]:
    """A v2 ``prompt()``: only the turn's last update (the ending ``idle`` ``state_update``)."""
    result: AcpObservable[Any] = turn.pipe(ops.last())
    return result
