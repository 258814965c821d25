"""Property: whatever the interleaving of handler answer, session/cancel, $/cancel_request,
grace period and maximum duration, a prompt gets exactly one answer — the right one."""

from __future__ import annotations

from typing import Any

import reactivex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reactivex.subject import Subject

from rxacp.agent import PromptContext
from rxacp.schema import PromptRequest, PromptResponse

from .harness import AgentHarness

GRACE, MAX = 10.0, 25.0

events = st.lists(
    st.one_of(
        st.just(("answer",)),
        st.just(("session_cancel",)),
        st.just(("cancel_request",)),
        st.tuples(st.just("advance"), st.sampled_from([1.0, 4.0, 9.0, 12.0])),
    ),
    min_size=1,
    max_size=8,
)


def expected(script: list[tuple[Any, ...]]) -> Any:
    now, cancelling_since = 0.0, None
    for event in script:
        kind = event[0]
        if kind == "answer":
            return "cancelled" if cancelling_since is not None else "end_turn"
        if kind == "session_cancel":
            cancelling_since = now if cancelling_since is None else cancelling_since
        elif kind == "cancel_request":
            return "cancelled" if cancelling_since is not None else -32800
        else:
            now += event[1]
            grace_at = cancelling_since + GRACE if cancelling_since is not None else None
            fired = sorted(t for t in (grace_at, MAX) if t is not None and t <= now)
            if fired:
                first = fired[0]
                if first == grace_at or cancelling_since is not None:
                    return "cancelled"
                return -32800
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=events)
def test_exactly_one_right_answer_for_any_interleaving(script: list[tuple[Any, ...]]) -> None:
    answers: Subject[PromptResponse] = Subject()

    def handler(req: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
        return answers

    h = AgentHarness(
        "async", grace=GRACE, max_duration=MAX, configure=lambda b: b.prompt_handler(handler)
    )
    try:
        rid = h.prompt()
        h.flush()
        for event in script:
            if event[0] == "answer":
                answers.on_next(PromptResponse.end_turn())
            elif event[0] == "session_cancel":
                h.cancel()
            elif event[0] == "cancel_request":
                h.cancel_request(rid)
            else:
                h.advance(event[1])
            h.flush()
        want = expected(script)
        sent: list[dict[str, Any]] = []
        while not h.idle():
            sent.append(h.next())
        answers_seen = [m for m in sent if m.get("id") == rid]
        if want is None:
            assert answers_seen == [] and h.agent.active_turns == 1
            return
        assert len(answers_seen) == 1, sent
        answer = answers_seen[0]
        if want == -32800:
            assert answer["error"]["code"] == -32800
        else:
            assert answer["result"] == {"stopReason": want}
        assert h.agent.active_turns == 0
        assert h.agent.session.incoming_request_count == 0
    finally:
        h.close()
