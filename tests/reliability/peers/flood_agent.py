"""An rxacp sync agent for the back-pressure and stdout-guard tests.

Prompt texts: ``flood N SIZE`` sends N agent_message_chunk updates of SIZE characters from the
worker thread (a blocking producer); ``mixed N SIZE READS PATH`` does the same while READS
other threads each read PATH with ``fs/read_text_file`` 4 times in a row, then sends
``read <total characters> in <reads>`` (both sides back-pressured at once: issue 30);
``print`` calls ``print()`` inside the handler (the stdout guard must send it to stderr) and
answers; anything else is echoed.
"""

from __future__ import annotations

import sys
import threading

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse


def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    words = req.prompt_text().split()
    if words[:1] == ["flood"]:
        count, size = int(words[1]), int(words[2])
        for i in range(count):
            ctx.send_message(f"{i:09d}" + "x" * max(size - 9, 0))
    elif words[:1] == ["mixed"]:
        count, size, reads, path = int(words[1]), int(words[2]), int(words[3]), words[4]
        got: list[int] = []

        def read_four() -> None:
            for _ in range(4):
                got.append(len(ctx.read_file(path)))

        readers = [threading.Thread(target=read_four) for _ in range(reads)]
        for reader in readers:
            reader.start()
        for i in range(count):
            ctx.send_message(f"{i:09d}" + "x" * max(size - 9, 0))
        for reader in readers:
            reader.join(120.0)
        ctx.send_message(f"read {sum(got)} in {len(got)}")
    elif words[:1] == ["print"]:
        print("hello from print() inside a handler")
        print("{not json either")
        sys.stdout.flush()
        ctx.send_message("printed")
    else:
        ctx.send_message(req.prompt_text())
    return PromptResponse.end_turn()


def new_session(req: NewSessionRequest) -> NewSessionResponse:
    return NewSessionResponse(session_id="s1")


if __name__ == "__main__":
    high = int(sys.argv[1]) if len(sys.argv) > 1 else 256 * 1024
    (
        AcpAgent.sync(StdioAcpAgentTransport(write_buffer_high=high))
        .new_session_handler(new_session)
        .prompt_handler(prompt)
        .build()
        .run()
    )
