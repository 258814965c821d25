"""Java-SDK-style names and small conveniences for the stable ACP schema.

The generated models already carry the schema's names and the factories
(``InitializeResponse.ok()``, ``PromptResponse.end_turn()``, ``PromptRequest.text(...)`` ...,
see ``_factories.py``). This module adds the names the Java SDK (``AcpSchema``) uses for union
variants that the schema names differently, plus a few builder functions and union parsers.

Java name -> rxacp model:

- ``Resource`` -> ``EmbeddedResource`` (content block ``type: "resource"``)
- ``ToolCallContentBlock`` / ``ToolCallDiff`` / ``ToolCallTerminal`` -> ``Content`` / ``Diff`` /
  ``Terminal`` (tool-call content ``type: "content" | "diff" | "terminal"``)
- ``PermissionSelected`` / ``PermissionCancelled`` -> ``SelectedPermissionOutcome`` /
  ``CancelledPermissionOutcome``
- ``FileSystemCapability`` -> ``FileSystemCapabilities``
- ``KillTerminalCommandRequest`` / ``...Response`` -> ``KillTerminalRequest`` / ``...Response``

Names that already match the Java SDK: ``TextContent``, ``ImageContent``, ``AudioContent``,
``ResourceLink``, ``UserMessageChunk``, ``AgentMessageChunk``, ``AgentThoughtChunk``,
``ToolCall``, ``ToolCallUpdateNotification``, ``Plan``, ``AvailableCommandsUpdate``,
``CurrentModeUpdate``, ``UsageUpdate``, ``McpServerStdio``/``Http``/``Sse``.

Not responsible for: model definitions (generated), method routing (``methods.py``), I/O.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final, cast

from pydantic import TypeAdapter

from rxacp.schema._factories import LATEST_PROTOCOL_VERSION
from rxacp.schema._generated import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CancelledPermissionOutcome,
    Content,
    ContentBlock,
    Diff,
    EmbeddedResource,
    FileSystemCapabilities,
    KillTerminalRequest,
    KillTerminalResponse,
    McpServer,
    RequestPermissionOutcome,
    SelectedPermissionOutcome,
    SessionUpdate,
    Terminal,
    TextContent,
    ToolCallContent,
    UserMessageChunk,
)

__all__ = [
    "JSONRPC_VERSION",
    "LATEST_PROTOCOL_VERSION",
    "FileSystemCapability",
    "KillTerminalCommandRequest",
    "KillTerminalCommandResponse",
    "PermissionCancelled",
    "PermissionSelected",
    "Resource",
    "ToolCallContentBlock",
    "ToolCallDiff",
    "ToolCallTerminal",
    "agent_message_text",
    "agent_thought_text",
    "content_block_from_wire",
    "mcp_server_from_wire",
    "permission_outcome_from_wire",
    "session_update_from_wire",
    "text_block",
    "tool_call_content_from_wire",
    "user_message_text",
]

JSONRPC_VERSION: Final = "2.0"
"""The JSON-RPC version string every ACP message carries."""

Resource = EmbeddedResource
"""Java name of the embedded-resource content block (``type: "resource"``)."""
ToolCallContentBlock = Content
"""Java name of tool-call content ``type: "content"``."""
ToolCallDiff = Diff
"""Java name of tool-call content ``type: "diff"``."""
ToolCallTerminal = Terminal
"""Java name of tool-call content ``type: "terminal"``."""
PermissionSelected = SelectedPermissionOutcome
"""Java name of the ``outcome: "selected"`` permission outcome."""
PermissionCancelled = CancelledPermissionOutcome
"""Java name of the ``outcome: "cancelled"`` permission outcome."""
FileSystemCapability = FileSystemCapabilities
"""Java name of the client's ``fs`` capabilities."""
KillTerminalCommandRequest = KillTerminalRequest
"""Java name of the ``terminal/kill`` params."""
KillTerminalCommandResponse = KillTerminalResponse
"""Java name of the ``terminal/kill`` result."""


@cache
def _adapter(union: Any) -> TypeAdapter[Any]:
    """The (cached) TypeAdapter of a union, built on first use rather than at import."""
    return TypeAdapter(union)


def _from_wire(union: Any, data: Any) -> Any:
    """Validate wire ``data`` as ``union`` the way every model's ``from_wire`` does (by alias,
    not by Python name), through the union's cached adapter."""
    return _adapter(union).validate_python(data, by_alias=True, by_name=False)


def text_block(text: str) -> TextContent:
    """A text content block (``{"type": "text", "text": text}``)."""
    return TextContent(text=text)


def agent_message_text(text: str) -> AgentMessageChunk:
    """An ``agent_message_chunk`` session update carrying one text block."""
    return AgentMessageChunk(content=TextContent(text=text))


def agent_thought_text(text: str) -> AgentThoughtChunk:
    """An ``agent_thought_chunk`` session update carrying one text block."""
    return AgentThoughtChunk(content=TextContent(text=text))


def user_message_text(text: str) -> UserMessageChunk:
    """A ``user_message_chunk`` session update carrying one text block."""
    return UserMessageChunk(content=TextContent(text=text))


def session_update_from_wire(data: Any) -> SessionUpdate:
    """Parse one ``SessionUpdate`` (unknown kinds become ``UnknownSessionUpdate``)."""
    return cast(SessionUpdate, _from_wire(SessionUpdate, data))


def content_block_from_wire(data: Any) -> ContentBlock:
    """Parse one ``ContentBlock`` (unknown types become ``UnknownContentBlock``)."""
    return cast(ContentBlock, _from_wire(ContentBlock, data))


def tool_call_content_from_wire(data: Any) -> ToolCallContent:
    """Parse one ``ToolCallContent`` (unknown types become ``UnknownToolCallContent``)."""
    return cast(ToolCallContent, _from_wire(ToolCallContent, data))


def permission_outcome_from_wire(data: Any) -> RequestPermissionOutcome:
    """Parse one ``RequestPermissionOutcome``."""
    return cast(RequestPermissionOutcome, _from_wire(RequestPermissionOutcome, data))


def mcp_server_from_wire(data: Any) -> McpServer:
    """Parse one ``McpServer`` config (no ``type`` means stdio)."""
    return cast(McpServer, _from_wire(McpServer, data))
