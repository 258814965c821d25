"""``rxacp check``: a conformance checker for any ACP agent over stdio.

Runs the agent (``--agent "CMD ARGS"``), drives it with raw JSON-RPC (:mod:`.check_driver`) and
reports every check as PASS / FAIL / SKIP with the rule it comes from (a spec file and section,
JSON-RPC 2.0, or "SDK policy"), grouped as *mandatory* (MUST rules), *capability* (rules for
optional features: SKIP when the agent does not offer them) and *advisory* (SHOULDs and good
practice). Exit code 1 when a mandatory check fails, 0 otherwise, 2 on bad arguments.

The checker needs two prompts the agent understands: ``--prompt`` (default ``echo hello``) must
end a turn normally, and ``--slow-prompt`` (default ``slow 5``) must keep the agent working long
enough to be cancelled (rxacp's reference agent understands both). Every wait is bounded by
``--timeout`` seconds.

This module is *not* responsible for the wire mechanics (:mod:`.check_driver`) nor for being an
ACP client: it deliberately bypasses rxacp's client to see raw ids, errors and bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass
from typing import IO, Any

from ..errors import AcpException
from .check_driver import AnswerTimeout, RawAgent
from .check_rules import KNOWN_STOP_REASONS, check_update

__all__ = ["CheckResult", "Checker", "add_arguments", "run", "run_checks"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
GROUPS = ("mandatory", "capability", "advisory")
QUIET_S = 0.3
"""How long the checker listens for stray messages after an answer (no update may follow)."""
CANCEL_LATENCY_S = 2.0
"""Advisory bound between ``session/cancel`` and the ``cancelled`` answer."""
STRING_ID = "rxacp-check:init ✓"
STARTUP_S = 30.0
"""``initialize`` waits at least this long: it includes the agent's start-up (imports, npx)."""


@dataclass
class CheckResult:
    """One verdict: ``status`` is PASS, FAIL or SKIP."""

    id: str
    group: str
    status: str
    rule: str
    detail: str = ""


RULES: dict[str, tuple[str, str, str]] = {
    # id: (group, rule, what is checked)
    "initialize": (
        "mandatory",
        "initialization.mdx §Initialization",
        "initialize is answered with a protocolVersion",
    ),
    "initialize.version": (
        "mandatory",
        "initialization.mdx §Version Negotiation",
        "requested version 1 → answered version 1",
    ),
    "initialize.negotiation": (
        "mandatory",
        "initialization.mdx §Version Negotiation",
        "requested an unknown version (999) → the latest it supports",
    ),
    "jsonrpc.id_echo": (
        "mandatory",
        "JSON-RPC 2.0 §5 (Response object: id)",
        "string and integer ids (incl. 0) are echoed exactly",
    ),
    "session.new": (
        "mandatory",
        "session-setup.mdx §Creating a Session, §Session ID",
        "session/new answers unique session ids",
    ),
    "prompt.stop_reason": (
        "mandatory",
        "prompt-turn.mdx §Stop Reasons",
        "--prompt ends with a valid stopReason",
    ),
    "update.schema": (
        "mandatory",
        "schema.json SessionNotification",
        "every session/update validates against the schema",
    ),
    "update.session_id": (
        "mandatory",
        "prompt-turn.mdx §3. Agent Reports Output",
        "every session/update carries the prompting session's id",
    ),
    "cancel.cancelled": (
        "mandatory",
        "prompt-turn.mdx §Cancellation",
        "session/cancel during a prompt → result stopReason cancelled",
    ),
    "cancel.no_update_after_answer": (
        "mandatory",
        "prompt-turn.mdx §Cancellation",
        "no session/update after the cancelled prompt's answer",
    ),
    "cancel.bare_no_answer": (
        "mandatory",
        "prompt-turn.mdx §Cancellation; JSON-RPC 2.0 §4.1",
        "a session/cancel notification is never answered",
    ),
    "jsonrpc.method_not_found": (
        "mandatory",
        "JSON-RPC 2.0 §5.1; schema.json ErrorCode",
        "an unknown method → error -32601",
    ),
    "jsonrpc.parse_error": (
        "mandatory",
        "JSON-RPC 2.0 §5.1",
        "a malformed line → error -32700 with id null",
    ),
    "stdio.keeps_serving": (
        "mandatory",
        "JSON-RPC 2.0 §5.1; transports.mdx §stdio",
        "the agent keeps serving after a malformed line",
    ),
    "stdio.stdout_clean": (
        "mandatory",
        "transports.mdx §stdio",
        "nothing but JSON-RPC messages on stdout",
    ),
    "session.close_cancels": (
        "capability",
        "session-setup.mdx §Closing Active Sessions",
        "session/close cancels an active prompt (sessionCapabilities.close)",
    ),
    "cancel_request.prompt": (
        "capability",
        "cancellation.mdx §$/cancel_request Notification",
        "$/cancel_request for a prompt → -32800 or a valid response",
    ),
    "initialize.agent_info": (
        "advisory",
        "initialization.mdx §Implementation Information",
        "agentInfo names the implementation (SHOULD)",
    ),
    "cancel.latency": (
        "advisory",
        "prompt-turn.mdx §Cancellation (SHOULD stop promptly)",
        f"cancelled answer within {CANCEL_LATENCY_S:g} s of session/cancel",
    ),
    "stdio.exit_on_eof": (
        "advisory",
        "transports.mdx §stdio; SDK policy",
        "the agent exits by itself when its stdin closes",
    ),
}


