"""The rxacp exception tree and the one mapping between exceptions and JSON-RPC errors.

Every error rxacp raises or emits is an :class:`AcpException`::

    AcpException
    ├── AcpProtocolException      an error answer on the wire (code, message, data)
    ├── AcpCapabilityException    a call the peer did not advertise; nothing was sent
    ├── AcpConnectionException    the connection ended (EOF, peer exit, close) before an answer
    ├── AcpTimeoutException       a request timed out (also a builtin ``TimeoutError``)
    └── AcpProtocolVersionException  the agent answered ``initialize`` with a version we lack

:func:`exception_to_error` turns any exception into a wire error object (the only place that
decides which code an exception gets), and :func:`error_to_exception` turns a wire error object
back into an :class:`AcpProtocolException`.

This module is *not* responsible for framing or sending anything; it only names errors.
"""

from __future__ import annotations

import enum
import json
import logging
from typing import Any

import pydantic

__all__ = [
    "AcpCapabilityException",
    "AcpConnectionException",
    "AcpErrorCodes",
    "AcpException",
    "AcpProtocolException",
    "AcpProtocolVersionException",
    "AcpRemoteException",
    "AcpTimeoutException",
    "error_to_exception",
    "exception_to_error",
]

_log = logging.getLogger("rxacp.errors")


class AcpErrorCodes(enum.IntEnum):
    """JSON-RPC 2.0 and ACP error codes (see the spec's ``ErrorCode``).

    Never raises on a code it does not know: ``AcpErrorCodes(-32099)`` is a member named
    ``UNKNOWN`` with that value (a peer may send any code). :meth:`describe` gives a short text
    for any code, ``is_*`` test a code. The Java SDK's own codes are here by their Java names as
    plain ints (``AcpErrorCodes.SESSION_NOT_FOUND == -32002``): two of them reuse spec values
    with another meaning (Java's ``CONCURRENT_PROMPT`` is the spec's ``AUTH_REQUIRED``,
    ``-32000``), so they are not members.
    """

    PARSE_ERROR = -32700
    """Invalid JSON was received."""
    INVALID_REQUEST = -32600
    """The JSON sent is not a valid request object (or the request is not allowed now)."""
    METHOD_NOT_FOUND = -32601
    """The method does not exist or is not available."""
    INVALID_PARAMS = -32602
    """Invalid method parameters."""
    INTERNAL_ERROR = -32603
    """Internal error of the handler."""
    REQUEST_CANCELLED = -32800
    """The request was cancelled (``$/cancel_request``, shutdown or a time limit)."""
    AUTH_REQUIRED = -32000
    """Authentication is required before this operation."""
    RESOURCE_NOT_FOUND = -32002
    """A referenced resource (a file, a session...) does not exist."""

    # -- the Java SDK's codes (acp-core AcpErrorCodes), by name; not spec codes ----------------
    CONCURRENT_PROMPT = enum.nonmember(-32000)
    """Java: a prompt while the session's turn is active (rxacp answers ``-32600``)."""
    CAPABILITY_NOT_SUPPORTED = enum.nonmember(-32001)
    """Java: the peer does not support the capability."""
    SESSION_NOT_FOUND = enum.nonmember(-32002)
    """Java: unknown session id (the spec's ``RESOURCE_NOT_FOUND``)."""
    NOT_INITIALIZED = enum.nonmember(-32003)
    """Java: a call before ``initialize``."""
    AUTHENTICATION_REQUIRED = enum.nonmember(-32004)
    """Java: authentication required (the spec says ``-32000``)."""
    PERMISSION_DENIED = enum.nonmember(-32005)
    """Java: the user denied permission."""

    @classmethod
    def _missing_(cls, value: object) -> AcpErrorCodes | None:
        """An unknown integer code: a member named ``UNKNOWN`` with that value (no ValueError)."""
        if isinstance(value, int) and not isinstance(value, bool):
            member = int.__new__(cls, value)
            member._name_ = "UNKNOWN"
            member._value_ = value
            return member
        return None

    @staticmethod
    def describe(code: int) -> str:
        """A short description of any code, e.g. ``"Method not found (-32601)"``; a code rxacp
        does not know says so (``"Unknown error (-32099)"``), with the Java SDK's meaning where
        it has one (``"Permission denied (-32005, Java SDK code)"``)."""
        code = int(code)
        text = _DESCRIPTIONS.get(code)
        if text is not None:
            java = _JAVA_DESCRIPTIONS.get(code)
            return f"{text} ({code}; Java SDK: {java})" if java is not None else f"{text} ({code})"
        java = _JAVA_DESCRIPTIONS.get(code)
        if java is not None:
            return f"{java} ({code}, Java SDK code)"
        if -32099 <= code <= -32000:
            return f"Server error ({code})"
        return f"Unknown error ({code})"

    @staticmethod
    def is_known(code: int) -> bool:
        """Whether ``code`` is a spec code rxacp knows (a member other than ``UNKNOWN``)."""
        return int(code) in _DESCRIPTIONS

    @staticmethod
    def is_parse_error(code: int) -> bool:
        """``-32700``."""
        return int(code) == AcpErrorCodes.PARSE_ERROR

    @staticmethod
    def is_invalid_request(code: int) -> bool:
        """``-32600`` (also a prompt on a busy session)."""
        return int(code) == AcpErrorCodes.INVALID_REQUEST

    @staticmethod
    def is_method_not_found(code: int) -> bool:
        """``-32601``."""
        return int(code) == AcpErrorCodes.METHOD_NOT_FOUND

    @staticmethod
    def is_invalid_params(code: int) -> bool:
        """``-32602``."""
        return int(code) == AcpErrorCodes.INVALID_PARAMS

    @staticmethod
    def is_internal_error(code: int) -> bool:
        """``-32603``."""
        return int(code) == AcpErrorCodes.INTERNAL_ERROR

    @staticmethod
    def is_request_cancelled(code: int) -> bool:
        """``-32800``."""
        return int(code) == AcpErrorCodes.REQUEST_CANCELLED

    @staticmethod
    def is_auth_required(code: int) -> bool:
        """``-32000`` (spec), or the Java SDK's ``AUTHENTICATION_REQUIRED`` ``-32004``."""
        return int(code) in (AcpErrorCodes.AUTH_REQUIRED, -32004)

    @staticmethod
    def is_resource_not_found(code: int) -> bool:
        """``-32002`` (a Java peer calls it ``SESSION_NOT_FOUND``)."""
        return int(code) == AcpErrorCodes.RESOURCE_NOT_FOUND

    @staticmethod
    def is_server_error(code: int) -> bool:
        """In JSON-RPC's implementation-defined range ``-32099..-32000``."""
        return -32099 <= int(code) <= -32000


