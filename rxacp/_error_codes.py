"""``AcpErrorCodes``: the JSON-RPC 2.0 and ACP error codes, what each means, and tests on a code.

Re-exported by :mod:`rxacp.errors` (its public home). This module is *not* responsible for the
exceptions or for deciding which code an exception gets (``errors.py``); it only names codes.
"""

from __future__ import annotations

import enum

__all__ = ["AcpErrorCodes"]


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
        text = TITLES.get(code)
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
        return int(code) in TITLES

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


TITLES: dict[int, str] = {
    -32700: "Parse error",
    -32600: "Invalid request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32800: "Request cancelled",
    -32000: "Authentication required",
    -32002: "Resource not found",
}
"""The standard message of each spec code: the text of :meth:`AcpErrorCodes.describe` and
the default message of the ``AcpProtocolException`` factories (``errors.py``)."""
_JAVA_DESCRIPTIONS: dict[int, str] = {
    -32000: "concurrent prompt",
    -32001: "Capability not supported",
    -32002: "session not found",
    -32003: "Not initialized",
    -32004: "Authentication required",
    -32005: "Permission denied",
}
