"""``WireLogTransport``: the CLI's name for :class:`rxacp.transport.WireTapTransport`.

Kept so existing imports work; new code should use ``rxacp.transport.WireTapTransport``
(``WireLogTransport(inner, path)`` is exactly ``WireTapTransport(inner, path)``).

This module is *not* responsible for anything else.
"""

from __future__ import annotations

from ..transport.tap import WireTapTransport

__all__ = ["WireLogTransport"]

WireLogTransport = WireTapTransport
"""Alias of :class:`rxacp.transport.WireTapTransport`."""