@dataclass
class CheckOptions:
    """What ``rxacp check`` was asked to do."""

    command: list[str]
    prompt: str = "echo hello"
    slow_prompt: str = "slow 5"
    timeout: float = 10.0
    cwd: str = ""


class Checker:
    """Runs every check against one agent command; :meth:`run` returns the verdicts."""

    def __init__(self, options: CheckOptions) -> None:
        self.o = options
        self.results: dict[str, CheckResult] = {}
        self.agent_info: Any = None
        self.capabilities: dict[str, Any] = {}
        self.updates_seen = 0
        self._update_problems: list[str] = []
        self._session_problems: list[str] = []
        self._ids_ok: list[str] = []
        self._ids_bad: list[str] = []

    # -- verdicts -----------------------------------------------------------------------------
    def verdict(self, check_id: str, ok: bool | None, detail: str = "") -> None:
        """Record PASS (True), FAIL (False) or SKIP (None) for ``check_id`` (first one wins)."""
        if check_id in self.results:
            return
        group, rule, _what = RULES[check_id]
        status = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        self.results[check_id] = CheckResult(check_id, group, status, rule, detail)

    def ordered(self) -> list[CheckResult]:
        """Verdicts in the order of :data:`RULES` (unreached checks SKIP)."""
        for check_id in RULES:
            self.verdict(check_id, None, "not reached (an earlier step failed)")
        return [self.results[c] for c in RULES]

    # -- driving ------------------------------------------------------------------------------
    async def run(self) -> list[CheckResult]:
        """Run all checks: one connection for the protocol and, concurrently, a second one
        for version negotiation (a fresh process: ``initialize`` comes once per connection)."""
        await asyncio.gather(self._protocol(), self._negotiation())
        return self.ordered()

    async def _protocol(self) -> None:
        agent = RawAgent(self.o.command, eof_timeout=min(self.o.timeout, 3.0))
        try:
            await agent.start()
        except (AcpException, OSError) as exc:
            self.verdict("initialize", False, f"cannot start the agent: {exc}")
            return
        try:
            await self._main(agent)
        except AnswerTimeout as exc:
            self._fail_current(str(exc))
        finally:
            self._finish_updates(agent)
            self.verdict(
                "stdio.stdout_clean",
                not agent.junk,
                f"non-JSON-RPC lines: {agent.junk[:3]}" if agent.junk else "",
            )
            exited, took = await agent.close()
            self.verdict(
                "stdio.exit_on_eof",
                exited,
                f"exited {took:.2f} s after EOF"
                if exited
                else f"still running {took:.1f} s after stdin closed; it was terminated",
            )

    _current = ""

    def _fail_current(self, detail: str) -> None:
        if self._current:
            self.verdict(self._current, False, detail)

    async def _step(self, check_id: str, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._current = check_id
        try:
            await step()
        except AnswerTimeout as exc:
            self.verdict(check_id, False, str(exc))
        self._current = ""

    async def _main(self, agent: RawAgent) -> None:
        t = self.o.timeout
        init = await agent.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": {"name": "rxacp-check", "version": "1"},
            },
            max(t, STARTUP_S),
            STRING_ID,
        )
        if not self._initialized(init):
            return
        self._id_answer(agent, STRING_ID)
        sessions = await self._sessions(agent)
        if sessions is None:
            return
        first, second = sessions
        await self._step("prompt.stop_reason", lambda: self._prompt(agent, first))
        await self._step("cancel.cancelled", lambda: self._cancel(agent, first))
        await self._step("cancel.bare_no_answer", lambda: self._bare_cancel(agent, second))
        await self._step("jsonrpc.method_not_found", lambda: self._unknown(agent))
        await self._step("cancel_request.prompt", lambda: self._cancel_request(agent, second))
        await self._step("session.close_cancels", lambda: self._close(agent))
        await self._step("jsonrpc.parse_error", lambda: self._malformed(agent))
        self.verdict(
            "jsonrpc.id_echo",
            not self._ids_bad,
            f"echoed exactly: {', '.join(self._ids_ok)}"
            if not self._ids_bad
            else "; ".join(self._ids_bad),
        )

    def _initialized(self, init: dict[str, Any]) -> bool:
        result = init.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), int):
            self.verdict("initialize", False, f"answer: {json.dumps(init)[:200]}")
            return False
        self.verdict("initialize", True)
        version = result["protocolVersion"]
        self.verdict("initialize.version", version == 1, f"answered protocolVersion {version}")
        info = result.get("agentInfo")
        self.agent_info = info
        named = isinstance(info, dict) and bool(info.get("name")) and bool(info.get("version"))
        self.verdict("initialize.agent_info", named, f"agentInfo: {json.dumps(info)}")
        caps = result.get("agentCapabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        return True

    def _id_answer(self, agent: RawAgent, request_id: Any) -> None:
        if agent.answer_seq(request_id) is not None:
            self._ids_ok.append(json.dumps(request_id, ensure_ascii=False))
        else:
            self._ids_bad.append(f"no answer carried id {json.dumps(request_id)} exactly")

    def _new_session_params(self) -> dict[str, Any]:
        return {"cwd": self.o.cwd or os.getcwd(), "mcpServers": []}

    async def _sessions(self, agent: RawAgent) -> tuple[str, str] | None:
        ids: list[str] = []
        for request_id in (0, "session-2"):
            self._current = "session.new"
            try:
                answer = await agent.request(
                    "session/new", self._new_session_params(), self.o.timeout, request_id
                )
            except AnswerTimeout as exc:
                self._ids_bad.append(str(exc))
                self.verdict("session.new", False, str(exc))
                return None
            self._id_answer(agent, request_id)
            sid = (answer.get("result") or {}).get("sessionId")
            if not isinstance(sid, str) or not sid:
                self.verdict("session.new", False, f"answer: {json.dumps(answer)[:200]}")
                return None
            ids.append(sid)
        unique = ids[0] != ids[1]
        self.verdict("session.new", unique, f"session ids {ids}")
        return (ids[0], ids[1]) if unique else None

    def _prompt_params(self, session_id: str, text: str) -> dict[str, Any]:
        return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}

    async def _prompt(self, agent: RawAgent, sid: str) -> None:
        answer = await self._turn(agent, sid, self.o.prompt)
        reason = (answer.get("result") or {}).get("stopReason")
        self.verdict(
            "prompt.stop_reason",
            reason in KNOWN_STOP_REASONS,
            f"{self.o.prompt!r} → "
            + (
                f"stopReason {reason!r}"
                if "result" in answer
                else f"error {json.dumps(answer.get('error'))[:160]}"
            ),
        )

    async def _turn(self, agent: RawAgent, sid: str, text: str) -> dict[str, Any]:
        """One prompt; checks its updates' sessionId; returns the answer."""
        start = agent.last_seq
        answer = await agent.request(
            "session/prompt", self._prompt_params(sid, text), self.o.timeout
        )
        self._own_updates(agent, sid, start)
        return answer

    def _own_updates(self, agent: RawAgent, sid: str, after: int) -> None:
        for note in agent.notifications("session/update", after):
            if note.session_id != sid:
                self._session_problems.append(
                    f"update #{note.seq} carries sessionId {note.session_id!r}, expected {sid!r}"
                )

    async def _start_slow(self, agent: RawAgent, sid: str) -> tuple[Any, int]:
        """Send --slow-prompt; wait (bounded) for its first update. Returns (id, start seq)."""
        start = agent.last_seq
        prompt_id = agent.send_request(
            "session/prompt", self._prompt_params(sid, self.o.slow_prompt)
        )
        await agent.wait_until(
            lambda: (
                bool(agent.notifications("session/update", start))
                or agent.answer_seq(prompt_id) is not None
            ),
            min(self.o.timeout, 2.0),
        )
        return prompt_id, start

    async def _cancel(self, agent: RawAgent, sid: str) -> None:
        prompt_id, start = await self._start_slow(agent, sid)
        if agent.answer_seq(prompt_id) is not None:
            self.verdict(
                "cancel.cancelled",
                None,
                f"{self.o.slow_prompt!r} ended before it could be cancelled",
            )
            return
        loop = asyncio.get_running_loop()
        sent = loop.time()
        agent.notify("session/cancel", {"sessionId": sid})
        answer = await agent.answer(prompt_id, self.o.timeout)
        took = loop.time() - sent
        if answer is None:
            self.verdict(
                "cancel.cancelled",
                False,
                f"no answer within {self.o.timeout:g} s of session/cancel",
            )
            return
        reason = (answer.get("result") or {}).get("stopReason")
        self.verdict(
            "cancel.cancelled",
            reason == "cancelled",
            f"answered stopReason {reason!r}"
            if "result" in answer
            else f"answered error {json.dumps(answer.get('error'))[:160]}",
        )
        self.verdict("cancel.latency", took <= CANCEL_LATENCY_S, f"{took:.2f} s")
        late = await self._late_updates(agent, sid, prompt_id)
        self.verdict(
            "cancel.no_update_after_answer",
            not late,
            f"{len(late)} session/update after the answer"
            if late
            else f"none within {QUIET_S:g} s and a round trip",
        )
        self._own_updates(agent, sid, start)

    async def _late_updates(self, agent: RawAgent, sid: str, prompt_id: Any) -> list[Any]:
        answered = agent.answer_seq(prompt_id) or 0
        await self._round_trip(agent)
        await agent.wait_until(
            lambda: bool(
                [n for n in agent.notifications("session/update", answered) if n.session_id == sid]
            ),
            QUIET_S,
        )
        return [n for n in agent.notifications("session/update", answered) if n.session_id == sid]

    async def _round_trip(self, agent: RawAgent) -> dict[str, Any]:
        return await agent.request("rxacp_check/ping", {}, self.o.timeout)

    async def _bare_cancel(self, agent: RawAgent, sid: str) -> None:
        before = agent.last_seq
        agent.notify("session/cancel", {"sessionId": sid})
        await self._round_trip(agent)
        await agent.wait_until(lambda: bool(agent.unsolicited(before)), QUIET_S)
        stray = agent.unsolicited(before)
        self.verdict(
            "cancel.bare_no_answer",
            not stray,
            f"answered: {json.dumps(stray[:2])[:200]}" if stray else "",
        )

    async def _unknown(self, agent: RawAgent) -> None:
        answer = await agent.request("rxacp_check/unknown_method", {}, self.o.timeout)
        code = (answer.get("error") or {}).get("code")
        self.verdict(
            "jsonrpc.method_not_found", code == -32601, f"answer: {json.dumps(answer)[:200]}"
        )

    async def _cancel_request(self, agent: RawAgent, sid: str) -> None:
        prompt_id, start = await self._start_slow(agent, sid)
        if agent.answer_seq(prompt_id) is not None:
            self.verdict("cancel_request.prompt", None, "the slow prompt ended before")
            return
        agent.notify("$/cancel_request", {"requestId": prompt_id})
        answer = await agent.answer(prompt_id, min(self.o.timeout, 3.0))
        if answer is None:
            agent.notify("session/cancel", {"sessionId": sid})  # end the turn anyway
            late = await agent.answer(prompt_id, self.o.timeout)
            self.verdict(
                "cancel_request.prompt",
                None,
                "not supported (optional): no answer to $/cancel_request within "
                f"{min(self.o.timeout, 3.0):g} s; session/cancel then got "
                + (json.dumps(late)[:120] if late else "no answer either"),
            )
            return
        code = (answer.get("error") or {}).get("code")
        ok = code == -32800 or "result" in answer
        self.verdict("cancel_request.prompt", ok, f"answer: {json.dumps(answer)[:200]}")
        self._own_updates(agent, sid, start)

    async def _close(self, agent: RawAgent) -> None:
        session_caps = self.capabilities.get("sessionCapabilities")
        if not (isinstance(session_caps, dict) and session_caps.get("close") is not None):
            self.verdict("session.close_cancels", None, "sessionCapabilities.close not advertised")
            return
        created = await agent.request("session/new", self._new_session_params(), self.o.timeout)
        sid = (created.get("result") or {}).get("sessionId")
        if not isinstance(sid, str):
            self.verdict("session.close_cancels", False, f"session/new: {json.dumps(created)}")
            return
        prompt_id, start = await self._start_slow(agent, sid)
        closed = await agent.request("session/close", {"sessionId": sid}, self.o.timeout)
        answer = await agent.answer(prompt_id, self.o.timeout)
        reason = ((answer or {}).get("result") or {}).get("stopReason")
        ok = "result" in closed and reason == "cancelled"
        self.verdict(
            "session.close_cancels",
            ok,
            f"session/close → {json.dumps(closed)[:100]}; prompt → "
            f"{json.dumps(answer)[:100] if answer else 'no answer'}",
        )
        self._own_updates(agent, sid, start)

    async def _malformed(self, agent: RawAgent) -> None:
        before = agent.last_seq
        agent.send_raw(b'{"jsonrpc": "2.0", "id": 77, "method": "session/new", "params": {')
        bound = min(self.o.timeout, 3.0)
        await agent.wait_until(lambda: bool(agent.unsolicited(before)), bound)
        parse = [m for m in agent.unsolicited(before) if "error" in m]
        code = (parse[0].get("error") or {}).get("code") if parse else None
        ok = bool(parse) and code == -32700 and parse[0].get("id") is None
        self.verdict(
            "jsonrpc.parse_error",
            ok,
            f"answer: {json.dumps(parse[0])[:200]}" if parse else f"no answer within {bound:g} s",
        )
        self._current = "stdio.keeps_serving"
        answer = await agent.request("session/new", self._new_session_params(), self.o.timeout)
        self.verdict(
            "stdio.keeps_serving",
            "result" in answer,
            "session/new after it: " + json.dumps(answer)[:120],
        )

    def _finish_updates(self, agent: RawAgent) -> None:
        notes = agent.notifications("session/update")
        self.updates_seen = len(notes)
        for note in notes:
            problem = check_update(note.message.get("params"))
            if problem:
                self._update_problems.append(f"update #{note.seq}: {problem}")
        if notes or self._update_problems:
            self.verdict(
                "update.schema",
                not self._update_problems,
                "; ".join(self._update_problems[:3]) or f"{len(notes)} updates valid",
            )
            self.verdict(
                "update.session_id",
                not self._session_problems,
                "; ".join(self._session_problems[:3]) or f"{len(notes)} updates",
            )
        else:
            self.verdict("update.schema", None, "the agent sent no session/update")
            self.verdict("update.session_id", None, "the agent sent no session/update")

    async def _negotiation(self) -> None:
        agent = RawAgent(self.o.command, eof_timeout=min(self.o.timeout, 3.0))
        try:
            await agent.start()
            answer = await agent.request(
                "initialize",
                {"protocolVersion": 999, "clientCapabilities": {}},
                max(self.o.timeout, STARTUP_S),
            )
        except (AcpException, OSError, AnswerTimeout) as exc:
            self.verdict("initialize.negotiation", False, str(exc))
        else:
            version = (answer.get("result") or {}).get("protocolVersion")
            ok = isinstance(version, int) and version != 999 and version >= 1
            self.verdict(
                "initialize.negotiation", ok, f"requested 999 → {json.dumps(answer)[:160]}"
            )
        finally:
            await agent.close()


