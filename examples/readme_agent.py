"""A 15-line ACP agent: echoes the prompt word by word, stops early when cancelled."""

import uuid

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse


def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    for word in req.prompt_text().split():
        if ctx.is_cancelled():  # any stop reason: the SDK answers `cancelled` after a cancel
            break
        ctx.send_message(word + " ")
    return PromptResponse.end_turn()


(AcpAgent.sync(StdioAcpAgentTransport())
    .agent_info(name="readme-agent", version="0.1.0")
    .new_session_handler(lambda req: NewSessionResponse(session_id=str(uuid.uuid4())))
    .prompt_handler(prompt)
    .build()
    .run())  # fmt: skip
