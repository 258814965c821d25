"""Factory mixins of the ACP v2 models (``InitializeRequest.of()``, ``PromptRequest.text()``...).

Mixed into the generated ``rxacp.schema.v2`` classes by the generator, as the v1 mixins of
``rxacp.schema._factories`` are into the v1 classes. Not responsible for the models themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self

from rxacp.schema._factories import PromptRequestFactories as _V1PromptRequestFactories
from rxacp.schema._factories import (
    RequestPermissionResponseFactories as _V1PermissionFactories,
)
from rxacp.schema._factories import WireLike, _drop_none, _Mixin, _wire

__all__ = [
    "PROTOCOL_VERSION_2",
    "InitializeRequestFactories",
    "InitializeResponseFactories",
    "PromptRequestFactories",
    "RequestPermissionResponseFactories",
]

PROTOCOL_VERSION_2 = 2
"""The ACP protocol version of :mod:`rxacp.schema.v2` (a Draft)."""

_DEFAULT_INFO: Mapping[str, Any] = {"name": "rxacp", "version": "0"}


class InitializeRequestFactories(_Mixin):
    """Factories for the v2 ``InitializeRequest``."""

    @classmethod
    def of(
        cls,
        info: WireLike | None = None,
        capabilities: WireLike | None = None,
        *,
        protocol_version: int = PROTOCOL_VERSION_2,
    ) -> Self:
        """A v2 ``initialize`` request; ``info`` is required by v2 (a placeholder if omitted)."""
        return cls.from_wire(
            {
                "protocolVersion": protocol_version,
                "info": _wire(info) or dict(_DEFAULT_INFO),
                "capabilities": _wire(capabilities) or {},
            }
        )


class InitializeResponseFactories(_Mixin):
    """Factories for the v2 ``InitializeResponse``."""

    @classmethod
    def ok(
        cls,
        info: WireLike | None = None,
        capabilities: WireLike | None = None,
        *,
        auth_methods: Sequence[WireLike] | None = None,
        protocol_version: int = PROTOCOL_VERSION_2,
    ) -> Self:
        """A successful v2 ``initialize`` answer (``capabilities.session`` advertised)."""
        return cls.from_wire(
            _drop_none(
                {
                    "protocolVersion": protocol_version,
                    "info": _wire(info) or dict(_DEFAULT_INFO),
                    "capabilities": _wire(capabilities) or {"session": {}},
                    "authMethods": None
                    if auth_methods is None
                    else [_wire(m) for m in auth_methods],
                }
            )
        )


class PromptRequestFactories(_V1PromptRequestFactories):
    """Factories for the v2 ``PromptRequest`` (the same shape as v1)."""


class RequestPermissionResponseFactories(_V1PermissionFactories):
    """Factories for the v2 ``RequestPermissionResponse`` (the same outcomes as v1)."""
