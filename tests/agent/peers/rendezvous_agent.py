"""A blocking agent whose prompt handlers meet: each turn streams ``started``, then waits (bounded)
until the turns of ``--sessions`` sessions are all running, then streams ``met`` (or ``alone``
when the others never started: turns run one after another) and three more chunks.

``python rendezvous_agent.py --api sync|decorators [--sessions N]`` serves stdio.
"""

from __future__ import annotations

import argparse
import threading
import uuid

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.agent.support import AcpAgentSupport, acp_agent, new_session, prompt
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse

MEET_SECONDS = 10.0


class Turns:
    def __init__(self, sessions: int) -> None:
        self.meeting = threading.Barrier(sessions)

    def new_session(self, _req: NewSessionRequest) -> NewSessionResponse:
        return NewSessionResponse(session_id=str(uuid.uuid4()))

    def prompt(self, _req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.send_message("started")
        try:
            self.meeting.wait(MEET_SECONDS)
            ctx.send_message("met")
        except threading.BrokenBarrierError:
            ctx.send_message("alone")
        for i in range(3):
            ctx.send_message(f"chunk {i}")
        return PromptResponse.end_turn()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", choices=["sync", "decorators"], required=True)
    parser.add_argument("--sessions", type=int, default=2)
    args = parser.parse_args()
    turns = Turns(args.sessions)
    if args.api == "sync":
        (
            AcpAgent.sync(StdioAcpAgentTransport())
            .new_session_handler(turns.new_session)
            .prompt_handler(turns.prompt)
            .build()
            .run()
        )
        return

    @acp_agent(name="rendezvous", version="1.0.0")
    class Rendezvous:
        @new_session
        def new(self, req: NewSessionRequest) -> NewSessionResponse:
            return turns.new_session(req)

        @prompt
        def turn(self, req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
            return turns.prompt(req, ctx)

    AcpAgentSupport.create(Rendezvous()).transport(StdioAcpAgentTransport()).run()


if __name__ == "__main__":
    main()
