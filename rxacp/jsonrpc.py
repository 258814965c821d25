"""JSON-RPC 2.0 codec: turn one frame into a typed message and one message object into bytes.

A frame (one line of UTF-8 JSON, or an already-decoded value from an in-memory transport) is
decoded by :func:`decode_json` and classified by :func:`classify` into exactly one of
:class:`Request`, :class:`Notification`, :class:`Response` or :class:`ErrorResponse`;
:func:`parse_message` does both. :func:`serialize` writes one compact line (no newline inside,
none appended). The ``*_obj`` helpers build the wire dicts.

Decisions (JSON-RPC 2.0 + ACP, and where the spec leaves room):

- Ids are ``int`` (never ``bool``, any size), ``str`` or ``null`` and are kept with their exact
  type, so answers echo them unchanged. A float, bool, object or array id is invalid.
- A message with ``"method"`` is a request when it has an ``"id"`` key (``"id": null`` included,
  which ACP's ``RequestId`` allows; the answer echoes ``null``), else a notification. Other keys
  (even ``result``) are then ignored.
- ``params``, when present, must be an object or an array; ``"params": null`` is invalid.
  An absent ``params`` is ``None`` in the message.
- A message without ``"method"`` but with ``id``/``result``/``error`` is a response. It needs a
  valid id (an error answer with no ``id`` at all is read as ``"id": null``, as some peers
  answer notifications that way) and exactly one of ``result``/``error``, otherwise
  :class:`InvalidMessage` with ``answerable=False`` (responses are never answered; ``id`` is
  filled when it was valid, so the engine may settle that pending request). ``"error": null``
  counts as absent and ``"result": null`` beside an error is ignored (JSON-RPC 1.0 style peers).
- A response whose ``error`` member is not a well-formed error object still becomes an
  :class:`ErrorResponse`, so the pending request settles instead of hanging. Its error is
  normalised to ``{"code": int, "message": str, "data"?}``: a bad ``code`` becomes ``-32603``,
  a bad ``message`` a fixed text, and the original member goes to ``data`` if it had none.
- Not an object (array/batch, number, string, ``null``), no ``"jsonrpc": "2.0"``, or an object
  with none of ``method``/``id``/``result``/``error``: :class:`InvalidMessage`, answerable
  (with the id when a valid one is there) unless it looks like a notification or a response.
- Unparseable input raises :class:`ParseError`: invalid UTF-8, bad or truncated JSON, an empty
  or blank frame, ``NaN``/``Infinity`` literals (Python's ``json`` would accept them), nesting
  deep enough to hit the recursion limit, integers over Python's digit limit (4300 digits).
  Numbers that overflow a float (``1e400``) parse as ``inf`` and cannot be serialized again.
- Duplicate keys in an object: the last one wins (Python's ``json`` behaviour).
- :func:`parse_message` takes a ``str`` as JSON text; a decoded JSON *string* value (never a
  valid message) must go to :func:`classify` instead.
- :func:`serialize` uses ``ensure_ascii=False``; a string holding a lone surrogate (possible
  after decoding ``"\\ud800"``) cannot be UTF-8 encoded, so that one message falls back to
  ASCII escapes, which round-trips exactly.
- Speed: decoding and encoding go through ``pydantic_core`` (``from_json``/``to_json``, 3-4x
  faster than ``json`` on ACP-sized messages) and fall back to Python's ``json`` whenever that
  path refuses a value or might differ from it, so every rule above holds either way.
  ``pydantic_core`` also writes values ``json`` cannot (``datetime``, ``UUID``, ``bytes``,
  ``Enum``, sets, dataclasses, pydantic models) in pydantic's JSON form instead of raising
  ``TypeError``, and a ``None`` dict key as ``"None"`` (``json``: ``"null"``); a value neither
  can write still raises ``TypeError``.

This module is *not* responsible for framing lines, ids allocation, pending requests, choosing
which error to answer, mapping exceptions to error objects (that is :mod:`rxacp.errors`) or
validating ``params``/``result`` against the ACP schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from pydantic_core import from_json as _fast_decode
from pydantic_core import to_json as _fast_encode

__all__ = [
    "JSONRPC_VERSION",
    "ErrorResponse",
    "Id",
    "InvalidMessage",
    "Message",
    "Notification",
    "ParseError",
    "Request",
    "Response",
    "classify",
    "decode_json",
    "error_obj",
    "notification_obj",
    "parse_message",
    "request_obj",
    "response_obj",
    "serialize",
]

JSONRPC_VERSION: Final = "2.0"
"""The only ``jsonrpc`` member value accepted and written."""

Id: TypeAlias = int | str | None
"""A JSON-RPC id; ``None`` is the JSON ``null`` id."""

_MISSING: Final[Any] = object()
_INTERNAL_ERROR: Final = -32603
_PARSE_ERROR: Final = -32700
_INVALID_REQUEST: Final = -32600


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Request:
    """An incoming or outgoing request: it must be answered exactly once.

    ``id`` is ``int`` or ``str`` (``None`` only for the discouraged ``"id": null``); ``params``
    is the raw JSON object/array, or ``None`` when absent.
    """

    id: Id
    method: str
    params: Any

    def to_obj(self) -> dict[str, Any]:
        """The wire dict of this request."""
        return request_obj(self.id, self.method, self.params)


@dataclass(frozen=True, slots=True)
class Notification:
    """A notification: never answered. ``params`` is the raw JSON value or ``None`` if absent."""

    method: str
    params: Any

    def to_obj(self) -> dict[str, Any]:
        """The wire dict of this notification."""
        return notification_obj(self.method, self.params)


@dataclass(frozen=True, slots=True)
class Response:
    """A successful answer; ``result`` is the raw JSON value (``None`` for ``null``)."""

    id: Id
    result: Any

    def to_obj(self) -> dict[str, Any]:
        """The wire dict of this response."""
        return response_obj(self.id, self.result)


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """An error answer; ``error`` is ``{"code": int, "message": str, "data"?: Any}``."""

    id: Id
    error: dict[str, Any]

    def to_obj(self) -> dict[str, Any]:
        """The wire dict of this error response."""
        return error_obj(self.id, self.error)


Message: TypeAlias = Request | Notification | Response | ErrorResponse
"""Any classified JSON-RPC 2.0 message."""


# --------------------------------------------------------------------------- errors


class ParseError(Exception):
    """The frame is not JSON text (invalid UTF-8, bad/truncated JSON, NaN, too deep...).

    The engine answers ``-32700`` with ``id: null``; :meth:`to_error` builds that error object.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def to_error(self) -> dict[str, Any]:
        """The ``-32700`` error object for this failure."""
        return {"code": _PARSE_ERROR, "message": f"Parse error: {self.reason}"}