_DESCRIPTIONS: dict[int, str] = {
    -32700: "Parse error",
    -32600: "Invalid request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32800: "Request cancelled",
    -32000: "Authentication required",
    -32002: "Resource not found",
}
_JAVA_DESCRIPTIONS: dict[int, str] = {
    -32000: "concurrent prompt",
    -32001: "Capability not supported",
    -32002: "session not found",
    -32003: "Not initialized",
    -32004: "Authentication required",
    -32005: "Permission denied",
}


class AcpException(Exception):
    """Root of every exception rxacp raises or emits."""


class AcpProtocolException(AcpException):
    """An error answer from the peer, or one a handler raises to send a specific error.

    Raise it from a handler to answer with exactly this ``code``, ``message`` and ``data``.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = int(code)
        self.message = message
        self.data = data

    def __str__(self) -> str:
        """``message (code N)``, then ``; data: <data as JSON>`` when there is data (cut to
        :data:`MAX_DATA_IN_STR` characters): agents put the real cause there (e.g. ``details``
        of a ``-32603``)."""
        text = f"{self.message} (code {self.code})"
        if self.data is None:
            return text
        return f"{text}; data: {_brief(self.data)}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.message, self.data))

    @classmethod
    def method_not_found(cls, method: str, hint: str | None = None) -> AcpProtocolException:
        """``-32601``: the method does not exist here (``hint`` says what to register)."""
        msg = f"Method not found: {method}"
        return cls(AcpErrorCodes.METHOD_NOT_FOUND, f"{msg} ({hint})" if hint else msg)

    @classmethod
    def invalid_params(cls, message: str, data: Any = None) -> AcpProtocolException:
        """``-32602``: the params are invalid."""
        return cls(AcpErrorCodes.INVALID_PARAMS, message, data)

    @classmethod
    def invalid_request(cls, message: str, data: Any = None) -> AcpProtocolException:
        """``-32600``: the request is not valid now (e.g. a second prompt on a busy session)."""
        return cls(AcpErrorCodes.INVALID_REQUEST, message, data)

    @classmethod
    def internal_error(
        cls, message: str = "Internal error", data: Any = None
    ) -> AcpProtocolException:
        """``-32603``: the handler failed."""
        return cls(AcpErrorCodes.INTERNAL_ERROR, message, data)

    @classmethod
    def request_cancelled(
        cls, message: str = "Request cancelled", data: Any = None
    ) -> AcpProtocolException:
        """``-32800``: the request was cancelled."""
        return cls(AcpErrorCodes.REQUEST_CANCELLED, message, data)

    @classmethod
    def auth_required(
        cls, message: str = "Authentication required", data: Any = None
    ) -> AcpProtocolException:
        """``-32000``: authenticate first."""
        return cls(AcpErrorCodes.AUTH_REQUIRED, message, data)

    @classmethod
    def resource_not_found(
        cls, message: str = "Resource not found", data: Any = None
    ) -> AcpProtocolException:
        """``-32002``: a file, session or other resource does not exist."""
        return cls(AcpErrorCodes.RESOURCE_NOT_FOUND, message, data)


MAX_DATA_IN_STR = 500
"""How many characters of an error's ``data`` ``str(AcpProtocolException)`` shows."""


