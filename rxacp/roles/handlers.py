"""Typed handlers from the method table, for both roles: the one handler adapter.

The client builders, the agent core and the decorator dispatcher all turn a user's function into
what the engine calls the same way, driven by the method's :class:`MethodSpec`:

* :func:`parse_params`: raw params → the method's params model; a validation error is
  ``-32602`` ``"Invalid params: <where>: <what>"`` (the same text on either side);
* :func:`run_handler`: the function's outcome as an Observable — on the worker pool for a
  blocking API, else its return value (Observable, awaitable or plain value) as is;
* the fast path of a non-blocking handler: a plain value, or an Observable that settled while
  it was subscribed (:class:`~rxacp.session.adapters.Started`), answers the request at once
  (``IncomingRequest.respond``), with no Rx pipeline;
* :func:`empty_result`: ``None`` (or an empty Observable) answers the method's empty response,
  or ``-32603`` naming the handler when that response has required fields;
* :func:`request_handler` / :func:`notification_handler`: the three above, composed;
* :func:`unhandled_hint` / :func:`builder_method`: what a ``-32601`` says to register;
* :func:`check_ext_method` / :func:`check_raw_method`: which method names a registration may
  use (ACP reserves names starting with ``_`` for extensions; ``$/`` is the engine's);
* :func:`capabilities_from_handlers`: the capabilities the registered handlers imply, from the
  table's capability paths.

This module is *not* responsible for the prompt turn, permission tracking or which handlers
exist (the client and agent layers decide; they pass a ``before`` hook for their own rules).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

import pydantic
import reactivex
from reactivex import operators as ops

from ..errors import AcpErrorCodes, AcpProtocolException
from ..schema._base import AcpModel, validation_errors
from ..schema.methods import METHODS, MethodSpec
from ..session.adapters import Started, as_observable
from ..session.incoming import IncomingNotification, IncomingRequest

if TYPE_CHECKING:
    from ..session.session import AcpSession

__all__ = [
    "Role",
    "builder_method",
    "capabilities_from_handlers",
    "check_ext_method",
    "check_raw_method",
    "coerce_params",
    "empty_result",
    "handler_name",
    "loop_hop",
    "notification_handler",
    "parse_params",
    "request_handler",
    "run_handler",
    "unhandled_hint",
]

Role = Literal["client", "agent"]
"""The side whose builder registers the handler."""

Before = Callable[[IncomingRequest, Any], "Callable[[], None] | None"]
"""Runs with the parsed params before the user's handler; may return a cleanup run when the
request is answered (or the handler could not start)."""

_BUILDER = {"client": "AcpClient", "agent": "AcpAgent"}
_WHY = {
    "session/request_permission": "this client has no permission handler, so permission "
    "requests are refused; "
}


def check_ext_method(method: Any, where: str = "") -> str:
    """Return ``method`` if it is an extension method name, else raise ``ValueError``.

    ``where`` names the API that was called (e.g. ``"ext_request_handler"``) in the message.
    """
    if not isinstance(method, str) or not method.startswith("_"):
        prefix = f"{where}: " if where else ""
        raise ValueError(
            f"{prefix}extension method names must start with '_' (e.g. '_myorg/ping'), "
            f"got {method!r}"
        )
    return method


def check_raw_method(method: Any, where: str, reserved: Mapping[str, str]) -> str:
    """Return ``method`` if a raw handler may serve it, else raise ``ValueError``.

    Any JSON-RPC method name is allowed except ``$/`` methods (the engine's) and ``reserved``,
    the methods whose protocol rules the SDK itself implements (mapped to the typed API to use).
    """
    if not isinstance(method, str) or not method:
        raise ValueError(f"{where}: the method must be a non-empty string, got {method!r}")
    if method.startswith("$/"):
        raise ValueError(f"{where}: {method!r} is handled by the JSON-RPC engine itself")
    instead = reserved.get(method)
    if instead is not None:
        raise ValueError(
            f"{where}: {method!r} has protocol rules rxacp implements; use {instead} instead"
        )
    return method


def parse_params(params_type: Any, raw: Any) -> Any:
    """Validate raw params into ``params_type`` (``None``/``Any``: unchanged); on failure
    ``-32602`` ``"Invalid params: <where>: <what>"`` with the (capped) error list as data."""
    if params_type is None or params_type is Any:
        return raw
    try:
        return params_type.from_wire(raw if raw is not None else {})
    except pydantic.ValidationError as exc:
        errors = validation_errors(exc)
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
        what = errors[0]["msg"] if errors else "invalid"
        raise AcpProtocolException(
            AcpErrorCodes.INVALID_PARAMS,
            f"Invalid params: {where or 'params'}: {what}",
            errors,
        ) from exc


def coerce_params(params_type: Any, value: Any) -> Any:
    """An outgoing call's params: a model of the right type, or a dict validated into it."""
    if params_type is None or params_type is Any or isinstance(value, params_type):
        return value
    if isinstance(value, dict):
        return params_type.from_wire(value)
    return value


def empty_result(result_type: Any, value: Any, handler: str = "handler") -> Any:
    """``value``, or for ``None`` the method's empty response (``{}`` on the wire); ``-32603``
    naming ``handler`` when that response has required fields."""
    if value is not None:
        return value
    if result_type is None or result_type is Any:
        return {}
    try:
        return result_type()
    except pydantic.ValidationError as exc:
        raise AcpProtocolException.internal_error(
            f"{handler} returned None but {result_type.__name__} has required fields"
        ) from exc


def handler_name(fn: Callable[..., Any]) -> str:
    """A handler's name for logs and errors (its qualified name)."""
    return str(getattr(fn, "__qualname__", None) or repr(fn))


def run_handler(
    session: AcpSession,
    fn: Callable[..., Any],
    *args: Any,
    blocking: bool,
    lane: str | None = None,
) -> reactivex.Observable[Any]:
    """``fn(*args)`` as an Observable: on the worker pool (in ``lane``: a request's method)
    when ``blocking``, else its return value (an Observable, an awaitable awaited on the
    loop, or ``-value|``)."""
    if blocking:
        return session.run_blocking(lambda: fn(*args), name=handler_name(fn), lane=lane)
    return as_observable(fn(*args))


def request_handler(
    session: AcpSession,
    spec: MethodSpec | None,
    fn: Callable[[Any], Any],
    *,
    blocking: bool,
    before: Before | None = None,
) -> Callable[[IncomingRequest], reactivex.Observable[Any] | None]:
    """The engine handler of a typed request (``spec``) or an extension request (``None``:
    raw params, any JSON result, ``None`` answers ``{}``)::

        params ok:        --R|      (R: the handler's first value, None -> empty response)
        params invalid:   X         (-32602 "Invalid params: <where>: <what>")

    A non-blocking handler's plain value, or an Observable that settled while it was
    subscribed, answers at once (the engine gets ``None``: answered).
    """
    params_type = spec.params_type if spec is not None else None
    result_type = spec.result_type if spec is not None else None
    label = f"the {spec.name} handler" if spec is not None else "the handler"

    def answer(value: Any) -> Any:
        return empty_result(result_type, value, label)

    def handle(req: IncomingRequest) -> reactivex.Observable[Any] | None:
        params = parse_params(params_type, req.params)
        cleanup = before(req, params) if before is not None else None
        started: Started | None = None
        try:
            if blocking:  # each request method in a worker lane of its own
                source = run_handler(session, fn, params, blocking=True, lane=req.method)
            else:
                result = fn(params)
                if inspect.isawaitable(result):
                    result = as_observable(result)
                if not isinstance(result, reactivex.Observable):
                    source = None
                else:
                    started = Started(result, first=True, hop=loop_hop(session))
                    source = None if started.ready else started.waiting()
        except BaseException:
            if cleanup is not None:
                cleanup()
            raise
        if source is None:  # the fast path: a plain value, or an Observable already settled
            if started is None:
                _answer_now(req, None, result, answer, cleanup)
            else:
                started.subscription.dispose()  # answered by its first value, or its end
                _answer_now(req, started.error, started.value, answer, cleanup)
            return None
        answered = source.pipe(ops.default_if_empty(None), ops.map(answer))
        return answered if cleanup is None else answered.pipe(ops.finally_action(cleanup))

    return handle


def loop_hop(session: AcpSession | None) -> Callable[[Callable[[], None]], object] | None:
    """How an outcome another thread produced reaches the loop behind that thread's
    hand-offs (``Started``'s ``hop``): the session's ``queue_on_loop``."""
    return None if session is None else session.queue_on_loop


def _answer_now(
    req: IncomingRequest,
    error: BaseException | None,
    value: Any,
    answer: Callable[[Any], Any],
    cleanup: Callable[[], None] | None,
) -> None:
    try:
        if error is not None:
            req.respond_error(error)
        else:
            req.respond(answer(value))  # answer() may raise: the engine answers that error
    finally:
        if cleanup is not None:
            cleanup()


def notification_handler(
    session: AcpSession, spec: MethodSpec | None, fn: Callable[[Any], Any], *, blocking: bool
) -> Callable[[IncomingNotification], reactivex.Observable[Any] | None]:
    """The engine handler of a typed (``spec``) or extension (``None``) notification; the
    handler's Observable or awaitable holds the next notification until it finished."""
    params_type = spec.params_type if spec is not None else None

    def handle(note: IncomingNotification) -> reactivex.Observable[Any] | None:
        return run_handler(session, fn, parse_params(params_type, note.params), blocking=blocking)

    return handle


def builder_method(method: str, role: Role) -> str:
    """The builder call that registers a handler for ``method`` on ``role``'s side."""
    spec = METHODS.get(method)
    if spec is not None and spec.side in (role, "both"):
        return f".{spec.python_name}_handler(fn)"
    return f".ext_request_handler({method!r}, fn)"


def unhandled_hint(role: Role) -> Callable[[str], str | None]:
    """What the ``-32601`` of an unhandled request tells the peer to register."""

    def hint(method: str) -> str | None:
        spec = METHODS.get(method)
        known = spec is not None and spec.side in (role, "both") and spec.kind == "request"
        if not known and not method.startswith("_"):
            return None
        call = builder_method(method, role)
        return f"{_WHY.get(method, '')}register a handler with {_BUILDER[role]} builder {call}"

    return hint


def capabilities_from_handlers(
    specs: Iterable[MethodSpec], model: type[AcpModel]
) -> dict[str, Any]:
    """The capabilities (wire JSON of ``model``) that handlers for ``specs`` imply: each
    capability path of the table present — ``true`` where the schema field is a boolean
    (``loadSession``, ``fs.readTextFile``), ``{}`` where it is an object
    (``sessionCapabilities.list``, ``auth.logout``)."""
    caps: dict[str, Any] = {}
    for spec in specs:
        if spec.capability is None:
            continue
        node, owner = caps, model
        *parents, leaf = spec.capability.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            owner = _field_model(owner, part)
        node.setdefault(leaf, True if _is_bool_field(owner, leaf) else {})
    return caps


def _field(model: Any, wire_name: str) -> Any:
    fields = getattr(model, "model_fields", {})
    for name, info in fields.items():
        if (info.alias or name) == wire_name:
            return info.annotation
    return None


def _field_model(model: Any, wire_name: str) -> Any:
    annotation = _field(model, wire_name)
    for arg in (annotation, *get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, AcpModel):
            return arg
    return None


def _is_bool_field(model: Any, wire_name: str) -> bool:
    annotation = _field(model, wire_name)
    return annotation is bool or bool in get_args(annotation)
