"""``NegotiatedCapabilities``: what the peer advertised during ``initialize``, as questions.

Capabilities are addressed by their dotted *wire* path, exactly as the schema spells them
(``"loadSession"``, ``"sessionCapabilities.list"``, ``"fs.readTextFile"``, ``"terminal"``).
A capability is supported when its value is present and not ``false``/``null``: ACP advertises
optional features as booleans *or* as (possibly empty) objects, so ``{"list": {}}`` means
"supports session/list".

Besides :meth:`~NegotiatedCapabilities.supports` / :meth:`~NegotiatedCapabilities.require` by path,
every capability the schema defines has a generated ``supports_<name>()`` / ``require_<name>()``
pair (``supports_load_session()``, ``require_fork_session()``, ``supports_elicitation_form()``...;
see ``rxacp/schema/_capabilities.py`` and its ``CAPABILITY_PATHS``).

This module is *not* responsible for negotiating anything or for sending ``initialize``; it only
answers ``supports_*`` / ``require_*`` questions about an advertised capabilities object.
"""

from __future__ import annotations

from typing import Any

from .errors import AcpCapabilityException
from .schema._capabilities import CapabilityQueries

__all__ = ["NegotiatedCapabilities"]


def _to_wire(value: Any) -> Any:
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if to_wire is not None else value


class NegotiatedCapabilities(CapabilityQueries):
    """The peer's advertised capabilities plus the negotiated protocol version.

    Args:
        capabilities: the peer's ``agentCapabilities`` / ``clientCapabilities`` (model or dict).
        protocol_version: the negotiated protocol version.
        peer: ``"agent"`` or ``"client"``, used in error messages.
        peer_info: the peer's ``Implementation`` (name, version), if it sent one.
    """

    __slots__ = ("_raw", "peer", "peer_info", "protocol_version")

    def __init__(
        self,
        capabilities: Any,
        protocol_version: int = 1,
        *,
        peer: str = "agent",
        peer_info: Any = None,
    ) -> None:
        raw = _to_wire(capabilities)
        self._raw: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.protocol_version = protocol_version
        self.peer = peer
        self.peer_info = peer_info

    @property
    def raw(self) -> dict[str, Any]:
        """The advertised capabilities as wire JSON."""
        return self._raw

    def get(self, path: str) -> Any:
        """The value at a dotted wire path, or ``None`` when absent."""
        node: Any = self._raw
        for part in path.split("."):
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return node

    def supports(self, path: str) -> bool:
        """True when the capability at ``path`` is advertised (present, not false/null)."""
        value = self.get(path)
        return value is not None and value is not False

    def require(self, path: str) -> None:
        """Raise :class:`AcpCapabilityException` unless ``path`` is advertised."""
        if not self.supports(path):
            raise AcpCapabilityException(
                path, f"the {self.peer} did not advertise the capability {path!r}; nothing was sent"
            )

    def __repr__(self) -> str:
        return (
            f"NegotiatedCapabilities(peer={self.peer!r}, "
            f"protocol_version={self.protocol_version}, {self._raw!r})"
        )