class AcpRemoteException(AcpProtocolException):
    """The peer answered one of this side's requests with this error (``code``, ``message``
    and ``data`` are the peer's); ``method`` names the request (e.g. ``fs/read_text_file``).

    Every error answer a request Observable emits is one. Distinct from an
    :class:`AcpProtocolException` a handler raises itself: when one escapes a handler, the
    handler's own request is answered ``-32603`` naming the failed call, with the peer's code
    and message in ``data`` (``{"method": ..., "peerError": {"code": ..., "message": ...}}``),
    never with the peer's code and data as if the handler had chosen them. Catch it in the
    handler to answer something else.
    """

    def __init__(self, code: int, message: str, data: Any = None, method: str | None = None):
        super().__init__(code, message, data)
        self.method = method

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.message, self.data, self.method))


MAX_PEER_MESSAGE = 500
"""Characters of a peer's error message kept when an escaping remote error is answered."""


def _remote_error(exc: AcpRemoteException) -> dict[str, Any]:
    call = exc.method or "a request to the peer"
    return {
        "code": int(AcpErrorCodes.INTERNAL_ERROR),
        "message": f"Internal error: {call} failed: the peer answered error {exc.code}",
        "data": {
            "method": exc.method,
            "peerError": {"code": exc.code, "message": exc.message[:MAX_PEER_MESSAGE]},
        },
    }


def _brief(data: Any) -> str:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=repr)
        except (TypeError, ValueError):  # pragma: no cover - circular data
            text = repr(data)
    if len(text) > MAX_DATA_IN_STR:
        more = len(text) - MAX_DATA_IN_STR
        text = f"{text[:MAX_DATA_IN_STR]}… ({more} more characters)"
    return text


class AcpCapabilityException(AcpException):
    """A call needs a capability the peer did not advertise; nothing was sent.

    ``capability`` is the wire path of the capability, e.g. ``"loadSession"`` or
    ``"fs.readTextFile"``.
    """

    def __init__(self, capability: str, message: str | None = None) -> None:
        super().__init__(message or f"the peer did not advertise the capability {capability!r}")
        self.capability = capability

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.capability, str(self)))


class AcpConnectionException(AcpException):
    """The connection ended before an answer: peer EOF or exit, transport error, or close.

    ``exit_code`` and ``stderr_tail`` are filled in when the peer was a process we spawned.
    """

    def __init__(
        self,
        reason: str,
        *,
        exit_code: int | None = None,
        stderr_tail: str | None = None,
    ) -> None:
        details = reason
        if exit_code is not None:
            details += f" (exit code {exit_code})"
        if stderr_tail:
            details += f"; stderr tail:\n{stderr_tail}"
        super().__init__(details)
        self.reason = reason
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail

    def __reduce__(self) -> tuple[Any, ...]:
        kwargs = {"exit_code": self.exit_code, "stderr_tail": self.stderr_tail}
        return (_rebuild_connection_exception, (self.reason, kwargs))


