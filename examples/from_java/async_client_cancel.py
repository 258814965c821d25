"""Ported from the Java SDK tutorial's cancellation demo (an async client with
``CancellationSignal``), against the rxacp reference agent over stdio.

Java: ``client.prompt(request, signal)`` then ``signal.cancel()`` from another thread; the
prompt still completes with the agent's answer (stop reason ``cancelled``). rxacp: the same,
with the prompt a cold Observable (``await`` it, or ``.block()`` as in Java).

Three scenes, each printed as one line:

1. cancel while a slow turn streams: ``session/cancel`` is sent, the agent stops at its current
   step, and the prompt still completes with the agent's answer: ``cancelled``;
2. the grace period: a handler that ignores the cancel keeps its session busy, so a second
   prompt on that session *in between* is refused ``-32600`` (one active turn per session, until
   the cancelled one is answered); the SDK answers ``cancelled`` for the handler after
   ``--cancel-grace`` seconds;
3. the max prompt duration: a turn running longer than ``--max-prompt-duration`` is answered
   ``-32800`` with ``{"maxPromptDuration": "PT2S"}``.

Run: ``python examples/from_java/async_client_cancel.py`` (extra arguments are passed to the
agent, e.g. ``--log-wire /tmp/wire.jsonl``).
"""

from __future__ import annotations

import asyncio
import sys

from reactivex import operators as ops

from rxacp import AcpClient
from rxacp.client import CancellationSignal
from rxacp.errors import AcpProtocolException
from rxacp.schema import NewSessionRequest, PromptRequest
from rxacp.transport import AgentParameters, StdioAcpClientTransport

GRACE = "2"
MAX_DURATION = "2"


async def main(extra: list[str]) -> None:
    timers = ["--cancel-grace", GRACE, "--max-prompt-duration", MAX_DURATION]
    agent = AgentParameters(
        sys.executable, ["-m", "rxacp.testing.reference_agent", *timers, *extra]
    )
    first_update = asyncio.Event()
    loop = asyncio.get_running_loop()
    client = (
        AcpClient.async_(StdioAcpClientTransport(agent))
        .session_update_consumer(lambda _n: loop.call_soon_threadsafe(first_update.set))
        .build()
    )
    try:
        await client.initialize()
        sid = (await client.new_session(NewSessionRequest.of("/tmp"))).session_id

        # 1. cancel a running turn: the agent stops, the answer still arrives
        stop = CancellationSignal()
        turn = asyncio.ensure_future(client.prompt(PromptRequest.text(sid, "slow 10"), stop))
        await first_update.wait()
        stop.cancel()  # Java: signal.cancel() -> session/cancel
        print(f"cancel: answer {(await turn).stop_reason}")

        # 2. grace period: the handler ignores the cancel; a prompt in between is refused
        stop = CancellationSignal()
        first_update.clear()
        turn = asyncio.ensure_future(client.prompt(PromptRequest.text(sid, "stubborn 10"), stop))
        await first_update.wait()
        stop.cancel()
        try:
            await client.prompt(PromptRequest.text(sid, "echo too early"))
            between = "accepted"
        except AcpProtocolException as exc:
            between = str(exc.code)
        answer = (await turn).stop_reason
        print(f"grace: in-between prompt {between}, answer {answer} after the {GRACE} s grace")

        # 3. max prompt duration: -32800 with the limit in data
        try:
            await client.prompt(PromptRequest.text(sid, "slow 10")).pipe(ops.last())
            print("max duration: not reached")
        except AcpProtocolException as exc:
            print(f"max duration: error {exc.code} {exc.data}")
    finally:
        await client.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
