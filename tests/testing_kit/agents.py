"""Small agents under test for the MockAcpClient tests (builder API, sync handlers)."""

from __future__ import annotations

import threading

from rxacp.agent import AcpAgent, SyncAgentBuilder, SyncPromptContext
from rxacp.errors import AcpException
from rxacp.schema import (
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
)
from rxacp.transport.base import AcpTransport

_ids = iter(range(1, 1_000_000))


def answer(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    """``echo``-like script: the prompt text selects the behaviour (see the branches)."""
    verb, _, rest = req.prompt_text().partition(" ")
    try:
        if verb == "read":
            path, _, window = rest.partition(" ")
            line, limit = (int(x) for x in window.split()) if window else (None, None)
            ctx.send_message(ctx.read_file(path, line=line, limit=limit))
        elif verb == "write":
            path, _, content = rest.partition(" ")
            ctx.write_file(path, content)
            ctx.send_message("written")
        elif verb == "permission":
            outcome = ctx.request_permission(_permission_request(ctx.session_id)).outcome
            ctx.send_message(getattr(outcome, "option_id", None) or outcome.outcome)
        elif verb == "choice":
            ctx.send_message(str(ctx.ask_choice("Pick", ["red", "green"])))
        elif verb == "terminal":
            command, *args = rest.split()
            result = ctx.execute(command, *args)
            ctx.send_message(f"{result.output}|{result.exit_code}")
        elif verb == "stream":
            stopped = threading.Event()
            ctx.on_cancel(stopped.set)
            for i in range(int(rest)):
                if ctx.is_cancelled():
                    break
                ctx.send_message(f"{i} ")
                stopped.wait(0.02)  # pacing; ends at once on cancel
        elif verb == "hang":
            released = threading.Event()
            ctx.on_cancel(released.set)
            released.wait(10.0)
        else:
            ctx.send_message(req.prompt_text())
    except AcpException as exc:
        ctx.send_message(f"error: {exc}")
    return PromptResponse.end_turn()


def _permission_request(session_id: str) -> RequestPermissionRequest:
    return RequestPermissionRequest.from_wire(
        {
            "sessionId": session_id,
            "toolCall": {"toolCallId": "call-1", "title": "Proceed?"},
            "options": [
                {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
                {"optionId": "no", "name": "No", "kind": "reject_once"},
            ],
        }
    )


def builder(transport: AcpTransport) -> SyncAgentBuilder:
    """The test agent as a builder (what users usually hand to ``mock_client``)."""
    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda _req: NewSessionResponse(session_id=f"s-{next(_ids)}"))
        .prompt_handler(answer)
    )
