"""``rxacp check --protocol-version 2``: the ACP v2 (Draft) requirements of an agent.

Drives the agent with raw JSON-RPC (:class:`~rxacp.cli.check_driver.RawAgent`) through one v2
connection: ``initialize`` (version 2, ``info``), ``session/new``, a normal prompt turn (accepted
at once with ``messageId``, the ``user_message`` with that id, ``running``, one ``idle`` with a
stop reason, chunks with message ids, every update valid against the v2 schema), a cancelled turn
(``session/cancel`` → ``idle`` + ``cancelled``) and, when ``capabilities.session`` is advertised,
the baseline session methods (``session/list``, ``session/resume``, ``session/close``). The
report has the v1 check's format (``rxacp-check/1``) with the checks of :data:`RULES_V2`.

Not responsible for the v1 checks (:mod:`.check_runner`) or the command line (:mod:`.check`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..errors import AcpException
from .check_driver import AnswerTimeout, RawAgent
from .check_report import CANCEL_LATENCY_S, CheckResult
from .check_runner import CheckOptions

__all__ = ["RULES_V2", "run_checks_v2"]

_LIFE = "v2 prompt-lifecycle.mdx"
RULES_V2: dict[str, tuple[str, str, str]] = {
    "v2.initialize": (
        "mandatory",
        "v2 initialization.mdx; migration.mdx §Version negotiation",
        "initialize for version 2 is answered with version 2 and the required info",
    ),
    "v2.session.new": ("mandatory", "v2 session-setup.mdx", "session/new answers a session id"),
    "v2.prompt.accepted": (
        "mandatory",
        f"{_LIFE} §2. Prompt Accepted; v2 schema.json PromptResponse",
        "session/prompt is answered before the turn ends, with a messageId",
    ),
    "v2.prompt.user_message": (
        "mandatory",
        f"{_LIFE} §2 (MUST report where the user message was inserted)",
        "a user_message (or user_message_chunk) update carries the answered messageId",
    ),
    "v2.prompt.running": (
        "mandatory",
        f"{_LIFE} (MUST send state_update running)",
        "state_update running before the turn's idle",
    ),
    "v2.prompt.idle": (
        "mandatory",
        f"{_LIFE} §4. Report Completion",
        "the turn ends with an idle state_update carrying a stopReason",
    ),
    "v2.update.schema": (
        "mandatory",
        "v2 schema.json UpdateSessionNotification",
        "every session/update validates against the v2 schema",
    ),
    "v2.update.message_ids": (
        "mandatory",
        "v2 migration.mdx §Message IDs are required",
        "every message chunk carries a messageId",
    ),
    "v2.cancel.cancelled": (
        "mandatory",
        f"{_LIFE} §Cancellation; v2 cancellation.mdx",
        "session/cancel during --slow-prompt ends the turn with idle + cancelled",
    ),
    "v2.session.baseline": (
        "capability",
        "v2 migration.mdx §Baseline methods",
        "with capabilities.session: session/list, session/resume and session/close are served",
    ),
    "v2.cancel.latency": (
        "advisory",
        "SDK policy (responsiveness)",
        f"the cancelled idle comes within {CANCEL_LATENCY_S:g} s of session/cancel",
    ),
}

_INIT = {
    "protocolVersion": 2,
    "info": {"name": "rxacp-check", "version": "1"},
    "capabilities": {},
}


class _V2Checker:
    def __init__(self, options: CheckOptions) -> None:
        self.o = options
        self.results: dict[str, CheckResult] = {}
        self.cwd = options.cwd or "/"

    def verdict(self, check_id: str, ok: bool | None, detail: str = "") -> None:
        if check_id in self.results:
            return
        group, rule, _what = RULES_V2[check_id]
        status = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        self.results[check_id] = CheckResult(check_id, group, status, rule, detail)

    def ordered(self, why: str) -> list[CheckResult]:
        for check_id in RULES_V2:
            self.verdict(check_id, None, why)
        return [self.results[c] for c in RULES_V2]

    async def run(self) -> list[CheckResult]:
        agent = RawAgent(self.o.command, eof_timeout=min(self.o.timeout, 3.0))
        try:
            await agent.start()
        except (AcpException, OSError) as exc:
            self.verdict("v2.initialize", False, f"cannot start the agent: {exc}")
            return self.ordered("not reached")
        try:
            await self._main(agent)
        except AnswerTimeout as exc:
            pending = next((c for c in RULES_V2 if c not in self.results), "v2.initialize")
            self.verdict(pending, False, str(exc))
        finally:
            self._judge_updates(agent)
            await agent.close()
        return self.ordered("not reached (an earlier step failed)")

    async def _main(self, agent: RawAgent) -> None:
        init = await agent.request("initialize", _INIT, self.o.startup_timeout)
        result = init.get("result")
        info = result.get("info") if isinstance(result, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        ok = version == 2 and isinstance(info, dict) and "name" in info and "version" in info
        self.verdict(
            "v2.initialize", ok, f"answered {init.get('result') or init.get('error')}"[:300]
        )
        if not ok:
            return
        new = await agent.request("session/new", {"cwd": self.cwd}, self.o.timeout)
        sid = (new.get("result") or {}).get("sessionId")
        self.verdict("v2.session.new", isinstance(sid, str), f"answered {new}"[:300])
        if not isinstance(sid, str):
            return
        await self._turn(agent, sid)
        await self._cancel(agent, sid)
        caps = result.get("capabilities") if isinstance(result, dict) else None
        await self._baseline(agent, sid, isinstance(caps, dict) and caps.get("session") is not None)

    def _updates(self, agent: RawAgent, sid: str, after: int) -> list[dict[str, Any]]:
        return [
            n.message["params"]["update"]
            for n in agent.notifications("session/update", after)
            if n.session_id == sid and isinstance(n.message.get("params", {}).get("update"), dict)
        ]

    async def _wait_idle(self, agent: RawAgent, sid: str, after: int) -> dict[str, Any] | None:
        def idle() -> dict[str, Any] | None:
            for u in self._updates(agent, sid, after):
                if u.get("sessionUpdate") == "state_update" and u.get("state") == "idle":
                    return u
            return None

        await agent.wait_until(lambda: idle() is not None, self.o.timeout)
        return idle()

    async def _turn(self, agent: RawAgent, sid: str) -> None:
        start = agent.last_seq
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": self.o.prompt}]}
        rid = agent.send_request("session/prompt", params)
        answer = await agent.answer(rid, self.o.timeout)
        idle = await self._wait_idle(agent, sid, start)
        message_id = ((answer or {}).get("result") or {}).get("messageId")
        self.verdict(
            "v2.prompt.accepted",
            isinstance(message_id, str),
            f"answered {answer}"[:300] if answer is not None else "no answer",
        )
        updates = self._updates(agent, sid, start)
        users = [
            u
            for u in updates
            if u.get("sessionUpdate") in ("user_message", "user_message_chunk")
            and u.get("messageId") == message_id
        ]
        self.verdict("v2.prompt.user_message", bool(users), f"updates: {_kinds(updates)}")
        states = [u.get("state") for u in updates if u.get("sessionUpdate") == "state_update"]
        running = (
            "running" in states and states.index("running") < states.index("idle")
            if ("idle" in states)
            else "running" in states
        )
        self.verdict("v2.prompt.running", running, f"states: {states}")
        self.verdict(
            "v2.prompt.idle",
            idle is not None and bool(idle.get("stopReason")),
            f"idle: {idle}" if idle is not None else f"no idle within {self.o.timeout:g} s",
        )

    async def _cancel(self, agent: RawAgent, sid: str) -> None:
        start = agent.last_seq
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": self.o.slow_prompt}]}
        rid = agent.send_request("session/prompt", params)
        await agent.answer(rid, self.o.timeout)
        await agent.wait_until(
            lambda: any(
                u.get("sessionUpdate") == "state_update" and u.get("state") == "running"
                for u in self._updates(agent, sid, start)
            ),
            self.o.timeout,
        )
        sent = time.monotonic()
        agent.notify("session/cancel", {"sessionId": sid})
        idle = await self._wait_idle(agent, sid, start)
        took = time.monotonic() - sent
        ok = idle is not None and idle.get("stopReason") == "cancelled"
        self.verdict("v2.cancel.cancelled", ok, f"idle: {idle}")
        if ok:
            self.verdict("v2.cancel.latency", took <= CANCEL_LATENCY_S, f"{took * 1000:.0f} ms")

    async def _baseline(self, agent: RawAgent, sid: str, advertised: bool) -> None:
        if not advertised:
            self.verdict("v2.session.baseline", None, "capabilities.session not advertised")
            return
        missing = []
        for method, params in (
            ("session/list", {}),
            ("session/resume", {"sessionId": sid, "cwd": self.cwd}),
            ("session/close", {"sessionId": sid}),
        ):
            answer = await agent.request(method, params, self.o.timeout)
            error = answer.get("error")
            if isinstance(error, dict) and error.get("code") == -32601:
                missing.append(method)
        self.verdict(
            "v2.session.baseline",
            not missing,
            f"not served: {', '.join(missing)}" if missing else "",
        )

    def _judge_updates(self, agent: RawAgent) -> None:
        from ..schema.v2 import UnknownSessionUpdate, UpdateSessionNotification

        bad: list[str] = []
        no_ids: list[str] = []
        for note in agent.notifications("session/update"):
            params = note.message.get("params")
            try:
                model = UpdateSessionNotification.from_wire(params)
            except ValueError as exc:
                bad.append(str(exc).splitlines()[0][:120])
                continue
            update = params.get("update", {}) if isinstance(params, dict) else {}
            kind = update.get("sessionUpdate", "")
            if isinstance(model.update, UnknownSessionUpdate) and not str(kind).startswith("_"):
                bad.append(f"{kind!r} did not validate as a known update")
            if (
                str(kind).endswith("_chunk")
                and "message" in str(kind)
                and not update.get("messageId")
            ):
                no_ids.append(str(kind))
        seen = bool(agent.notifications("session/update"))
        self.verdict("v2.update.schema", not bad if seen else None, "; ".join(bad[:3]))
        self.verdict("v2.update.message_ids", not no_ids if seen else None, ", ".join(no_ids[:3]))


def _kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [str(u.get("state") or u.get("sessionUpdate")) for u in updates][:12]


def run_checks_v2(options: CheckOptions) -> list[CheckResult]:
    """Run the v2 checks against ``options.command`` (blocking; own event loop)."""
    return asyncio.run(_V2Checker(options).run())
