"""``hold_prompt_while_cancelling`` (issue 14 item 5): a prompt that arrives while its
session's turn is being cancelled waits for the cancelled answer instead of ``-32600``.

On the wire with a scripted client and a virtual clock (both agent APIs and the decorator
support), plus a real stdio agent driven the way ``acp-client`` drives it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject

from rxacp.agent import PromptContext, SyncPromptContext
from rxacp.agent.support import acp_agent, prompt
from rxacp.schema import PromptRequest, PromptResponse
from tests.agent_support.harness import SupportHarness

from .harness import SESSION, AgentHarness

PEER = os.path.join(os.path.dirname(__file__), "peers", "hold_agent.py")
API = ["sync", "async"]


class Script:
    """Prompt handlers: ``slow`` waits until :meth:`release` (after its cancel), answering
    ``end_turn`` (the SDK answers ``cancelled``); ``stubborn`` never answers; ``echo X``."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self._release = threading.Event()
        self._subject: Subject[int] = Subject()

    def release(self, harness: AgentHarness) -> None:
        self._release.set()
        harness.agent.session.run_on_loop(lambda: self._subject.on_next(1))

    def sync_handler(self, req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        text = req.prompt_text()
        self.started.append(text)
        if text == "slow":
            ctx.send_message("working")
            assert self._release.wait(5)
        elif text == "stubborn":
            ctx.send_message("stubborn")
            self._release.wait(5)
        else:
            ctx.send_message(text.removeprefix("echo "))
        return PromptResponse.end_turn()

    def async_handler(self, req: PromptRequest, ctx: PromptContext) -> Any:
        text = req.prompt_text()
        self.started.append(text)
        if text == "slow":
            ctx.send_message("working")
            return self._subject.pipe(ops.take(1), ops.map(lambda _: PromptResponse.end_turn()))
        if text == "stubborn":
            ctx.send_message("stubborn")
            return reactivex.never()
        ctx.send_message(text.removeprefix("echo "))
        return PromptResponse.end_turn()


def make(
    harnesses: list[AgentHarness],
    api: str,
    script: Script,
    *,
    hold: bool = True,
    grace: float = 60.0,
) -> AgentHarness:
    handler = script.sync_handler if api == "sync" else script.async_handler

    def configure(builder: Any) -> None:
        builder.prompt_handler(handler)
        if hold:
            builder.hold_prompt_while_cancelling()

    h = AgentHarness(api, grace=grace, configure=configure)
    harnesses.append(h)
    return h


def _update_text(msg: dict[str, Any]) -> str:
    return str(msg["params"]["update"]["content"]["text"])


def cancelling(
    harnesses: list[AgentHarness], api: str, text: str = "slow", **options: Any
) -> tuple[Script, AgentHarness, Any]:
    """An agent whose ``text`` turn sent its first update and got ``session/cancel``;
    returns the script, the harness and the id of that prompt (its answer still pending)."""
    script = Script()
    h = make(harnesses, api, script, **options)
    first = h.prompt(text)
    assert _update_text(h.next()) == ("working" if text == "slow" else text)
    h.cancel()
    return script, h, first


@pytest.mark.parametrize("api", API)
def test_a_prompt_during_a_cancelling_turn_runs_once_the_cancelled_turn_answered(
    harnesses: list[AgentHarness], api: str
) -> None:
    script, h, first = cancelling(harnesses, api)
    second = h.prompt("echo next")
    assert h.idle()  # held: neither refused nor started
    assert script.started == ["slow"]
    script.release(h)
    before, answer = h.next_answer()
    assert answer["id"] == first and answer["result"]["stopReason"] == "cancelled"
    before, answer = h.next_answer()
    assert [_update_text(m) for m in before] == ["next"]
    assert answer["id"] == second and answer["result"]["stopReason"] == "end_turn"
    assert script.started == ["slow", "echo next"]


@pytest.mark.parametrize("api", API)
def test_a_held_prompt_is_bounded_by_the_grace_period_in_virtual_time(
    harnesses: list[AgentHarness], api: str
) -> None:
    script, h, first = cancelling(harnesses, api, "stubborn", grace=10.0)
    second = h.prompt("echo next")
    h.advance(9.9)
    assert h.idle()
    h.advance(0.2)  # the grace period answers the stubborn turn: the held prompt runs
    _, answer = h.next_answer()
    assert answer["id"] == first and answer["result"]["stopReason"] == "cancelled"
    _, answer = h.next_answer()
    assert answer["id"] == second and answer["result"]["stopReason"] == "end_turn"
    script.release(h)


@pytest.mark.parametrize("api", API)
def test_with_the_option_a_prompt_during_a_running_turn_and_a_second_held_one_get_32600(
    harnesses: list[AgentHarness], api: str
) -> None:
    script = Script()
    h = make(harnesses, api, script)
    h.prompt("slow")
    h.next()
    running = h.prompt("echo too early")
    answer = h.next()
    assert answer["id"] == running and answer["error"]["code"] == -32600
    h.cancel()
    h.prompt("echo held")
    extra = h.prompt("echo one more")
    answer = h.next()
    assert answer["id"] == extra and answer["error"]["code"] == -32600
    script.release(h)


@pytest.mark.parametrize("api", API)
@pytest.mark.parametrize(
    ("how", "expected"), [("session/cancel", "cancelled"), ("$/cancel_request", -32800)]
)
def test_a_cancelled_held_prompt_is_answered_at_once_and_never_runs(
    harnesses: list[AgentHarness], api: str, how: str, expected: str | int
) -> None:
    """``session/cancel`` answers it ``cancelled``, ``$/cancel_request`` ``-32800``."""
    script, h, _ = cancelling(harnesses, api)
    held = h.prompt("echo never")
    if how == "session/cancel":
        h.cancel()
    else:
        h.cancel_request(held)
    answer = h.next()
    assert answer["id"] == held
    outcome = answer["result"]["stopReason"] if "result" in answer else answer["error"]["code"]
    assert outcome == expected
    script.release(h)
    h.next_answer()  # the cancelled turn
    assert h.idle() and script.started == ["slow"]


@pytest.mark.parametrize("api", API)
def test_without_the_option_or_without_a_grace_period_the_prompt_gets_32600(
    harnesses: list[AgentHarness], api: str
) -> None:
    for hold, grace in ((False, 60.0), (True, 0.0)):
        script, h, _ = cancelling(harnesses, api, hold=hold, grace=grace)
        refused = h.prompt("echo refused")
        answer = h.next()
        assert answer["id"] == refused and answer["error"]["code"] == -32600
        script.release(h)


def test_the_decorator_support_offers_the_option() -> None:
    release = threading.Event()

    @acp_agent(name="held", version="1")
    class Held:
        @prompt
        def answer(self, req: PromptRequest, ctx: SyncPromptContext) -> str:
            if req.prompt_text() == "slow":
                release.wait(5)
            return req.prompt_text()

    h = SupportHarness(Held(), configure=lambda b: b.hold_prompt_while_cancelling())
    try:
        first = h.prompt("slow")
        h.cancel()
        second = h.prompt("after")
        assert h.idle()
        release.set()
        _, answer = h.next_answer()
        assert answer["id"] == first and answer["result"]["stopReason"] == "cancelled"
        _, answer = h.next_answer()
        assert answer["id"] == second and answer["result"]["stopReason"] == "end_turn"
    finally:
        h.close()


def test_the_option_only_takes_a_bool() -> None:
    from rxacp.agent import AcpAgent
    from tests.session.conftest import ScriptedTransport

    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="bool"):
        AcpAgent.sync(ScriptedTransport()).hold_prompt_while_cancelling("yes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- real stdio
def test_over_stdio_cancel_then_an_immediate_prompt_is_answered_after_the_cancelled_one() -> None:
    proc = subprocess.Popen(
        [sys.executable, PEER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(obj: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **obj}).encode() + b"\n")
        proc.stdin.flush()

    def prompt_params(text: str) -> dict[str, Any]:
        return {"sessionId": SESSION, "prompt": [{"type": "text", "text": text}]}

    try:
        send({"id": 1, "method": "session/prompt", "params": prompt_params("slow")})
        assert b"working" in proc.stdout.readline()
        # what acp-client does: cancel, then ask again before the cancelled answer
        send({"method": "session/cancel", "params": {"sessionId": SESSION}})
        send({"id": 2, "method": "session/prompt", "params": prompt_params("echo again")})
        answers: list[dict[str, Any]] = []
        while len(answers) < 2:
            msg = json.loads(proc.stdout.readline())
            if "id" in msg:
                answers.append(msg)
        assert [a["id"] for a in answers] == [1, 2]
        assert answers[0]["result"]["stopReason"] == "cancelled"
        assert answers[1]["result"]["stopReason"] == "end_turn"
    finally:
        proc.stdin.close()
        assert proc.wait(10) == 0
        proc.stdout.close()


def test_a_held_prompt_whose_turn_outlives_the_bound_is_refused_32600() -> None:
    from types import SimpleNamespace

    from reactivex.testing import TestScheduler

    from rxacp.agent.held import HeldPrompts
    from rxacp.agent.turn import CANCELLING
    from rxacp.session import AcpSession
    from tests.session.conftest import ScriptedTransport, flush

    clock = TestScheduler()
    session = AcpSession(ScriptedTransport(), scheduler=clock)
    errors: list[Any] = []
    request = SimpleNamespace(answered=False, respond_error=errors.append)
    turn = SimpleNamespace(session_id=SESSION, state=CANCELLING)
    started: list[bool] = []
    held = HeldPrompts(session, 5.0, enabled=True, active=lambda sid: True)
    try:
        # SimpleNamespace test doubles with only the turn/request members hold() uses
        assert held.hold(turn, request, lambda: started.append(True))  # type: ignore[arg-type]
        clock.advance_by(5.1)
        flush(session)
        assert len(held) == 0 and not started
        assert errors[0].code == -32600
        held.turn_answered(SESSION)  # too late: nothing starts
        flush(session)
        assert not started
    finally:
        session.close()
