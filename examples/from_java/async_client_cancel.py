"""Ported from the Java SDK tutorial's cancellation demo (an async client with
``CancellationSignal``), against the rxacp reference agent over stdio.

Java: ``client.prompt(request, signal)`` then ``signal.cancel()`` from another thread; the
prompt still completes with the agent's answer (stop reason ``cancelled``). rxacp: the same,
with the prompt a cold Observable (``await`` it, or ``.block()`` as in Java).

Three scenes, each printed as one line:

1. cancel while a slow turn streams: ``session/cancel`` is sent; a second prompt on the same
   session *in between* is refused ``-32600`` (one active turn per session, until the cancelled
   one is answered); then the first prompt's answer: ``cancelled``;
2. the grace period: a handler that ignores the cancel is answered ``cancelled`` by the SDK
   after ``--cancel-grace`` seconds;
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

GRACE = "1"
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

        # 1. cancel a running turn; a prompt in between is refused -32600
        stop = CancellationSignal()
        turn = asyncio.ensure_future(client.prompt(PromptRequest.text(sid, "slow 10"), stop))
        await first_update.wait()
        stop.cancel()  # Java: signal.cancel() -> session/cancel
        try:
            await client.prompt(PromptRequest.text(sid, "echo too early"))
            between = "accepted"
        except AcpProtocolException as exc:
            between = str(exc.code)
        print(f"cancel: in-between prompt {between}, answer {(await turn).stop_reason}")

        # 2. grace period: the handler ignores the cancel; the SDK answers for it
        stop = CancellationSignal()
        first_update.clear()
        turn = asyncio.ensure_future(client.prompt(PromptRequest.text(sid, "stubborn 10"), stop))
        await first_update.wait()
        stop.cancel()
        print(f"grace: answer {(await turn).stop_reason} after the {GRACE} s grace period")

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