class InvalidMessage(Exception):
    """Valid JSON that is not a JSON-RPC 2.0 message.

    ``answerable`` is ``False`` when no answer may be sent (it looks like a notification or a
    response); otherwise the engine answers ``-32600`` with ``id`` (``None`` when no valid id
    could be recovered). ``id`` may be set even when not answerable (a broken response with a
    valid id).
    """

    def __init__(self, reason: str, *, id: Id = None, answerable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.id = id
        self.answerable = answerable

    def __repr__(self) -> str:
        return (
            f"InvalidMessage(reason={self.reason!r}, id={self.id!r}, "
            f"answerable={self.answerable!r})"
        )

    def to_error(self) -> dict[str, Any]:
        """The ``-32600`` error object for this failure."""
        return {"code": _INVALID_REQUEST, "message": f"Invalid request: {self.reason}"}


# --------------------------------------------------------------------------- decoding


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_decoder: Final = json.JSONDecoder(parse_constant=_reject_constant)
_decode: Final = _decoder.decode


def decode_json(frame: bytes | str) -> Any:
    """Decode one frame of strict UTF-8 JSON text; raise :class:`ParseError` if it is not.

    ``bytearray`` and ``memoryview`` are accepted like ``bytes``. Surrounding JSON whitespace
    (including a trailing ``\\r``) is allowed. Any other type is a ``TypeError``.
    """
    if type(frame) is str:
        text = frame
    elif isinstance(frame, bytes | bytearray | memoryview):
        try:
            text = frame.decode("utf-8") if type(frame) is bytes else bytes(frame).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"invalid UTF-8 at byte {exc.start}") from None
    elif isinstance(frame, str):
        text = str(frame)
    else:
        raise TypeError(f"a frame must be bytes or str, not {type(frame).__name__}")
    try:
        return _decode(text)
    except RecursionError:
        raise ParseError("JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, integer digit limit
        raise ParseError(str(exc) or "invalid JSON") from None


def parse_message(frame: bytes | str | Any) -> Message:
    """Decode (for ``bytes``/``str``) and classify one frame.

    Any other value is taken as already-decoded JSON. Raises :class:`ParseError` or
    :class:`InvalidMessage`, nothing else.
    """
    t = type(frame)
    if t is bytes or t is str:
        try:  # fast path; anything it refuses is decided by the exact (stdlib) path
            frame = _fast_decode(frame, allow_inf_nan=False)
        except Exception:  # ValueError, or TypeError for a str with surrogates
            frame = decode_json(frame)
    elif t is bytearray or t is memoryview:
        frame = decode_json(frame)
    return classify(frame)


def classify(obj: Any) -> Message:
    """Classify one decoded JSON value as a JSON-RPC 2.0 message; see the module docstring.

    Raises :class:`InvalidMessage` when it is not one.
    """
    if type(obj) is not dict and not isinstance(obj, dict):
        raise InvalidMessage(f"a message must be a JSON object, not {_json_type(obj)}")
    method = obj.get("method", _MISSING)
    if method is not _MISSING:
        id_ = obj.get("id", _MISSING)
        params = obj.get("params", _MISSING)
        if (
            obj.get("jsonrpc") == JSONRPC_VERSION
            and type(method) is str
            and (params is _MISSING or type(params) is dict or type(params) is list)
        ):
            if id_ is _MISSING:
                return Notification(method, None if params is _MISSING else params)
            t = type(id_)
            if t is int or t is str or id_ is None:
                return Request(id_, method, None if params is _MISSING else params)
        return _classify_call_slow(obj, method, params, id_)
    if "id" in obj or "result" in obj or "error" in obj:
        return _classify_response(obj)
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        raise InvalidMessage(_version_reason(obj))
    raise InvalidMessage("not a request, notification or response (no method, id or result)")


def _classify_call_slow(obj: dict[str, Any], method: Any, params: Any, id_: Any) -> Message:
    """Full checks of a request/notification the fast path did not accept (errors, subclasses)."""
    if id_ is _MISSING:
        answerable, echo = False, None
    elif _is_id(id_):
        answerable, echo = True, id_
    else:
        raise InvalidMessage(f"invalid id: {_json_type(id_)} (must be integer, string or null)")
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        raise InvalidMessage(_version_reason(obj), id=echo, answerable=answerable)
    if not isinstance(method, str):
        raise InvalidMessage(
            f"method must be a string, not {_json_type(method)}", id=echo, answerable=answerable
        )
    if params is _MISSING:
        params = None
    elif not isinstance(params, dict | list):
        raise InvalidMessage(
            f"params must be an object or an array, not {_json_type(params)}",
            id=echo,
            answerable=answerable,
        )
    if answerable:
        return Request(echo, method, params)
    return Notification(method, params)


def _classify_response(obj: dict[str, Any]) -> Message:
    id_ = obj.get("id", _MISSING)
    if id_ is _MISSING:
        if obj.get("error") is None or obj.get("result") is not None:
            raise InvalidMessage("response without an id", answerable=False)
        id_ = None  # an error answer without an id means "id: null" (codex-acp sends these)
    if not _is_id(id_):
        raise InvalidMessage(f"invalid response id: {_json_type(id_)}", answerable=False)
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        raise InvalidMessage(_version_reason(obj), id=id_, answerable=False)
    error = obj.get("error")  # "error": null counts as absent (JSON-RPC 1.0 style peers)
    if error is None:
        if "result" not in obj:
            raise InvalidMessage("response without result or error", id=id_, answerable=False)
        return Response(id_, obj["result"])
    if obj.get("result") is not None:
        raise InvalidMessage("response with both result and error", id=id_, answerable=False)
    return ErrorResponse(id_, _normalise_error(error))


def _normalise_error(error: Any) -> dict[str, Any]:
    if type(error) is dict:
        code = error.get("code")
        if type(code) is int and type(error.get("message")) is str:
            return error
    if not isinstance(error, dict):
        return {"code": _INTERNAL_ERROR, "message": "Malformed error object", "data": error}
    fixed = dict(error)
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        fixed["code"] = _INTERNAL_ERROR
    if not isinstance(error.get("message"), str):
        fixed["message"] = "Malformed error object"
    if fixed != error and "data" not in error:
        fixed["data"] = error
    return fixed


def _is_id(value: Any) -> bool:
    return value is None or (isinstance(value, int | str) and not isinstance(value, bool))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number (non-integer)" if isinstance(value, float) else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array (batches are not supported)"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _version_reason(obj: dict[str, Any]) -> str:
    if "jsonrpc" not in obj:
        return 'missing "jsonrpc": "2.0"'
    return f'"jsonrpc" must be "2.0", not {repr(obj["jsonrpc"])[:40]}'


# --------------------------------------------------------------------------- encoding


def _encode_default(value: Any) -> Any:
    if isinstance(value, Request | Notification | Response | ErrorResponse):
        return value.to_obj()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encode: Final = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_encode_default
).encode
_encode_ascii: Final = json.JSONEncoder(
    ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_encode_default
).encode


