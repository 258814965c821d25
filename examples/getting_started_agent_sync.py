"""Getting started, agent side, blocking API: an agent served on its own stdin/stdout whose
prompt handler streams words, reads files and asks permission through the client.

Try it: ``rxacp prompt --agent "python examples/getting_started_agent_sync.py" --yes hello world``
(prompts: ``read <absolute path>``, ``delete <what>``, anything else is echoed word by word).
"""

from __future__ import annotations

import uuid

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse


# --8<-- [start:handlers]
def new_session(req: NewSessionRequest) -> NewSessionResponse:
    """session/new: give the client an id for its conversation."""
    return NewSessionResponse(session_id=str(uuid.uuid4()))


def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    """session/prompt: runs on a worker thread, so blocking calls on ``ctx`` are fine."""
    command, _, rest = req.prompt_text().partition(" ")
    if command == "read":  # fs/read_text_file through the client (needs fs.readTextFile)
        ctx.send_message(ctx.read_file(rest))
    elif command == "delete":  # session/request_permission
        allowed = ctx.ask_permission(f"delete {rest}")
        ctx.send_message(f"deleted {rest}" if allowed else "kept everything")
    else:
        ctx.send_thought("echoing word by word")
        for word in req.prompt_text().split():
            if ctx.is_cancelled():  # poll between steps; sticky once True
                break  # any stop reason: after session/cancel the SDK answers `cancelled`
            ctx.send_message(word + " ")
    return PromptResponse.end_turn()


# --8<-- [end:handlers]

# --8<-- [start:build]
if __name__ == "__main__":
    (
        AcpAgent.sync(StdioAcpAgentTransport())
        .agent_info(name="getting-started-sync", version="1.0.0")
        .new_session_handler(new_session)
        .prompt_handler(prompt)
        .cancel_grace_period(10)  # SDK policy: answer `cancelled` 10 s after session/cancel
        .build()
        .run()  # blocks until the client closes stdin
    )
# --8<-- [end:build]
