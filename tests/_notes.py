"""Typed readers of ``session/update`` notifications shared by the test packages."""

from __future__ import annotations

from rxacp.schema import AgentMessageChunk, SessionNotification, TextContent

__all__ = ["chunk_text"]


def chunk_text(note: SessionNotification) -> str:
    """The text of an ``agent_message_chunk`` notification (asserts that is what it is)."""
    update = note.update
    assert isinstance(update, AgentMessageChunk), update
    assert isinstance(update.content, TextContent), update.content
    return update.content.text
