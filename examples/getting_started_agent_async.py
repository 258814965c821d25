"""Getting started, agent side, Rx API: the prompt handler returns an Observable and stops on
cancellation with ``ops.take_until(ctx.when_cancelled())``.

Try it: ``rxacp prompt --agent "python examples/getting_started_agent_async.py" one two three``
"""

from __future__ import annotations

import uuid

import reactivex
from reactivex import operators as ops

from rxacp import AcpAgent, PromptContext, StdioAcpAgentTransport
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse


# --8<-- [start:prompt]
def prompt(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[PromptResponse]:
    """Stream one word every 50 ms; runs on the connection's loop, so it must not block."""
    words = req.prompt_text().split()
    return reactivex.interval(0.05, scheduler=ctx.scheduler).pipe(  # ctx.scheduler: testable
        ops.take(len(words)),
        ops.do_action(lambda i: ctx.send_message(words[i] + " ")),
        ops.take_until(ctx.when_cancelled()),  # stop on any cancel trigger
        ops.last_or_default(None),
        ops.map(lambda _: PromptResponse.end_turn()),
    )


# --8<-- [end:prompt]

# --8<-- [start:build]
if __name__ == "__main__":
    (
        AcpAgent.async_(StdioAcpAgentTransport())
        .agent_info(name="getting-started-async", version="1.0.0")
        .new_session_handler(lambda req: NewSessionResponse(session_id=str(uuid.uuid4())))
        .prompt_handler(prompt)
        .max_prompt_duration(60)  # SDK policy: a turn longer than this is answered -32800
        .build()
        .run()
    )
# --8<-- [end:build]
