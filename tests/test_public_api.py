"""The public API is exactly what we intend: every ``__all__`` is checked name by name."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

EXPECTED: dict[str, set[str]] = {
    "rxacp": {
        "AcpAgent", "AcpAsyncAgent", "AcpAsyncClient", "AcpCapabilityException", "AcpClient",
        "AcpConnectionException", "AcpErrorCodes", "AcpException", "AcpProtocolException",
        "AcpProtocolVersionException", "AcpSyncAgent", "AcpSyncClient", "AcpTimeoutException",
        "AcpTransport", "AgentParameters", "AcpRemoteException",
        "CancellationSignal", "CommandResult", "NegotiatedCapabilities", "PromptContext",
        "StdioAcpAgentTransport", "StdioAcpClientTransport", "SyncPromptContext", "__version__",
    },
    "rxacp.client": {
        "AcpAsyncClient", "AcpAsyncClientBuilder", "AcpClient", "AcpClientBuilder",
        "AcpSyncClient", "AcpSyncClientBuilder", "AsyncHandler", "CancellationSignal",
        "RequestCancellation", "RequestLike", "SUPPORTED_PROTOCOL_VERSIONS", "SyncHandler",
        "WorkspaceFileSystem",
        "LocalTerminals",
        "Compaction", "Message", "SessionState", "Thought", "ToolCallState",
        "fold_session_state",
    },
    "rxacp.agent": {
        "AcpAgent", "AcpAgentBuilder", "AcpAsyncAgent", "AcpSyncAgent", "AsyncAgentBuilder",
        "CancelReason", "CommandResult", "PromptContext", "PromptTimeouts", "SyncAgentBuilder",
        "SyncPromptContext",
    },
    "rxacp.agent.v2": {"AgentHandlers", "PromptContext", "PromptTurnV2", "SyncPromptContext"},
    "rxacp.schema.v2.methods": {
        "ALL_METHODS", "AUTH_LOGIN", "AUTH_LOGOUT", "METHODS", "TERMINAL_CANCEL",
        "TOOL_CALL_CANCEL",
    },
    "rxacp.agent.support": {
        "AcpAgentSupport", "AcpAgentSupportBuilder", "AcpInterceptor", "AgentInfo",
        "ArgumentResolver", "HandlerParameter", "InvocationContext", "MethodDecorator",
        "ReturnValueHandler", "SessionId", "acp_agent", "authenticate", "cancel", "close_session",
        "delete_session", "disable_provider", "exception_handler", "ext_method",
        "ext_notification", "fork_session", "initialize", "list_providers", "list_sessions",
        "load_session", "logout", "new_session", "prompt", "resume_session", "set_provider",
        "set_session_config_option", "set_session_mode",
    },
    "rxacp.transport": {
        "AcpTransport", "AgentParameters", "DEFAULT_MAX_FRAME_BYTES", "FrameReceiver",
        "StdioAcpAgentTransport", "StdioAcpClientTransport", "TransportClosed", "WireFrame",
        "WireTapTransport",
    },
    "rxacp.transport.http": {
        "ANONYMOUS", "AcpAsgiApp", "AgentFactory", "ByteBudget", "CONNECTION_ID_HEADER",
        "DEFAULT_BUDGET_BYTES", "DEFAULT_MAX_MESSAGE_SIZE", "HttpAcpAgentTransport",
        "HttpAcpClientTransport", "SESSION_ID_HEADER",
    },
    "rxacp.schema.strict": {"validate_message", "validate_strict"},
    "rxacp.roles": set(),
    "rxacp.session": {
        "AcpObservable", "AcpSession", "CANCEL_REQUEST", "CancelRequestHook", "Completion",
        "IncomingNotification", "IncomingRequest", "NotificationHandler", "RequestHandler",
        "SessionStats", "as_acp_observable",
    },
    "rxacp.errors": {
        "AcpCapabilityException", "AcpConnectionException", "AcpErrorCodes", "AcpException",
        "AcpProtocolException", "AcpProtocolVersionException", "AcpTimeoutException",
        "AcpRemoteException", "error_to_exception", "exception_to_error",
    },
    "rxacp.capabilities": {"NegotiatedCapabilities"},
    "rxacp.tracing": {"TRACER_NAME", "WireTracer", "install_tracing", "tracing_available"},
    "rxacp.jsonrpc": {
        "ErrorResponse", "Id", "InvalidMessage", "JSONRPC_VERSION", "Message", "Notification",
        "ParseError", "Request", "Response", "classify", "decode_json", "error_obj",
        "notification_obj", "parse_message", "request_obj", "response_obj", "serialize",
    },
}  # fmt: skip


@pytest.mark.parametrize("module_name", sorted(EXPECTED))
def test_all_is_exactly_the_intended_public_api(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert set(module.__all__) == EXPECTED[module_name]
    assert len(module.__all__) == len(set(module.__all__)), "duplicate names in __all__"
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name} is listed but missing"


def test_schema_exports_every_stable_definition_and_only_importable_names() -> None:
    import rxacp.schema as schema

    spec = json.loads((Path(schema.__file__).parent / "spec" / "schema.json").read_text())
    missing = set(spec["$defs"]) - set(schema.__all__)
    assert missing == set()
    for name in schema.__all__:
        assert hasattr(schema, name), name


def test_every_exception_rxacp_raises_is_an_acp_exception() -> None:
    import rxacp
    from rxacp.errors import AcpProtocolVersionException

    for exc in (
        rxacp.AcpProtocolException,
        rxacp.AcpCapabilityException,
        rxacp.AcpConnectionException,
        rxacp.AcpTimeoutException,
        AcpProtocolVersionException,
    ):
        assert issubclass(exc, rxacp.AcpException)
    assert issubclass(rxacp.AcpTimeoutException, TimeoutError)