def serialize(obj: Any) -> bytes:
    """One message as one line of compact UTF-8 JSON: no newline inside, none appended.

    ``obj`` is a wire dict (see the ``*_obj`` helpers) or a :data:`Message`. Raises
    ``ValueError`` for NaN/Infinity, circular or too deeply nested values and ``TypeError`` for
    values JSON cannot represent.
    """
    if type(obj) is dict:
        try:
            data: bytes = _fast_encode(obj)
        except Exception:  # the exact path below raises the documented error
            pass
        else:
            if b"NaN" not in data and b"Infinity" not in data:
                return data
    try:
        return _encode(obj).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a string: escape it instead
        return _encode_ascii(obj).encode("ascii")
    except RecursionError:
        raise ValueError("value nested too deeply to serialize") from None


def request_obj(id: Id, method: str, params: Any) -> dict[str, Any]:
    """A request wire dict; ``params=None`` omits the member."""
    if params is None:
        return {"jsonrpc": JSONRPC_VERSION, "id": id, "method": method}
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "method": method, "params": params}


def notification_obj(method: str, params: Any) -> dict[str, Any]:
    """A notification wire dict; ``params=None`` omits the member."""
    if params is None:
        return {"jsonrpc": JSONRPC_VERSION, "method": method}
    return {"jsonrpc": JSONRPC_VERSION, "method": method, "params": params}


def response_obj(id: Id, result: Any) -> dict[str, Any]:
    """A success response wire dict (``result=None`` is written as ``"result": null``)."""
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "result": result}


def error_obj(id: Id, error: dict[str, Any]) -> dict[str, Any]:
    """An error response wire dict; ``error`` is ``{"code", "message", "data"?}``."""
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "error": error}
