"""``PromptTimeouts``: both prompt-turn timers as one frozen value, accepted by both agent
builders and the decorator support (issue 19.4); behaviour checked in virtual time."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from rxacp.agent import PromptTimeouts, SyncPromptContext
from rxacp.agent.support import acp_agent, prompt
from rxacp.schema import PromptRequest, PromptResponse
from tests.agent.harness import AgentHarness
from tests.agent_support.harness import SupportHarness

pytestmark = pytest.mark.timeout(30)


def test_defaults_none_and_with_copies() -> None:
    assert PromptTimeouts(timedelta(seconds=60), None) == PromptTimeouts.DEFAULTS
    assert PromptTimeouts(None, None) == PromptTimeouts.NONE
    custom = PromptTimeouts.DEFAULTS.with_max_prompt_duration(1800).with_cancel_grace_period(
        timedelta(seconds=5)
    )
    assert custom == PromptTimeouts(timedelta(seconds=5), timedelta(minutes=30))
    assert PromptTimeouts.DEFAULTS.cancel_grace_period == timedelta(seconds=60)  # unchanged
    assert PromptTimeouts.DEFAULTS.with_cancel_grace_period(0) == PromptTimeouts.NONE
    with pytest.raises(dataclasses.FrozenInstanceError):
        # deliberately writes a frozen field: proves the runtime refusal
        custom.cancel_grace_period = None  # type: ignore[misc]


def test_bad_durations_are_refused_naming_the_timer() -> None:
    with pytest.raises(ValueError, match="cancel_grace_period"):
        PromptTimeouts.DEFAULTS.with_cancel_grace_period(-1)
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="max_prompt_duration"):
        PromptTimeouts(max_prompt_duration="PT30M")  # type: ignore[arg-type]


def test_builders_refuse_something_that_is_not_prompt_timeouts() -> None:
    from rxacp.agent import AcpAgent
    from rxacp.agent.support import AcpAgentSupport
    from tests.session.conftest import ScriptedTransport

    @acp_agent(name="a", version="1")
    class Agent:
        pass

    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="PromptTimeouts"):
        AcpAgent.sync(ScriptedTransport()).prompt_timeouts(60)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="PromptTimeouts"):
        AcpAgentSupport.create(Agent()).prompt_timeouts((60, None))  # type: ignore[arg-type]


class _Stubborn:
    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.send_message("stubborn")
        self.release.wait(10)
        return PromptResponse.end_turn()


@pytest.fixture
def stubborn() -> Iterator[_Stubborn]:
    handler = _Stubborn()
    yield handler
    handler.release.set()


def _harness(kind: str, handler: _Stubborn, timeouts: PromptTimeouts) -> AgentHarness:
    if kind == "builder":
        return AgentHarness(
            "sync", configure=lambda b: b.prompt_handler(handler).prompt_timeouts(timeouts)
        )

    @acp_agent(name="stubborn", version="1")
    class Agent:
        @prompt
        def run(self, req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
            return handler(req, ctx)

    return SupportHarness(Agent(), configure=lambda b: b.prompt_timeouts(timeouts))


@pytest.mark.parametrize("kind", ["builder", "decorators"])
def test_prompt_timeouts_set_the_max_duration_and_the_grace_period(
    stubborn: _Stubborn, kind: str
) -> None:
    h = _harness(kind, stubborn, PromptTimeouts.NONE)
    try:
        rid = h.prompt()
        assert h.next()["method"] == "session/update"
        h.cancel()
        h.advance(1000)  # both timers off: nothing answers the stubborn prompt ...
        assert h.idle()
        h2 = _harness(kind, stubborn, PromptTimeouts.NONE.with_max_prompt_duration(30))
        try:
            rid2 = h2.prompt()
            h2.next()
            h2.advance(30.5)  # ... while the max duration does
            _, answer = h2.next_answer()
            assert answer["id"] == rid2 and answer["error"]["code"] == -32800
            assert answer["error"]["data"] == {"maxPromptDuration": "PT30S"}
        finally:
            h2.close()
        assert rid is not None
    finally:
        h.close()


@pytest.mark.parametrize("kind", ["builder", "decorators"])
def test_prompt_timeouts_defaults_answer_cancelled_after_sixty_seconds(
    stubborn: _Stubborn, kind: str
) -> None:
    h = _harness(kind, stubborn, PromptTimeouts.DEFAULTS)
    try:
        rid = h.prompt()
        h.next()
        h.cancel()
        h.advance(59)
        assert h.idle()
        h.advance(1.5)
        _, answer = h.next_answer()
        assert answer == {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "cancelled"}}
    finally:
        h.close()
