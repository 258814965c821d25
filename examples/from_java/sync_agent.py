"""Ported from a Java SDK sync agent: stream a thought, a tool call and messages, ask
permission, and write a file through the client.

Java: ``AcpAgent.sync(transport).promptHandler((req, ctx) -> { ctx.sendThought(...);
ctx.sendUpdate(toolCall); ... ctx.askPermission(...); ctx.writeFile(...); })``. rxacp: the same
calls in snake_case; the handler runs on a worker thread, so blocking calls are fine.

Prompt ``write <absolute path> <text>``: asks permission to write, then writes ``<text>``.
Run: ``rxacp prompt --agent "python examples/from_java/sync_agent.py" --yes "write /tmp/x hi"``.
"""

from __future__ import annotations

import uuid

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import (
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
)


def initialize(req: InitializeRequest) -> InitializeResponse:
    return InitializeResponse.ok()


def new_session(req: NewSessionRequest) -> NewSessionResponse:
    return NewSessionResponse(session_id=str(uuid.uuid4()))


def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    command, _, rest = req.prompt_text().partition(" ")
    path, _, text = rest.partition(" ")
    if command != "write" or not path.startswith("/"):
        ctx.send_message("usage: write <absolute path> <text>")
        return PromptResponse.end_turn()
    ctx.send_thought(f"I need to write {path}")  # Java: ctx.sendThought(...)
    call = ctx.start_tool_call(f"Write {path}", kind="edit")  # Java: sendUpdate(new ToolCall)
    if not ctx.ask_permission(f"write {path}"):  # Java: ctx.askPermission(...)
        ctx.update_tool_call(call, status="failed")
        ctx.send_message("Permission denied, nothing written.")
        return PromptResponse.end_turn()
    ctx.update_tool_call(call, status="in_progress")
    ctx.write_file(path, text)  # Java: ctx.writeFile(path, content)
    ctx.update_tool_call(call, status="completed")
    ctx.send_message(f"Wrote {len(text)} characters to {path}.")
    return PromptResponse.end_turn()


if __name__ == "__main__":
    (
        AcpAgent.sync(StdioAcpAgentTransport())
        .initialize_handler(initialize)
        .new_session_handler(new_session)
        .prompt_handler(prompt)
        .build()
        .run()
    )