# ------------------------------------------------------------------------------------ CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rxacp check`` options."""
    parser.add_argument(
        "--agent",
        required=True,
        metavar='"CMD ARGS"',
        help='the agent command line, e.g. "npx my-agent --acp"',
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="bound of every wait, in seconds (default 10; initialize, which includes "
        f"the agent's start-up, waits at least {STARTUP_S:g})",
    )
    parser.add_argument(
        "--prompt",
        default="echo hello",
        metavar="TEXT",
        help="a prompt that ends a turn normally (default 'echo hello')",
    )
    parser.add_argument(
        "--slow-prompt",
        default="slow 5",
        metavar="TEXT",
        help="a prompt that keeps the agent busy long enough to cancel it "
        "(default 'slow 5', the reference agent's)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session directory (default: current)")


def run_checks(options: CheckOptions) -> list[CheckResult]:
    """Run every check against ``options.command`` (blocking; own event loop)."""
    return asyncio.run(Checker(options).run())


def report_json(command: str, results: list[CheckResult]) -> dict[str, Any]:
    """The machine-readable report (``--json``)."""
    failed = [r.id for r in results if r.group == "mandatory" and r.status == "FAIL"]
    counts = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "SKIP")}
    return {
        "agent": command,
        "checks": [asdict(r) | {"what": RULES[r.id][2]} for r in results],
        "summary": counts | {"mandatoryFailed": failed},
        "exitCode": EXIT_FAILED if failed else EXIT_OK,
    }


