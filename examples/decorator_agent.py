"""A decorator-based ACP agent (``rxacp.agent.support``) served on its own stdin/stdout.

Prompt ``count N`` streams N numbered chunks and stops early when the client cancels; any
other prompt is echoed back (a ``str`` return is sent as an agent message, then ``end_turn``).
``fail`` shows an ``@exception_handler`` turning an error into an answer, and a small
interceptor logs every call to stderr (stdout carries the protocol).

Run: ``python examples/decorator_agent.py`` (speaks ACP on stdin/stdout).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Annotated, Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rxacp.agent import SyncPromptContext
from rxacp.agent.support import (
    AcpAgentSupport,
    AcpInterceptor,
    InvocationContext,
    SessionId,
    acp_agent,
    cancel,
    exception_handler,
    prompt,
)
from rxacp.schema import CancelNotification, PromptRequest, PromptResponse
from rxacp.transport import StdioAcpAgentTransport

__all__ = ["CountingAgent", "LogCalls", "main"]

log = logging.getLogger("decorator_agent")


@acp_agent(name="decorator-agent", version="1.0.0", title="Decorator agent example")
class CountingAgent:
    """Echoes prompts; ``count N`` streams N chunks (cooperatively cancellable)."""

    @prompt
    def answer(
        self, req: PromptRequest, ctx: SyncPromptContext, session: Annotated[str, SessionId]
    ) -> str | PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in req.prompt).strip()
        if text == "fail":
            raise ValueError("asked to fail")
        if text.startswith("count "):
            for i in range(1, int(text.split()[1]) + 1):
                if ctx.is_cancelled():
                    break  # the answer is `cancelled` whatever we return
                ctx.send_message(f"{i} ")
                time.sleep(0.01)
            return PromptResponse.end_turn()
        return f"echo ({session[:8]}): {text}"

    @cancel
    def stop(self, note: CancelNotification) -> None:
        log.info("client cancelled the turn of %s", note.session_id)

    @exception_handler(ValueError)
    def refuse(self, exc: ValueError) -> PromptResponse:
        log.info("refusing: %s", exc)
        return PromptResponse(stop_reason="refusal")


class LogCalls(AcpInterceptor):
    """Logs every handler call and how it ended."""

    def pre_handle(self, ctx: InvocationContext) -> bool | None:
        log.info("-> %s (%s)", ctx.method, ctx.handler_name)
        return None

    def after_completion(self, ctx: InvocationContext, exc: BaseException | None) -> None:
        log.info("<- %s %s", ctx.method, "ok" if exc is None else f"failed: {exc}")


def main(argv: Any = None) -> None:
    """Serve until the client closes stdin."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    (
        AcpAgentSupport.create(CountingAgent())
        .transport(StdioAcpAgentTransport())
        .interceptor(LogCalls())
        .cancel_grace_period(5)
        .run()
    )


if __name__ == "__main__":
    main()
