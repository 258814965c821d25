"""The version router of an agent that serves ACP v2: ``initialize`` chooses the version.

Installed by the agent core when the builder got ``protocol_v2(handlers)``. The connection
starts with the v1 handlers registered (so a v1 client sees exactly the v1 agent); the
``initialize`` handler reads ``protocolVersion``:

- 2 or more (and v2 served): the connection becomes v2 for good: the v1 agent methods are
  unregistered, the v2 handlers, method table, prompt turn and context take their place, and
  the v2 ``initialize`` is answered (version 2);
- otherwise, with v1 served: the v1 ``initialize`` as before (version 1);
- a v2-only agent answers any other version with version 2 (the spec: "its own latest").

A later ``initialize`` on a v2 connection is ``-32600`` (a connection is initialized once).
Not responsible for the turn (``turn.py``) or the handlers' API (``handlers.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import reactivex

from ...capabilities import NegotiatedCapabilities
from ...errors import AcpErrorCodes, AcpProtocolException
from ...roles.handlers import parse_params, run_handler
from ...schema.methods import METHODS as V1_METHODS
from ...schema.v2 import AgentCapabilities, Implementation, InitializeRequest, InitializeResponse
from ...schema.v2.methods import METHODS as V2_METHODS
from ...session import IncomingRequest
from .context import PromptContext, SyncPromptContext
from .handlers import AgentHandlers
from .turn import PromptTurnV2

if TYPE_CHECKING:
    from ..core import AgentCore

__all__ = ["BASELINE", "PROTOCOL_VERSION_2", "default_initialize_response", "install_router"]

_log = logging.getLogger("rxacp.agent")

PROTOCOL_VERSION_2 = 2
_DEFAULT_INFO = {"name": "rxacp-agent", "version": "0"}
_UNKNOWN_INFO = {"name": "unknown", "version": "unknown"}


def _requested_version(params: Any) -> int:
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 0xFFFF:
        raise AcpProtocolException(
            AcpErrorCodes.INVALID_PARAMS,
            "Invalid params: initialize.protocolVersion must be an integer from 0 to 65535",
        )
    return version


def install_router(core: AgentCore) -> None:
    """Put the version-choosing ``initialize`` handler on ``core``'s session."""
    versions = core.config.protocol_versions or (1, 2)
    v1_initialize: Callable[[IncomingRequest], reactivex.Observable[Any]] = core._initialize

    def initialize(req: IncomingRequest) -> reactivex.Observable[Any]:
        requested = _requested_version(req.params)
        if 1 in versions and (requested < PROTOCOL_VERSION_2 or 2 not in versions):
            return v1_initialize(req)
        return _switch_to_v2(core, req)

    core.session.set_request_handler("initialize", initialize)


def _switch_to_v2(core: AgentCore, req: IncomingRequest) -> reactivex.Observable[Any]:
    handlers: AgentHandlers = core.config.v2
    params = dict(req.params) if isinstance(req.params, dict) else {}
    if params.get("protocolVersion") != PROTOCOL_VERSION_2:
        params = _lenient(params)
    request = parse_params(InitializeRequest, params)
    for spec in V1_METHODS.values():
        if spec.side == "agent":
            core.session.remove_handler(spec.name)
    core.protocol_version = PROTOCOL_VERSION_2
    core.session.accept_batches = True  # v2 transports.mdx: batch arrays are messages too
    core.methods = V2_METHODS
    core.handlers = dict(handlers.handlers)
    core.handlers.setdefault("session/close", _close_session)
    core.turn_factory = PromptTurnV2
    factory = SyncPromptContext if core.blocking else PromptContext
    core.set_context_factory(lambda turn: factory(core, cast(PromptTurnV2, turn)))
    core._register()
    core.session.set_request_handler("initialize", _initialized_once)
    wire = request.to_wire()
    core.client_capabilities = NegotiatedCapabilities(
        wire.get("capabilities") or {}, PROTOCOL_VERSION_2, peer="client", peer_info=request.info
    )
    user = handlers.handlers.get("initialize")
    if user is not None:
        return run_handler(core.session, user, request, blocking=core.blocking)
    return reactivex.of(default_initialize_response(handlers))


def _lenient(params: dict[str, Any]) -> dict[str, Any]:
    """An ``initialize`` written for another version, read as v2: what parses is kept, a
    missing or malformed ``info`` becomes ``unknown`` (as the TypeScript SDK's router does)."""
    try:
        info = Implementation.from_wire(params.get("info")).to_wire()
    except ValueError:
        info = dict(_UNKNOWN_INFO)
    capabilities = params.get("capabilities")
    return {
        **{k: v for k, v in params.items() if k not in ("clientCapabilities", "clientInfo")},
        "protocolVersion": PROTOCOL_VERSION_2,
        "info": info,
        "capabilities": capabilities if isinstance(capabilities, dict) else {},
    }


def _initialized_once(_req: IncomingRequest) -> reactivex.Observable[Any]:
    return reactivex.throw(
        AcpProtocolException(
            AcpErrorCodes.INVALID_REQUEST,
            "Invalid request: this ACP v2 connection is already initialized",
        )
    )


BASELINE = ("session/new", "session/list", "session/resume", "session/prompt")
"""The handlers ``capabilities.session`` commits an agent to (v2 ``migration.mdx`` §Baseline
methods; ``session/cancel``, ``session/update`` are the SDK's, and ``session/close`` too when no
handler is set: it cancels the session's turn and answers ``{}``)."""


def default_initialize_response(handlers: AgentHandlers) -> InitializeResponse:
    """Version 2, the handlers' ``info`` and capabilities: ``session`` when every
    :data:`BASELINE` handler is set (``session.delete`` with a delete handler), else none and
    a warning naming the missing ones; the handlers' ``authMethods``."""
    capabilities = handlers.capabilities_
    if capabilities is None:
        wire: dict[str, Any] = {}
        missing = [m for m in BASELINE if m not in handlers.handlers]
        if not missing:
            session: dict[str, Any] = {}
            if "session/delete" in handlers.handlers:
                session["delete"] = {}
            wire["session"] = session
        elif "session/prompt" in handlers.handlers:
            _log.warning(
                "ACP v2: not advertising capabilities.session: it requires handlers for %s",
                ", ".join(missing),
            )
        capabilities = AgentCapabilities.from_wire(wire)
    info = handlers.info or Implementation.from_wire(_DEFAULT_INFO)
    response = InitializeResponse(
        protocol_version=PROTOCOL_VERSION_2, info=info, capabilities=capabilities
    )
    if handlers.auth_methods_:
        response.auth_methods = list(handlers.auth_methods_)
    return response


def _close_session(_request: Any) -> dict[str, Any]:
    """The SDK's ``session/close`` when the v2 handlers have none (a baseline method): the
    core cancels the session's active turn before any ``session/close`` handler runs."""
    return {}
