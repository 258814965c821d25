"""Item 3: ``session/cancel`` and ``$/cancel_request`` at random points of 1,000 prompt turns.

A sync agent streams numbered updates and sometimes asks permission; the client (a raw
session, so the test controls every message) cancels at a seeded random point: before the first
update, after some updates, after the last one, while the permission request waits, after the
answer, several times, by ``$/cancel_request`` for the prompt or for an unknown id. Both
directions of the wire are tapped. Per turn: exactly one answer on the wire, an allowed outcome,
no update of the turn after its answer, no hang; afterwards every pending map is empty and every
worker idle. The per-rule tests are in tests/agent/test_prompt_turn.py and
tests/agent/test_turn_race_property.py; this is the end-to-end stress over a real transport.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter, defaultdict
from functools import partial
from typing import Any

from rxacp.agent import AcpAgent, SyncPromptContext
from rxacp.errors import AcpProtocolException
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
from rxacp.session import AcpSession
from rxacp.session.blocking import wait_for
from rxacp.session.workers import WorkerPoolStats
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import Figure, scaled, wait_until


def _busy(session: AcpSession) -> int:
    stats: WorkerPoolStats | None = session.worker_stats()
    assert stats is not None
    return stats.busy


TURNS = scaled(1_000, 10_000)
SEED = 20240909
MODES = (
    "none",
    "cancel_at_once",
    "cancel_after_updates",
    "cancel_in_permission",
    "cancel_request_prompt",
    "both",
    "cancel_three_times",
    "cancel_after_answer",
    "cancel_request_unknown",
)


class Tap:
    """Counts the frames of both directions (the wire as the peer sees it)."""

    def __init__(self, pair: InMemoryTransportPair) -> None:
        self.lock = threading.Condition()
        self.answers: Counter[Any] = Counter()  # agent -> client answers per request id
        self.prompt_ids: list[Any] = []
        self.events: list[tuple[str, Any]] = []  # ("u", turn) / ("a", id) in wire order
        self._wrap(pair.client_transport, self._from_client)
        self._wrap(pair.agent_transport, self._from_agent)

    @staticmethod
    def _wrap(transport: Any, observe: Any) -> None:
        send = transport.send

        def tapped(frame: Any) -> None:
            observe(json.loads(frame))
            send(frame)

        transport.send = tapped

    def _from_client(self, msg: dict[str, Any]) -> None:
        if msg.get("method") == "session/prompt":
            with self.lock:
                self.prompt_ids.append(msg["id"])

    def _from_agent(self, msg: dict[str, Any]) -> None:
        with self.lock:
            if msg.get("method") == "session/update":
                turn = int(msg["params"]["update"]["content"]["text"].split(":")[0])
                self.events.append(("u", turn))
            elif "method" not in msg:
                self.answers[msg["id"]] += 1
                self.events.append(("a", msg["id"]))
            self.lock.notify_all()

    def has_prompts(self, n: int) -> bool:
        """Exactly ``n`` prompts went to the agent so far."""
        with self.lock:
            return len(self.prompt_ids) == n

    def has_updates(self, turn: int, n: int) -> bool:
        """At least ``n`` updates of ``turn`` came back so far."""
        with self.lock:
            return self.events.count(("u", turn)) >= n

    def wait_answer(self, rid: Any, timeout: float = 5.0) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: self.answers[rid] >= 1, timeout)


def prompt_handler(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    turn, updates, ask = (int(x) for x in req.prompt_text().split())
    for i in range(updates):
        if ctx.is_cancelled():
            break
        ctx.send_message(f"{turn}:{i}")
        if ask and i == updates // 2:
            try:
                ctx.ask_permission(f"turn {turn}")
            except AcpProtocolException:
                break  # cancelled while waiting: the SDK answers `cancelled`
    return PromptResponse.end_turn()


def test_a_thousand_randomly_cancelled_turns_get_exactly_one_answer_and_leave_nothing_behind(
    figure: Figure,
) -> None:
    rnd = random.Random(SEED)
    pair = InMemoryTransportPair.create()
    tap = Tap(pair)
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(prompt_handler)
        .cancel_grace_period(5.0)
        .build()
    )
    agent.start()
    client = AcpSession(pair.client_transport, role="client")
    permission_waiting = threading.Event()
    hold: dict[str, Any] = {"mode": "none"}

    def permission(req: Any) -> Any:
        permission_waiting.set()
        if hold["mode"] in ("cancel_in_permission", "both"):
            return None  # never answered by us: the cancel cascade must settle it
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}

    def on_permission(req: Any) -> Any:
        result = permission(req)
        if result is not None:
            req.respond(result)
        return None

    client.set_request_handler("session/request_permission", on_permission)
    client.set_notification_handler("session/update", lambda n: None)
    client.start()
    wait_for(client.send_request("initialize", {"protocolVersion": 1}), 30.0)
    wait_for(client.send_request("session/new", {"cwd": "/tmp", "mcpServers": []}), 30.0)

    outcomes: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    violations: list[str] = []
    for turn in range(TURNS):
        mode = rnd.choice(MODES)
        modes[mode] += 1
        hold["mode"] = mode
        permission_waiting.clear()
        updates = rnd.randrange(0, 6)
        ask = int(mode in ("cancel_in_permission", "both") or rnd.random() < 0.2)
        updates = max(updates, 2) if ask else updates
        result: list[Any] = []
        prompt = client.send_request(
            "session/prompt", PromptRequest.text("s1", f"{turn} {updates} {ask}"), timeout=None
        )
        sub = prompt.subscribe(result.append, result.append)
        assert wait_until(partial(tap.has_prompts, turn + 1), 30.0)
        rid = tap.prompt_ids[turn]

        def cancel() -> None:
            client.send_notification("session/cancel", {"sessionId": "s1"})

        if mode == "cancel_at_once":
            cancel()
        elif mode == "cancel_after_updates":
            seen = rnd.randrange(0, updates + 1)
            wait_until(partial(tap.has_updates, turn, seen), 2.0)
            cancel()
        elif mode in ("cancel_in_permission", "both"):
            assert permission_waiting.wait(30.0), f"turn {turn}: no permission request"
            cancel()
            if mode == "both":
                sub.dispose()  # $/cancel_request for the prompt
        elif mode == "cancel_request_prompt":
            if rnd.random() < 0.5:
                wait_until(partial(tap.has_updates, turn, 1), 1.0)
            sub.dispose()
        elif mode == "cancel_three_times":
            for _ in range(3):
                cancel()
        elif mode == "cancel_request_unknown":
            client.send_notification("$/cancel_request", {"requestId": 10**9 + turn})
            client.send_notification("$/cancel_request", {"requestId": f"nope-{turn}"})

        if not tap.wait_answer(rid):
            violations.append(f"turn {turn} ({mode}): no answer (hang)")
            break
        disposed = mode in ("cancel_request_prompt", "both")
        if not disposed:  # the answer reaches the subscriber right after the wire
            assert wait_until(partial(bool, result), 30.0), f"turn {turn}: answer not delivered"
        if mode == "cancel_after_answer":
            cancel()
        sub.dispose()
        with tap.lock:
            answer_index = tap.events.index(("a", rid))
            late = [e for e in tap.events[answer_index:] if e == ("u", turn)]
        if late:
            violations.append(f"turn {turn} ({mode}): {len(late)} update(s) after the answer")
        if result:
            value = result[0]
            outcome = (
                value.get("stopReason")
                if isinstance(value, dict)
                else f"error {getattr(value, 'code', type(value).__name__)}"
            )
            outcomes[str(outcome)] += 1
            allowed = {"end_turn", "cancelled", "error -32800"}
            if mode == "none" and outcome != "end_turn":
                violations.append(f"turn {turn}: uncancelled turn ended {outcome}")
            elif outcome not in allowed:
                violations.append(f"turn {turn} ({mode}): outcome {outcome}")
        else:
            outcomes["disposed (answer discarded)"] += 1

    assert wait_until(lambda: agent.session.incoming_request_count == 0, 30.0)
    assert wait_until(lambda: agent.active_turns == 0, 30.0)
    assert agent.session.worker_stats() is not None  # the default pool, not a handler_executor
    assert wait_until(lambda: _busy(agent.session) == 0, 30.0)
    assert wait_until(lambda: client.incoming_request_count == 0, 30.0)
    with tap.lock:
        multiple = {rid: n for rid, n in tap.answers.items() if n != 1}
        per_turn = defaultdict(int, {rid: tap.answers[rid] for rid in tap.prompt_ids})
    figure("turns", TURNS)
    figure("modes", dict(modes))
    figure("outcomes", dict(outcomes))
    figure("requests_answered_more_than_once", len(multiple))
    figure("violations", len(violations))
    assert not violations, violations[:10]
    assert not multiple, multiple
    assert all(per_turn[rid] == 1 for rid in tap.prompt_ids)
    assert client.pending_request_count == 0 and agent.session.pending_request_count == 0
    assert _busy(client) == 0
    assert set(modes) == set(MODES)
    client.close()
    agent.close()
