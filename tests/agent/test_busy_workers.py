"""Issue 30 item 3: a sync agent's requests that are not prompt turns never queue behind
prompt handlers that hold every worker.

32 sync prompt handlers each waiting for a permission answer took all 32 workers of the one
pool, so ``session/new`` waited for the 60 s request timeout (the async API and the official
SDK answered it at once). Each request method now has its own lane of ``max_workers``.
"""

from __future__ import annotations

from typing import Any

from reactivex import operators as ops

from rxacp.schema import NewSessionResponse, PromptResponse
from tests.polling import wait_until

from .harness import AgentHarness

TURNS = 32


def test_session_new_is_answered_while_32_sync_prompt_turns_wait_for_permission() -> None:
    def prompt(_request: Any, ctx: Any) -> PromptResponse:
        ctx.ask_permission("run the tests")  # blocks its worker until the client answers
        return PromptResponse(stop_reason="end_turn")

    def configure(builder: Any) -> None:
        builder.prompt_handler(prompt).new_session_handler(
            lambda _req: NewSessionResponse(session_id="fresh")
        )

    h = AgentHarness(
        "sync", configure=configure, client_capabilities={"fs": {"readTextFile": True}}
    )
    try:
        for turn in range(TURNS):
            h.prompt(session=f"s{turn}")
        asked = [h.next(30.0) for _ in range(TURNS)]  # every worker now waits on its answer
        assert {m["method"] for m in asked} == {"session/request_permission"}
        lane = h.agent.session.worker_stats("session/prompt")
        assert lane is not None and lane.busy == TURNS
        rid = h.send_request("session/new", {"cwd": "/", "mcpServers": []})
        answer = h.next(30.0)  # before: nothing until the request timeout (virtual clock here)
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "fresh"}}
        for m in asked:  # the turns end once the permissions are answered
            outcome = {"outcome": {"outcome": "selected", "optionId": "allow"}}
            h.send({"id": m["id"], "result": outcome})
        ends = [h.next(30.0) for _ in range(TURNS)]
        assert all(e["result"] == {"stopReason": "end_turn"} for e in ends), ends
    finally:
        h.close()


def test_a_prompt_arriving_while_the_client_does_not_read_still_sees_its_session_cancel() -> None:
    """Requests are held while the outbound buffer is full, but never a prompt: a held turn
    would start after the ``session/cancel`` that followed it and miss it."""

    def prompt(_request: Any, ctx: Any) -> Any:
        return ctx.when_cancelled().pipe(  # runs until cancelled
            ops.map(lambda _: PromptResponse(stop_reason="end_turn"))
        )

    h = AgentHarness("async", configure=lambda b: b.prompt_handler(prompt))
    try:
        receiver: Any = h.peer.receiver
        h.agent.session.run_on_loop(receiver.on_write_paused)  # the client stopped reading
        assert wait_until(lambda: h.agent.session.outbound_paused, 10.0)
        rid = h.prompt()
        h.cancel()  # (no flush(): a call from this thread would wait on the paused gate)
        h.agent.session.run_on_loop(receiver.on_write_resumed)  # after both, in order
        answer = h.next(30.0)
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    finally:
        h.close()