def report_text(command: str, results: list[CheckResult]) -> list[str]:
    """The human-readable report, one line per check (details indented below)."""
    lines = [f"rxacp check: {command}"]
    width = max(len(r.id) for r in results)
    for group in GROUPS:
        lines.append("")
        lines.append(group.upper())
        for r in (r for r in results if r.group == group):
            lines.append(f"  {r.status:<4}  {r.id:<{width}}  {r.rule}")
            if (r.detail and r.status != "PASS") or (
                r.detail and r.id in ("initialize.agent_info",)
            ):
                lines.append(f"        {' ' * width}  {r.detail}")
    data = report_json(command, results)
    summary = data["summary"]
    lines.append("")
    verdict = (
        "mandatory checks all pass"
        if not summary["mandatoryFailed"]
        else f"mandatory FAILED: {', '.join(summary['mandatoryFailed'])}"
    )
    lines.append(
        f"{summary['PASS']} PASS, {summary['FAIL']} FAIL, {summary['SKIP']} SKIP; {verdict}"
    )
    return lines


def run(args: argparse.Namespace, *, out: IO[str], err: IO[str]) -> int:
    """Run ``rxacp check`` with parsed ``args``; returns the exit code."""
    try:
        command = shlex.split(args.agent)
    except ValueError as exc:
        err.write(f"rxacp check: cannot parse --agent: {exc}\n")
        return EXIT_USAGE
    if not command:
        err.write("rxacp check: --agent is empty\n")
        return EXIT_USAGE
    if not args.timeout > 0:
        err.write(f"rxacp check: --timeout must be > 0 seconds, got {args.timeout}\n")
        return EXIT_USAGE
    options = CheckOptions(
        command,
        args.prompt,
        args.slow_prompt,
        args.timeout,
        os.path.abspath(args.cwd) if args.cwd else "",
    )
    results = run_checks(options)
    data = report_json(args.agent, results)
    if args.json:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(report_text(args.agent, results)) + "\n")
    out.flush()
    return int(data["exitCode"])
