"""Getting started, agent side, decorators: the Java SDK's annotations as Python decorators.

Try it: ``rxacp prompt --agent "python examples/getting_started_agent_decorators.py" Ada``
"""

from __future__ import annotations

from typing import Annotated

from rxacp import StdioAcpAgentTransport, SyncPromptContext
from rxacp.agent.support import AcpAgentSupport, SessionId, acp_agent, exception_handler, prompt
from rxacp.schema import PromptRequest, PromptResponse


# --8<-- [start:agent]
@acp_agent(name="greeter", version="1.0.0")
class Greeter:
    """No @initialize / @new_session needed: rxacp answers both with sensible defaults."""

    @prompt
    def greet(
        self, req: PromptRequest, ctx: SyncPromptContext, sid: Annotated[str, SessionId]
    ) -> str:
        """Arguments are resolved by type annotation; a returned str is sent, then end_turn."""
        name = req.prompt_text().strip()
        if not name:
            raise ValueError("nobody to greet")
        ctx.send_thought(f"greeting in session {sid[:8]}")
        return f"Hello, {name}!"

    @exception_handler(ValueError)
    def refuse(self, exc: ValueError) -> PromptResponse:
        """Real exception handlers: turn an error into an answer instead of -32603."""
        return PromptResponse(stop_reason="refusal")


if __name__ == "__main__":
    AcpAgentSupport.create(Greeter()).transport(StdioAcpAgentTransport()).run()
# --8<-- [end:agent]
