"""Ported from a Java SDK annotated agent (``@AcpAgent`` with ``@Prompt``, ``@Cancel``,
``@SetSessionMode``, an ``AcpInterceptor`` and an ``@ExceptionHandler``).

Prompts: ``count <n>`` streams 1..n (stops when cancelled); ``fail`` raises ``ValueError``,
which the exception handler turns into stop reason ``refusal``; anything else is echoed. The
session mode (``chat`` or ``code``, default ``chat``) prefixes every message. The interceptor
counts calls per method and writes them to stderr at exit.

Run: ``rxacp prompt --agent "python examples/from_java/annotated_agent.py" "count 3"``.
"""

from __future__ import annotations

import atexit
import sys
import threading
from collections import Counter
from typing import Annotated

from rxacp import StdioAcpAgentTransport, SyncPromptContext
from rxacp.agent.support import (
    AcpAgentSupport,
    AcpInterceptor,
    InvocationContext,
    SessionId,
    acp_agent,
    cancel,
    exception_handler,
    new_session,
    prompt,
    set_session_mode,
)
from rxacp.errors import AcpProtocolException
from rxacp.schema import (
    CancelNotification,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeRequest,
    SetSessionModeResponse,
)

MODES = ("chat", "code")


class CallCounter(AcpInterceptor):
    """Java ``AcpInterceptor``: ``pre_handle`` runs before every handler."""

    order = 10  # Java getOrder()

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def pre_handle(self, ctx: InvocationContext) -> bool | None:
        self.calls[ctx.method] += 1
        return None


@acp_agent(name="annotated-counter", version="1.0.0")
class CounterAgent:
    def __init__(self) -> None:
        self.modes: dict[str, str] = {}
        self.cancelled: dict[str, threading.Event] = {}

    @new_session
    def create(self, req: NewSessionRequest) -> NewSessionResponse:
        sid = f"session-{len(self.modes) + 1}"
        self.modes[sid] = "chat"
        self.cancelled[sid] = threading.Event()
        modes = [SessionMode(id=m, name=m.title()) for m in MODES]
        return NewSessionResponse(
            session_id=sid, modes=SessionModeState(current_mode_id="chat", available_modes=modes)
        )

    @set_session_mode
    def mode(self, req: SetSessionModeRequest) -> SetSessionModeResponse:
        if req.mode_id not in MODES:
            raise AcpProtocolException.invalid_params(f"unknown mode {req.mode_id!r}")
        self.modes[req.session_id] = req.mode_id
        return SetSessionModeResponse()

    @cancel
    def on_cancel(self, note: CancelNotification) -> None:
        # Java's @Cancel handler; in rxacp the SDK also cancels the turn (ctx.is_cancelled())
        event = self.cancelled.get(note.session_id)
        if event is not None:
            event.set()

    @prompt
    def run(
        self, req: PromptRequest, ctx: SyncPromptContext, sid: Annotated[str, SessionId]
    ) -> PromptResponse:
        self.cancelled[sid].clear()
        mode = self.modes.get(sid, "chat")
        command, _, arg = req.prompt_text().partition(" ")
        if command == "fail":
            raise ValueError("asked to fail")
        if command != "count":
            ctx.send_message(f"[{mode}] {req.prompt_text()}")
            return PromptResponse.end_turn()
        for i in range(1, int(arg or "3") + 1):
            if self.cancelled[sid].wait(0.2 if i > 1 else 0) or ctx.is_cancelled():
                return PromptResponse.cancelled()
            ctx.send_message(f"[{mode}] {i}")
        return PromptResponse.end_turn()

    @exception_handler(ValueError)
    def refuse(self, exc: ValueError) -> PromptResponse:
        return PromptResponse(stop_reason="refusal")


if __name__ == "__main__":
    counter = CallCounter()
    atexit.register(lambda: print(f"calls: {dict(counter.calls)}", file=sys.stderr))
    (
        AcpAgentSupport.create(CounterAgent())
        .transport(StdioAcpAgentTransport())
        .interceptor(counter)
        .run()
    )
