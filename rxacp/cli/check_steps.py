"""The individual protocol steps of ``rxacp check``, one coroutine per check.

Each step drives the agent over the raw connection (:class:`~.check_driver.RawAgent`) and
records its verdicts on the :class:`~.check_runner.Checker` that runs it: a prompt that must end
with a known stop reason, ``session/cancel`` (answered ``cancelled``, fast, and no update after
the answer), a bare cancel (never answered), an unknown method (``-32601``),
``$/cancel_request`` of a prompt, ``session/close`` of a busy session, and a malformed line
(``-32700``, then the agent keeps serving).

This module is *not* responsible for the order of the steps, for attributing an agent's exit to
a step, or for the judgments over the whole log (:mod:`.check_runner`), nor for the wire
mechanics (:mod:`.check_driver`).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .check_driver import RawAgent
from .check_report import CANCEL_LATENCY_S
from .check_rules import KNOWN_STOP_REASONS

if TYPE_CHECKING:
    from .check_runner import Checker

__all__ = [
    "QUIET_S",
    "bare_cancel",
    "cancel_cancelled",
    "cancel_request",
    "close_cancels",
    "method_not_found",
    "parse_error",
    "prompt_stop_reason",
]

QUIET_S = 0.3
"""How long the checker listens for stray messages after an answer (no update may follow)."""


def _prompt_params(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def prompt_stop_reason(c: Checker, agent: RawAgent, sid: str) -> None:
    answer = await _turn(c, agent, sid, c.o.prompt)
    reason = (answer.get("result") or {}).get("stopReason")
    c.verdict(
        "prompt.stop_reason",
        reason in KNOWN_STOP_REASONS,
        f"{c.o.prompt!r} → "
        + (
            f"stopReason {reason!r}"
            if "result" in answer
            else f"error {json.dumps(answer.get('error'))[:160]}"
        ),
    )


async def _turn(c: Checker, agent: RawAgent, sid: str, text: str) -> dict[str, Any]:
    """One prompt; returns the answer."""
    return await agent.request("session/prompt", _prompt_params(sid, text), c.o.timeout)


async def _start_slow(c: Checker, agent: RawAgent, sid: str) -> tuple[Any, int]:
    """Send --slow-prompt; wait (bounded) for its first update. Returns (id, start seq)."""
    start = agent.last_seq
    prompt_id = agent.send_request("session/prompt", _prompt_params(sid, c.o.slow_prompt))
    await agent.wait_until(
        lambda: (
            bool(agent.notifications("session/update", start))
            or agent.answer_seq(prompt_id) is not None
        ),
        min(c.o.timeout, 2.0),
    )
    return prompt_id, start


async def cancel_cancelled(c: Checker, agent: RawAgent, sid: str) -> None:
    prompt_id, _ = await _start_slow(c, agent, sid)
    if agent.answer_seq(prompt_id) is not None:
        c.verdict(
            "cancel.cancelled",
            None,
            f"{c.o.slow_prompt!r} ended before it could be cancelled",
        )
        return
    loop = asyncio.get_running_loop()
    sent = loop.time()
    agent.notify("session/cancel", {"sessionId": sid})
    answer = await agent.answer(prompt_id, c.o.timeout)
    took = loop.time() - sent
    if answer is None:
        c.verdict(
            "cancel.cancelled",
            False,
            f"no answer within {c.o.timeout:g} s of session/cancel",
        )
        return
    reason = (answer.get("result") or {}).get("stopReason")
    c.verdict(
        "cancel.cancelled",
        reason == "cancelled",
        f"answered stopReason {reason!r}"
        if "result" in answer
        else f"answered error {json.dumps(answer.get('error'))[:160]}",
    )
    c.verdict("cancel.latency", took <= CANCEL_LATENCY_S, f"{took:.2f} s")
    late = await _late_updates(c, agent, sid, prompt_id)
    c.verdict(
        "cancel.no_update_after_answer",
        not late,
        f"{len(late)} session/update after the answer"
        if late
        else f"none within {QUIET_S:g} s and a round trip",
    )


async def _late_updates(c: Checker, agent: RawAgent, sid: str, prompt_id: Any) -> list[Any]:
    answered = agent.answer_seq(prompt_id) or 0
    await _round_trip(c, agent)
    await agent.wait_until(
        lambda: bool(
            [n for n in agent.notifications("session/update", answered) if n.session_id == sid]
        ),
        QUIET_S,
    )
    return [n for n in agent.notifications("session/update", answered) if n.session_id == sid]


async def _round_trip(c: Checker, agent: RawAgent) -> dict[str, Any]:
    return await agent.request("rxacp_check/ping", {}, c.o.timeout)


async def bare_cancel(c: Checker, agent: RawAgent, sid: str) -> None:
    before = agent.last_seq
    agent.notify("session/cancel", {"sessionId": sid})
    await _round_trip(c, agent)
    await agent.wait_until(lambda: bool(agent.unsolicited(before)), QUIET_S)
    stray = agent.unsolicited(before)
    c.owned.append((before, agent.last_seq))
    c.verdict(
        "cancel.bare_no_answer",
        not stray,
        f"answered: {json.dumps(stray[:2])[:200]}" if stray else "",
    )


async def method_not_found(c: Checker, agent: RawAgent) -> None:
    answer = await agent.request("rxacp_check/unknown_method", {}, c.o.timeout)
    code = (answer.get("error") or {}).get("code")
    c.verdict("jsonrpc.method_not_found", code == -32601, f"answer: {json.dumps(answer)[:200]}")


async def cancel_request(c: Checker, agent: RawAgent, sid: str) -> None:
    prompt_id, _ = await _start_slow(c, agent, sid)
    if agent.answer_seq(prompt_id) is not None:
        c.verdict("cancel_request.prompt", None, "the slow prompt ended before")
        return
    before = agent.last_seq
    agent.notify("$/cancel_request", {"requestId": prompt_id})
    answer = await agent.answer(prompt_id, min(c.o.timeout, 3.0))
    if answer is None:
        strays = agent.unsolicited(before)
        agent.notify("session/cancel", {"sessionId": sid})  # end the turn anyway
        late = await agent.answer(prompt_id, c.o.timeout)
        how = (
            "the agent answered the $/cancel_request notification instead "
            f"({json.dumps(strays[0])[:120]}; see jsonrpc.no_stray_answers)"
            if strays
            else f"no effect within {min(c.o.timeout, 3.0):g} s"
        )
        c.verdict(
            "cancel_request.prompt",
            None,
            f"not supported (optional): {how}; session/cancel then got "
            + (json.dumps(late)[:120] if late else "no answer either"),
        )
        return
    code = (answer.get("error") or {}).get("code")
    ok = code == -32800 or "result" in answer
    c.verdict("cancel_request.prompt", ok, f"answer: {json.dumps(answer)[:200]}")


async def close_cancels(c: Checker, agent: RawAgent) -> None:
    session_caps = c.capabilities.get("sessionCapabilities")
    if not (isinstance(session_caps, dict) and session_caps.get("close") is not None):
        c.verdict("session.close_cancels", None, "sessionCapabilities.close not advertised")
        return
    created = await agent.request("session/new", c.new_session_params(), c.o.timeout)
    sid = c.session_id_of(created)
    if sid is None:
        c.verdict("session.close_cancels", False, f"session/new: {json.dumps(created)}")
        return
    prompt_id, _ = await _start_slow(c, agent, sid)
    closed = await agent.request("session/close", {"sessionId": sid}, c.o.timeout)
    answer = await agent.answer(prompt_id, c.o.timeout)
    reason = ((answer or {}).get("result") or {}).get("stopReason")
    ok = "result" in closed and reason == "cancelled"
    c.verdict(
        "session.close_cancels",
        ok,
        f"session/close → {json.dumps(closed)[:100]}; prompt → "
        f"{json.dumps(answer)[:100] if answer else 'no answer'}",
    )


async def parse_error(c: Checker, agent: RawAgent) -> None:
    if agent.http:
        c.verdict(
            "jsonrpc.parse_error",
            None,
            "not applicable: Streamable HTTP carries JSON bodies only (a malformed one is "
            "answered HTTP 400 by the server, not by the agent)",
        )
    else:
        await _malformed_line(c, agent)
    c.current = "stdio.keeps_serving"
    answer = await agent.request("session/new", c.new_session_params(), c.o.timeout)
    c.session_id_of(answer)
    c.verdict(
        "stdio.keeps_serving",
        "result" in answer,
        "session/new after it: " + json.dumps(answer)[:120],
    )


async def _malformed_line(c: Checker, agent: RawAgent) -> None:
    before = agent.last_seq
    agent.send_raw(b'{"jsonrpc": "2.0", "id": 77, "method": "session/new", "params": {')
    bound = min(c.o.timeout, 3.0)
    await agent.wait_until(lambda: bool(agent.unsolicited(before)), bound)
    c.owned.append((before, agent.last_seq))
    parse = [m for m in agent.unsolicited(before) if "error" in m]
    code = (parse[0].get("error") or {}).get("code") if parse else None
    ok = bool(parse) and code == -32700 and parse[0].get("id") is None
    c.verdict(
        "jsonrpc.parse_error",
        ok,
        f"answer: {json.dumps(parse[0])[:200]}" if parse else f"no answer within {bound:g} s",
    )
