"""Who may use a remote endpoint (the HTTP app and the WebSocket server): browser origins,
bearer token, authentication hook.

:class:`Access` answers, for one request's headers, why it is refused (``403`` for a browser
``Origin`` not allowed, ``401`` for missing or wrong credentials) and which principal it
authenticates as; the app binds the principal of ``initialize`` (or of the WebSocket upgrade)
to the connection id, and every later request of that connection must resolve to the same one.

This module is *not* responsible for HTTP responses nor for connections (``_app``).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ANONYMOUS", "Access", "make_access", "origin_key"]

_log = logging.getLogger("rxacp.transport.http")  # only the HTTP app logs through it

ANONYMOUS = "anonymous"
"""The principal of every request when neither ``token`` nor ``authenticate`` is set."""


def origin_key(origin: str) -> str:
    """An ``Origin`` as compared with ``allowed_origins`` (trimmed, no trailing ``/``, lower)."""
    return origin.strip().rstrip("/").lower()


@dataclass(frozen=True)
class Access:
    """Allowed browser origins and the authentication hook (``None``: anyone)."""

    origins: frozenset[str]
    authenticate: Callable[[Mapping[str, str]], Any] | None

    def check(self, headers: Mapping[str, str]) -> tuple[Any, tuple[int, str] | None]:
        """(principal, None) for a request with these (lower-case) headers, or (None,
        (status, text)) refusing it."""
        origin = headers.get("origin")
        if origin is not None and "*" not in self.origins:
            for one in origin.split(","):
                if origin_key(one) not in self.origins:
                    _log.warning("refused a request from Origin %r (not in allowed_origins)", one)
                    return None, (
                        403,
                        f"Origin {one.strip()!r} is not allowed: a web page may not drive this "
                        "agent (the server's allowed_origins lists the pages that may)",
                    )
        principal = self.principal(headers)
        if principal is None:
            _log.warning("refused a request without valid credentials")
            return None, (
                401,
                "this agent needs credentials: send 'Authorization: Bearer <token>'",
            )
        return principal, None

    def principal(self, headers: Mapping[str, str]) -> Any:
        """Who these headers authenticate as (None: nobody)."""
        if self.authenticate is None:
            return ANONYMOUS
        try:
            return self.authenticate(headers)
        except Exception:
            _log.warning("the authenticate hook raised: request refused", exc_info=True)
            return None


def _bearer(token: str) -> Callable[[Mapping[str, str]], Any]:
    expected = token.encode()

    def check(headers: Mapping[str, str]) -> Any:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":  # the scheme is case-insensitive (RFC 7235 §2.1)
            return None
        return "bearer" if hmac.compare_digest(given.strip(" ").encode(), expected) else None

    return check


def make_access(
    allowed_origins: Iterable[str] | None,
    token: str | None,
    authenticate: Callable[[Mapping[str, str]], Any] | None,
) -> Access:
    """Validate the app's access options into an :class:`Access`."""
    if isinstance(allowed_origins, str):
        raise TypeError(
            f"allowed_origins is a list of origins, e.g. [{allowed_origins!r}], not one string"
        )
    listed = list(allowed_origins or ())
    if any(not isinstance(o, str) for o in listed):
        raise TypeError(f"allowed_origins must hold strings, got {allowed_origins!r}")
    if token is not None and (not isinstance(token, str) or not token):
        raise ValueError("token must be a non-empty string (or None: no token needed)")
    if token is not None and authenticate is not None:
        raise ValueError("pass token= or authenticate=, not both")
    if authenticate is not None and not callable(authenticate):
        raise TypeError("authenticate must be callable: authenticate(headers) -> principal")
    hook = _bearer(token) if token is not None else authenticate
    return Access(frozenset(origin_key(o) for o in listed), hook)
