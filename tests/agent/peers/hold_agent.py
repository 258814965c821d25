"""A sync rxacp agent with ``hold_prompt_while_cancelling`` on, served over stdio.

``slow``: sends "working", waits for the cancel, then takes 0.3 s more before it returns (so a
prompt sent right after ``session/cancel`` arrives while the turn is still cancelling);
``echo X``: sends X. Any session id is accepted.
"""

from __future__ import annotations

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import PromptRequest, PromptResponse


def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    text = req.prompt_text()
    if text == "slow":
        ctx.send_message("working")
        cancelled = threading.Event()
        ctx.on_cancel(cancelled.set)
        cancelled.wait(30)
        time.sleep(0.3)  # winding down, as a real agent does
    else:
        ctx.send_message(text.removeprefix("echo "))
    return PromptResponse.end_turn()


if __name__ == "__main__":
    (
        AcpAgent.sync(StdioAcpAgentTransport())
        .prompt_handler(prompt)
        .hold_prompt_while_cancelling()
        .build()
        .run()
    )
