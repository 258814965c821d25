"""An agent that serves ACP v1 and ACP v2 (Draft) clients on the same stdio, one prompt handler
shape for both: the v2 handler set is opt-in (``protocol_v2``), v1 stays the default.

Try it: ``rxacp prompt --protocol-version 2 --agent "python examples/v2_dual_agent.py" hi``
(and without ``--protocol-version 2``: the same agent answers as a v1 agent).
"""

from __future__ import annotations

import uuid

import reactivex
from reactivex import operators as ops

from rxacp import AcpAgent, PromptContext, StdioAcpAgentTransport
from rxacp.agent import v2
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.schema.v2 import PromptRequest as PromptRequestV2


def words(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[PromptResponse]:
    """The v1 handler: stream the prompt's words, stop on any cancel trigger."""
    said = req.prompt_text().split()
    return reactivex.interval(0.05, scheduler=ctx.scheduler).pipe(
        ops.take(len(said)),
        ops.do_action(lambda i: ctx.send_message(said[i] + " ")),
        ops.take_until(ctx.when_cancelled()),
        ops.last_or_default(None),
        ops.map(lambda _: PromptResponse.end_turn()),
    )


# --8<-- [start:v2]
def words_v2(req: PromptRequestV2, ctx: v2.PromptContext) -> reactivex.Observable[str]:
    """The v2 handler: the same shape. The SDK answers session/prompt at once ({messageId}),
    reports user_message and running, and ends the turn with one idle state_update."""
    said = req.prompt_text().split()
    return reactivex.interval(0.05, scheduler=ctx.scheduler).pipe(
        ops.take(len(said)),
        ops.do_action(lambda i: ctx.send_message(said[i] + " ")),  # chunks get a messageId
        ops.take_until(ctx.when_cancelled()),  # after session/cancel: idle + cancelled
        ops.last_or_default(None),
        ops.map(lambda _: "end_turn"),  # a stop reason (or a PromptResponse, or None)
    )


SESSIONS: list[str] = []


def new_session(_req: object) -> dict[str, str]:
    SESSIONS.append(str(uuid.uuid4()))
    return {"sessionId": SESSIONS[-1]}


def list_sessions(_req: object) -> dict[str, object]:
    return {"sessions": [{"sessionId": sid, "cwd": "/"} for sid in SESSIONS]}


if __name__ == "__main__":
    (
        AcpAgent.async_(StdioAcpAgentTransport())
        .agent_info(name="dual", version="1.0.0")
        .new_session_handler(lambda _req: NewSessionResponse(session_id=str(uuid.uuid4())))
        .prompt_handler(words)  # v1 clients
        .protocol_v2(  # opt-in: v2 clients get these handlers (initialize picks the version)
            v2.AgentHandlers()
            .agent_info(name="dual", version="1.0.0")
            .new_session_handler(new_session)  # with list and resume: the v2 baseline that
            .list_sessions_handler(list_sessions)  # capabilities.session commits to
            .resume_session_handler(lambda _req: {})  # (session/close: the SDK's default)
            .prompt_handler(words_v2)
        )
        .build()
        .run()
    )
# --8<-- [end:v2]
