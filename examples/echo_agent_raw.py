"""A tiny ACP echo agent written directly on the session engine (``AcpSession``), over stdio.

Used by ``examples/async_client.py`` and ``examples/sync_client.py``. It answers ``initialize``
and ``session/new``, and for ``session/prompt`` streams the prompt's words back as
``agent_message_chunk`` updates, asks for permission first when the prompt starts with
``!``, and stops early with stop reason ``cancelled`` on ``session/cancel``.

Not a template for real agents: use ``rxacp.agent`` (builders, prompt contexts, the prompt-turn
policy) for those. Run: ``python examples/echo_agent_raw.py`` (speaks ACP on stdin/stdout).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import reactivex
from reactivex import operators as ops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rxacp.schema import (
    InitializeResponse,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
)
from rxacp.schema import methods as m
from rxacp.session import AcpSession, IncomingNotification, IncomingRequest
from rxacp.transport import StdioAcpAgentTransport

__all__ = ["main"]

cancelled: set[str] = set()


def main() -> None:
    """Serve ACP on this process's stdin/stdout until the client disconnects."""
    session = AcpSession(StdioAcpAgentTransport(), role="agent")

    def say(session_id: str, text: str) -> None:
        session.send_notification(
            m.SESSION_UPDATE, SessionNotification.agent_text(session_id, text)
        )

    def initialize(req: IncomingRequest) -> reactivex.Observable[Any]:
        return reactivex.just(
            InitializeResponse.ok(agent_info={"name": "echo-agent-raw", "version": "1.0.0"})
        )

    def new_session(req: IncomingRequest) -> reactivex.Observable[Any]:
        return reactivex.just(NewSessionResponse(session_id=f"echo-{os.getpid()}"))

    def on_cancel(note: IncomingNotification) -> None:
        cancelled.add((note.params or {}).get("sessionId", ""))

    def prompt(req: IncomingRequest) -> reactivex.Observable[Any]:
        request = PromptRequest.from_wire(req.params)
        sid = request.session_id
        cancelled.discard(sid)
        text = request.prompt_text()

        def echo(_: Any = None) -> reactivex.Observable[Any]:
            # one word every 50 ms on the engine's scheduler, stopping early on session/cancel
            words = text.lstrip("!").split() or ["(empty)"]

            def step(i: int) -> PromptResponse | None:
                if sid in cancelled:
                    return PromptResponse.cancelled()
                if i < len(words):
                    say(sid, words[i] + " ")
                    return None
                return PromptResponse.end_turn()

            return reactivex.interval(0.05, scheduler=session.scheduler).pipe(
                ops.map(step), ops.filter(lambda r: r is not None), ops.take(1)
            )

        if not text.startswith("!"):
            return echo()
        ask = {
            "sessionId": sid,
            "toolCall": {"toolCallId": "echo-1", "title": "Echo a shouted prompt"},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        }

        def decide(result: Any) -> reactivex.Observable[Any]:
            outcome = result.get("outcome", {})
            if outcome.get("outcome") == "cancelled":
                return reactivex.just(PromptResponse.cancelled())
            if outcome.get("optionId") != "yes":
                say(sid, "(permission refused)")
                return reactivex.just(PromptResponse.refusal())
            return echo()

        turn: reactivex.Observable[Any] = session.send_request(
            m.SESSION_REQUEST_PERMISSION, ask
        ).pipe(ops.flat_map(decide))
        return turn

    session.set_request_handler(m.INITIALIZE, initialize)
    session.set_request_handler(m.SESSION_NEW, new_session)
    session.set_request_handler(m.SESSION_PROMPT, prompt)
    session.set_notification_handler(m.SESSION_CANCEL, on_cancel, ordered=False)
    session.start()
    session.wait_closed()
    session.close()


if __name__ == "__main__":
    main()