class AcpTimeoutException(AcpException, TimeoutError):
    """A request got no answer in time; the peer was sent ``$/cancel_request``."""

    def __init__(
        self, method: str, timeout_seconds: float, *, stderr_tail: str | None = None
    ) -> None:
        details = f"{method} timed out after {timeout_seconds:g} s"
        if stderr_tail:
            details += f"; agent stderr tail:\n{stderr_tail}"
        super().__init__(details)
        self.method = method
        self.timeout_seconds = timeout_seconds
        self.stderr_tail = stderr_tail
        """What the agent process wrote to stderr last (``initialize`` timeouts of a spawned
        agent), else ``None``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_timeout_exception,
            (self.method, self.timeout_seconds, self.stderr_tail),
        )


class AcpProtocolVersionException(AcpException):
    """The agent answered ``initialize`` with a protocol version this client does not support.

    The spec says the client SHOULD then close the connection and tell the user: the client
    closes it and ``initialize`` errors with this exception (not an :class:`AcpProtocolException`:
    the agent did not answer with an error).
    """

    def __init__(self, requested: int, received: Any, supported: tuple[int, ...] = (1,)) -> None:
        super().__init__(
            f"the agent answered initialize with protocol version {received!r}, but this client "
            f"asked for version {requested} and supports {sorted(supported)}; "
            "the connection was closed"
        )
        self.requested = requested
        self.received = received
        self.supported = supported

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.requested, self.received, self.supported))


def _rebuild_timeout_exception(
    method: str, timeout_seconds: float, stderr_tail: str | None
) -> AcpTimeoutException:
    return AcpTimeoutException(method, timeout_seconds, stderr_tail=stderr_tail)


def _rebuild_connection_exception(reason: str, kwargs: dict[str, Any]) -> AcpConnectionException:
    return AcpConnectionException(reason, **kwargs)


def exception_to_error(exc: BaseException, method: str | None = None) -> dict[str, Any]:
    """Map any exception raised by a handler to a JSON-RPC error object.

    - :class:`AcpProtocolException` keeps its code, message and data: the handler chose them
      deliberately, so they go on the wire as raised (do not put secrets there);
    - :class:`AcpRemoteException` (the peer's answer to a call the handler made, escaping it)
      is ``-32603`` naming the failed call, the peer's code and message in ``data``;
    - a pydantic ``ValidationError`` (bad params) is ``-32602`` with the error list as data
      (at most 20 entries and a count), *without* the rejected input values, URLs or context;
    - rxacp's own exceptions are ``-32603`` with a text built only from their fixed fields:
      :class:`AcpCapabilityException` names the capability, :class:`AcpTimeoutException` the
      method and the limit, :class:`AcpConnectionException` the exit code (never its reason or
      the peer's stderr tail);
    - anything else is ``-32603`` ``"Internal error: <Type> (details logged, not sent)"`` with
      **no data**: not one character of the exception's text goes to the peer (``int(token)``,
      ``KeyError(token)`` or ``FileNotFoundError(path)`` put the token or the local path in
      it). The exception and its traceback go to the local log (logger ``rxacp.errors``,
      warning level), with ``method`` when given.
    """
    if isinstance(exc, AcpRemoteException):
        return _remote_error(exc)
    if isinstance(exc, AcpProtocolException):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return error
    if isinstance(exc, pydantic.ValidationError):
        from rxacp.schema._base import validation_errors

        return {
            "code": int(AcpErrorCodes.INVALID_PARAMS),
            "message": "Invalid params",
            "data": validation_errors(exc),
        }
    name = type(exc).__name__
    if isinstance(exc, AcpCapabilityException):
        detail = f": the peer did not advertise {exc.capability!r}"
    elif isinstance(exc, AcpTimeoutException):
        detail = f": {exc.method} timed out after {exc.timeout_seconds:g} s"
    elif isinstance(exc, AcpConnectionException):
        detail = ": the connection ended" + (
            f" (exit code {exc.exit_code})" if exc.exit_code is not None else ""
        )
    else:
        detail = " (details logged, not sent)"
        where = f"the {method} handler" if method else "a handler"
        _log.warning("%s failed; answered -32603 Internal error: %s", where, name, exc_info=exc)
    return {"code": int(AcpErrorCodes.INTERNAL_ERROR), "message": f"Internal error: {name}{detail}"}


def error_to_exception(error: Any, method: str | None = None) -> AcpRemoteException:
    """Turn the peer's wire error object (its answer to ``method``) into an
    :class:`AcpRemoteException` (tolerating bad shapes)."""
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        return AcpRemoteException(
            code
            if isinstance(code, int) and not isinstance(code, bool)
            else AcpErrorCodes.INTERNAL_ERROR,
            message if isinstance(message, str) else "Unknown error",
            error.get("data"),
            method,
        )
    return AcpRemoteException(
        AcpErrorCodes.INTERNAL_ERROR, f"Malformed error object: {error!r}", None, method
    )
