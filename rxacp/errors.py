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
back into an :class:`AcpProtocolException`. The codes themselves, :class:`AcpErrorCodes`, are
defined in ``_error_codes.py`` and exported here.

This module is *not* responsible for framing or sending anything; it only names errors.
"""

from __future__ import annotations

import json
import logging
import reprlib
from typing import Any

import pydantic

from ._error_codes import TITLES, AcpErrorCodes

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


MAX_ECHO = 200
"""The most characters of a peer-supplied string (a session id, a path, a method name) that
:func:`peer_echo` puts into an error message."""


def peer_echo(value: Any, limit: int = MAX_ECHO, *, quote: bool = True) -> str:
    """A peer-supplied value for an error message: at most ``limit`` characters of it and then
    how long it was (``'abc…' (31457280 characters)``), so a huge id or path sent by a peer
    never comes back whole in the answer. Strings are quoted with ``repr`` (``quote=False``:
    as they are); other values get a bounded ``repr`` (:mod:`reprlib`). Use it wherever a
    peer's string is echoed."""
    if isinstance(value, str):
        shown = value if len(value) <= limit else value[:limit]
        text = repr(shown) if quote else shown
        return text if shown is value else f"{text}… ({len(value)} characters)"
    text = _REPR.repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = MAX_ECHO


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
        msg = f"Method not found: {peer_echo(method, quote=False)}"
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
        cls, message: str = TITLES[AcpErrorCodes.INTERNAL_ERROR], data: Any = None
    ) -> AcpProtocolException:
        """``-32603``: the handler failed."""
        return cls(AcpErrorCodes.INTERNAL_ERROR, message, data)

    @classmethod
    def request_cancelled(
        cls, message: str = TITLES[AcpErrorCodes.REQUEST_CANCELLED], data: Any = None
    ) -> AcpProtocolException:
        """``-32800``: the request was cancelled."""
        return cls(AcpErrorCodes.REQUEST_CANCELLED, message, data)

    @classmethod
    def auth_required(
        cls, message: str = TITLES[AcpErrorCodes.AUTH_REQUIRED], data: Any = None
    ) -> AcpProtocolException:
        """``-32000``: authenticate first."""
        return cls(AcpErrorCodes.AUTH_REQUIRED, message, data)

    @classmethod
    def resource_not_found(
        cls, message: str = TITLES[AcpErrorCodes.RESOURCE_NOT_FOUND], data: Any = None
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
    """A request got no answer in time; the peer was sent ``$/cancel_request``.

    The message says which request, after how long and, when known, which setting changes
    the limit: ``session/request_permission timed out after 60 s without an answer (set by
    the builder's human_request_timeout())``.
    """

    def __init__(
        self,
        method: str,
        timeout_seconds: float,
        *,
        stderr_tail: str | None = None,
        setting: str | None = None,
    ) -> None:
        details = f"{method} timed out after {timeout_seconds:g} s" + _setting_text(setting, method)
        if stderr_tail:
            details += f"; agent stderr tail:\n{stderr_tail}"
        super().__init__(details)
        self.method = method
        self.timeout_seconds = timeout_seconds
        self.setting = setting
        """The builder option that sets this limit (``"request_timeout"``...), or ``None``."""
        self.stderr_tail = stderr_tail
        """What the agent process wrote to stderr last (``initialize`` timeouts of a spawned
        agent), else ``None``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_timeout_exception,
            (self.method, self.timeout_seconds, self.stderr_tail, self.setting),
        )


def _setting_text(setting: str | None, method: str) -> str:
    """What a timeout message adds: the setting that changes the limit."""
    if setting is None:
        return ""
    from rxacp.schema.methods import HUMAN_ANSWERED  # late: errors is imported first

    text = f" without an answer (set by the builder's {setting}()"
    if setting == "request_timeout" and method in HUMAN_ANSWERED:
        text += "; an agent's human_request_timeout() sets it for requests a person answers"
    return text + ")"


class AcpProtocolVersionException(AcpException):
    """The agent answered ``initialize`` with a protocol version this client does not support.

    The spec says the client SHOULD then close the connection and tell the user: the client
    closes it and ``initialize`` errors with this exception (not an :class:`AcpProtocolException`:
    the agent did not answer with an error).
    """

    def __init__(self, requested: int, received: Any, supported: tuple[int, ...] = (1,)) -> None:
        super().__init__(
            f"the agent answered initialize with protocol version {peer_echo(received)}, but this "
            f"client asked for version {requested} and supports {sorted(supported)}; "
            "the connection was closed"
        )
        self.requested = requested
        self.received = received
        self.supported = supported

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.requested, self.received, self.supported))


def _rebuild_timeout_exception(
    method: str, timeout_seconds: float, stderr_tail: str | None, setting: str | None = None
) -> AcpTimeoutException:
    return AcpTimeoutException(method, timeout_seconds, stderr_tail=stderr_tail, setting=setting)


def _rebuild_connection_exception(reason: str, kwargs: dict[str, Any]) -> AcpConnectionException:
    return AcpConnectionException(reason, **kwargs)


def exception_text(exc: BaseException) -> str:
    """An exception's message for a local error text, or its type's name when it has none
    (``str(AssertionError())`` is empty). Not for the wire: see :func:`exception_to_error`."""
    return str(exc) or type(exc).__name__


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
        detail = f": {exc.method} timed out after {exc.timeout_seconds:g} s" + _setting_text(
            exc.setting, exc.method
        )
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
        AcpErrorCodes.INTERNAL_ERROR, f"Malformed error object: {peer_echo(error)}", None, method
    )
