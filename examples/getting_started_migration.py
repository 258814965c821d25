"""Migration from the Java SDK: one agent and one client, written the way a Java SDK user would
write them, side by side with the Java in ``docs/migration-from-java.md``.

Both run in this process over an ``InMemoryTransportPair`` (the Java ``acp-test`` module's
``InMemoryTransportPair``). Run: ``python examples/getting_started_migration.py``
"""

from __future__ import annotations

import threading
from datetime import timedelta

from rxacp import (
    AcpAgent,
    AcpCapabilityException,
    AcpClient,
    AcpErrorCodes,
    AcpProtocolException,
    CancellationSignal,
    SyncPromptContext,
)
from rxacp.schema import (
    InitializeResponse,
    LoadSessionRequest,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
)
from rxacp.testing import InMemoryTransportPair


# --8<-- [start:agent]
# Java: (request, context) -> { ... context.sendMessage(...); return PromptResponse.endTurn(); }
def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    started = threading.Event()
    ctx.on_cancel(started.set)  # Java: context.onCancel(Runnable)
    for word in req.prompt_text().split():
        if ctx.is_cancelled():  # Java: context.isCancelled()
            break
        ctx.send_message(word + " ")  # Java: context.sendMessage(String)
        started.wait(0.05)  # pace the words; wakes at once on cancel
    return PromptResponse.end_turn()  # Java: PromptResponse.endTurn()


pair = InMemoryTransportPair.create()  # Java: InMemoryTransportPair.create()
agent = (
    AcpAgent.sync(pair.agent_transport)  # Java: AcpAgent.sync(pair.agentTransport())
    .request_timeout(timedelta(seconds=30))  # Java: .requestTimeout(Duration.ofSeconds(30))
    .cancel_grace_period(timedelta(seconds=60))  # Java: .cancelGracePeriod(...)
    .max_prompt_duration(timedelta(minutes=30))  # Java: .maxPromptDuration(...)
    .initialize_handler(lambda req: InitializeResponse.ok())  # Java: InitializeResponse.ok()
    .new_session_handler(lambda req: NewSessionResponse(session_id="session-1"))
    .prompt_handler(prompt)
    .build()
)
agent.start()  # Java: agent.start() (run() = start + awaitTermination)
# --8<-- [end:agent]


# --8<-- [start:client]
def show(note: SessionNotification) -> None:  # Java: sessionUpdateHandler / Consumer
    if note.update.session_update == "agent_message_chunk":
        print(note.update.content.text, end="", flush=True)


client = (
    AcpClient.sync(pair.client_transport)  # Java: AcpClient.sync(pair.clientTransport())
    .request_timeout(timedelta(seconds=30))  # Java: .requestTimeout(Duration.ofSeconds(30))
    .prompt_timeout(timedelta(minutes=10))  # Java: .promptTimeout(Duration.ofMinutes(10))
    .session_update_consumer(show)  # Java: .sessionUpdateHandler(...)
    .build()
)
with client:  # Java: try (AcpSyncClient client = ...) { ... }
    client.initialize()  # Java: client.initialize()
    sid = client.new_session(NewSessionRequest(cwd="/", mcp_servers=[])).session_id
    answer = client.prompt(PromptRequest.text(sid, "words from python"))
    print(f"[{answer.stop_reason}]")  # Java: response.stopReason()

    stop = CancellationSignal()  # Java: new CancellationSignal()
    threading.Timer(0.12, stop.cancel).start()  # Java: stop.cancel() from any thread
    answer = client.prompt(PromptRequest.text(sid, " ".join(["word"] * 100)), stop)
    print(f"[{answer.stop_reason}]")

    try:  # the agent did not advertise loadSession: nothing is sent
        client.load_session(LoadSessionRequest(session_id=sid, cwd="/", mcp_servers=[]))
    except AcpCapabilityException as exc:  # Java: AcpCapabilityException
        print(f"not sent: {exc.capability}")
    try:  # Java: client.sendExtRequest("_example.com/ping", params)
        client.ext_method("_example.com/ping", {})
    except AcpProtocolException as exc:  # Java: AcpError / AcpProtocolException
        print(f"error {exc.code} (method not found: {exc.code == AcpErrorCodes.METHOD_NOT_FOUND})")
agent.close()  # Java: agent.close()
# --8<-- [end:client]
