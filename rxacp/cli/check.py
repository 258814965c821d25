"""``rxacp check``: a conformance checker for any ACP agent over stdio (or a ``ws://`` URL).

Runs the agent (``--agent "CMD ARGS"``), drives it with raw JSON-RPC (:mod:`.check_driver`) and
reports every check as PASS / FAIL / SKIP with the rule it comes from (a spec file and section,
JSON-RPC 2.0, or "SDK policy"), grouped as *mandatory* (MUST rules), *capability* (rules for
optional features: SKIP when the agent does not offer them) and *advisory* (SHOULDs and good
practice). Exit code 1 when a mandatory check fails, 0 otherwise, 2 on bad arguments.

The checker needs two prompts the agent understands: ``--prompt`` (default ``echo hello``) must
end a turn normally, and ``--slow-prompt`` (default ``slow 5``) must keep the agent working long
enough to be cancelled (rxacp's reference agent understands both). Every wait is bounded by
``--timeout`` seconds (``initialize``: ``--startup-timeout``). A failure is attributed to the step
that failed: an agent that exits fails that step with its exit code and stderr tail, and every
later step is "not reached". The rules and the reports live in :mod:`.check_report`.

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
from dataclasses import dataclass
from typing import IO, Any

from ..errors import AcpException
from .check_driver import AnswerTimeout, RawAgent
from .check_report import (
    CANCEL_LATENCY_S,
    GROUPS,
    REPORT_FORMAT,
    RULES,
    CheckResult,
    report_json,
    report_text,
)
from .check_rules import KNOWN_STOP_REASONS, check_update

__all__ = [
    "GROUPS",
    "REPORT_FORMAT",
    "RULES",
    "CheckResult",
    "Checker",
    "add_arguments",
    "report_json",
    "report_text",
    "run",
    "run_checks",
]

EXIT_USAGE = 2
QUIET_S = 0.3
"""How long the checker listens for stray messages after an answer (no update may follow)."""
STRING_ID = "rxacp-check:init ✓"
STARTUP_S = 30.0
"""``initialize`` waits at least this long: it includes the agent's start-up (imports, npx)."""


class _AgentGone(Exception):
    """The agent process ended mid-run: the remaining steps are not reached."""


def agent_closed(agent: RawAgent | None) -> bool:
    """True once the agent's connection ended (the process exited)."""
    return agent is not None and agent.closed is not None


@dataclass
class CheckOptions:
    """What ``rxacp check`` was asked to do."""

    command: list[str]
    prompt: str = "echo hello"
    slow_prompt: str = "slow 5"
    timeout: float = 10.0
    cwd: str = ""
    auth: str | None = None
    startup_timeout: float = STARTUP_S


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
        self._given: set[str] = set()  # session ids the agent answered session/new with
        self._owned: list[tuple[int, int]] = []  # message ranges a check already judged
        self._gone = ""  # "the agent exited during <check>" once it died mid-run
        self.auth_methods: list[Any] = []

    # -- verdicts -----------------------------------------------------------------------------
    def verdict(
        self, check_id: str, ok: bool | None, detail: str = "", *, replace: bool = False
    ) -> None:
        """Record PASS (True), FAIL (False) or SKIP (None) for ``check_id`` (first one wins,
        unless ``replace``)."""
        if check_id in self.results and not replace:
            return
        group, rule, _what = RULES[check_id]
        status = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        self.results[check_id] = CheckResult(check_id, group, status, rule, detail)

    def ordered(self) -> list[CheckResult]:
        """Verdicts in the order of :data:`RULES` (unreached checks SKIP)."""
        why = (
            f"not reached ({self._gone})" if self._gone else "not reached (an earlier step failed)"
        )
        for check_id in RULES:
            self.verdict(check_id, None, why)
        return [self.results[c] for c in RULES]

    # -- driving ------------------------------------------------------------------------------
    async def run(self) -> list[CheckResult]:
        """Run all checks: one connection for the protocol and, concurrently, a second one
        for version negotiation (a fresh process: ``initialize`` comes once per connection)."""
        await asyncio.gather(self._protocol(), self._negotiation())
        first = self.results.get("initialize")
        if first is not None and first.status != "PASS":  # one root cause, one FAIL
            self.verdict(
                "initialize.negotiation",
                None,
                "not reached (initialize failed on the main connection)",
                replace=True,
            )
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
            self._note_gone(agent, self._current)
        except _AgentGone:
            pass
        finally:
            if self._ids_ok or self._ids_bad:
                self.verdict(
                    "jsonrpc.id_echo",
                    not self._ids_bad,
                    f"echoed exactly: {', '.join(self._ids_ok)}"
                    if not self._ids_bad
                    else "; ".join(self._ids_bad),
                )
            self._finish_updates(agent)
            self._stray_answers(agent)
            self.verdict(
                "stdio.stdout_clean",
                not agent.junk if agent.log or agent.junk else None,
                f"non-JSON-RPC lines: {agent.junk[:3]}"
                if agent.junk
                else ""
                if agent.log
                else "the agent wrote nothing to stdout",
            )
            await self._close_and_judge_eof(agent)

    async def _close_and_judge_eof(self, agent: RawAgent) -> None:
        if self._gone:  # it died: nothing to learn from closing its stdin
            await agent.close()
            self._late_exit_code(agent)
            return
        if agent.websocket:
            await agent.close()
            self.verdict("stdio.exit_on_eof", None, "not applicable: a WebSocket agent")
            return
        exited, took = await agent.close()
        self.verdict(
            "stdio.exit_on_eof",
            exited,
            f"exited {took:.2f} s after EOF"
            if exited
            else f"still running {took:.1f} s after stdin closed; it was terminated",
        )

    _current = ""
    _agent: RawAgent | None = None

    def _fail_current(self, detail: str) -> None:
        if self._current:
            self.verdict(self._current, False, detail)

    def _late_exit_code(self, agent: RawAgent) -> None:
        """On a loaded machine the exit status can come after the connection was reported
        closed: once the process is reaped, put the code into the details that lack it."""
        info = agent.closed
        code = getattr(agent.transport, "exit_code", None)
        if info is None or info.exit_code is not None or code is None:
            return
        vague = f"agent exited ({info.reason})"
        for result in self.results.values():
            if result.detail.startswith(vague):
                result.detail = f"agent exited with code {code}" + result.detail[len(vague) :]

    def _note_gone(self, agent: RawAgent, check_id: str) -> None:
        """If the agent died, FAIL ``check_id`` with its exit (the only FAIL it causes)."""
        if agent.closed is None or self._gone or not check_id:
            return
        self._gone = f"the agent exited during {check_id}"
        result = self.results.get(check_id)
        if result is None or (result.status != "PASS" and "exited" not in result.detail):
            self.verdict(check_id, False, agent.exit_text(f"during {check_id}"), replace=True)

    async def _step(self, check_id: str, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._current = check_id
        agent = self._agent
        assert agent is not None
        try:
            if agent_closed(agent):
                self.verdict(check_id, False, agent.exit_text("before this step"))
                self._gone = f"the agent exited before {check_id}"
                raise _AgentGone
            try:
                await step()
            except AnswerTimeout as exc:
                self.verdict(check_id, False, str(exc))
            if agent_closed(agent):
                self._note_gone(agent, check_id)
                raise _AgentGone
        finally:
            self._current = ""

    async def _main(self, agent: RawAgent) -> None:
        self._agent = agent
        self._current = "initialize"
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
            self.o.startup_timeout,
            STRING_ID,
        )
        self._current = ""
        if not self._initialized(init):
            return
        self._id_answer(agent, STRING_ID)
        if not await self._authenticate(agent):
            return
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
        methods = result.get("authMethods")
        self.auth_methods = (
            [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
        )
        return True

    async def _authenticate(self, agent: RawAgent) -> bool:
        """``--auth METHOD_ID``: authenticate before session/new (SKIP without it)."""
        if not self.o.auth:
            self.verdict("authenticate", None, "no --auth METHOD_ID given")
            return True
        self._current = "authenticate"
        answer = await agent.request("authenticate", {"methodId": self.o.auth}, self.o.timeout)
        self._current = ""
        ok = "result" in answer
        self.verdict("authenticate", ok, f"methodId {self.o.auth!r} → {json.dumps(answer)[:160]}")
        return ok

    def _auth_hint(self) -> str:
        ids = [str(m.get("id")) for m in self.auth_methods if m.get("id")]
        if not ids:
            return "the agent requires authentication but advertised no authMethods"
        return (
            f"the agent requires authentication: pass --auth METHOD_ID (its authMethods: "
            f"{', '.join(ids)})"
        )

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
                self.verdict("session.new", False, str(exc))
                self._note_gone(agent, "session.new")
                return None
            self._id_answer(agent, request_id)
            sid = self._session_id(answer)
            if sid is None:
                code = (answer.get("error") or {}).get("code")
                detail = f"answer: {json.dumps(answer)[:200]}"
                if code == -32000 and not self.o.auth:
                    detail = f"{self._auth_hint()}; {detail}"
                self.verdict("session.new", False, detail)
                return None
            ids.append(sid)
        unique = ids[0] != ids[1]
        self.verdict("session.new", unique, f"session ids {ids}")
        return (ids[0], ids[1]) if unique else None

    def _session_id(self, answer: dict[str, Any]) -> str | None:
        """The sessionId of a session/new answer (remembered as given), else None."""
        sid = (answer.get("result") or {}).get("sessionId")
        if not isinstance(sid, str) or not sid:
            return None
        self._given.add(sid)
        return sid

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
        """One prompt; returns the answer."""
        return await agent.request("session/prompt", self._prompt_params(sid, text), self.o.timeout)

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
        prompt_id, _ = await self._start_slow(agent, sid)
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
        self._owned.append((before, agent.last_seq))
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
        prompt_id, _ = await self._start_slow(agent, sid)
        if agent.answer_seq(prompt_id) is not None:
            self.verdict("cancel_request.prompt", None, "the slow prompt ended before")
            return
        before = agent.last_seq
        agent.notify("$/cancel_request", {"requestId": prompt_id})
        answer = await agent.answer(prompt_id, min(self.o.timeout, 3.0))
        if answer is None:
            strays = agent.unsolicited(before)
            agent.notify("session/cancel", {"sessionId": sid})  # end the turn anyway
            late = await agent.answer(prompt_id, self.o.timeout)
            how = (
                "the agent answered the $/cancel_request notification instead "
                f"({json.dumps(strays[0])[:120]}; see jsonrpc.no_stray_answers)"
                if strays
                else f"no effect within {min(self.o.timeout, 3.0):g} s"
            )
            self.verdict(
                "cancel_request.prompt",
                None,
                f"not supported (optional): {how}; session/cancel then got "
                + (json.dumps(late)[:120] if late else "no answer either"),
            )
            return
        code = (answer.get("error") or {}).get("code")
        ok = code == -32800 or "result" in answer
        self.verdict("cancel_request.prompt", ok, f"answer: {json.dumps(answer)[:200]}")

    async def _close(self, agent: RawAgent) -> None:
        session_caps = self.capabilities.get("sessionCapabilities")
        if not (isinstance(session_caps, dict) and session_caps.get("close") is not None):
            self.verdict("session.close_cancels", None, "sessionCapabilities.close not advertised")
            return
        created = await agent.request("session/new", self._new_session_params(), self.o.timeout)
        sid = self._session_id(created)
        if sid is None:
            self.verdict("session.close_cancels", False, f"session/new: {json.dumps(created)}")
            return
        prompt_id, _ = await self._start_slow(agent, sid)
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

    async def _malformed(self, agent: RawAgent) -> None:
        before = agent.last_seq
        agent.send_raw(b'{"jsonrpc": "2.0", "id": 77, "method": "session/new", "params": {')
        bound = min(self.o.timeout, 3.0)
        await agent.wait_until(lambda: bool(agent.unsolicited(before)), bound)
        self._owned.append((before, agent.last_seq))
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
        self._session_id(answer)
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
            if note.session_id not in self._given:
                self._session_problems.append(
                    f"update #{note.seq} names session {note.session_id!r}, which the agent "
                    f"never gave this client (given: {sorted(self._given)})"
                )
        if notes or self._update_problems:
            self.verdict(
                "update.schema",
                not self._update_problems,
                "; ".join(self._update_problems[:3]) or f"{len(notes)} updates valid",
            )
            self.verdict(
                "update.session_id",
                not self._session_problems,
                "; ".join(self._session_problems[:3])
                or f"{len(notes)} updates, all for sessions {sorted(self._given)}",
            )
        else:
            self.verdict("update.schema", None, "the agent sent no session/update")
            self.verdict("update.session_id", None, "the agent sent no session/update")

    def _stray_answers(self, agent: RawAgent) -> None:
        """Answers to no request: to a notification, or without an id (JSON-RPC violations);
        the ones ``cancel.bare_no_answer`` and ``jsonrpc.parse_error`` judged are left out."""
        problems = []
        for item in agent.log:
            if not item.is_response or any(a < item.seq <= b for a, b in self._owned):
                continue
            message = item.message
            if "id" in message and _sent_id(agent, message["id"]):
                continue
            kind = "error" if "error" in message else "result"
            after = agent.notification_before(item.seq)
            what = f"an {kind} answer" + (" without an id" if "id" not in message else "")
            where = (
                f" to the {after} notification (notifications are never answered)"
                if after
                else f" with id {json.dumps(message.get('id'))}, which no request had"
            )
            problems.append(f"#{item.seq}: {what}{where}: {json.dumps(message)[:140]}")
        if agent.log:
            self.verdict(
                "jsonrpc.no_stray_answers",
                not problems,
                "; ".join(problems[:3])
                + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""),
            )

    async def _negotiation(self) -> None:
        agent = RawAgent(self.o.command, eof_timeout=min(self.o.timeout, 3.0))
        try:
            await agent.start()
            answer = await agent.request(
                "initialize",
                {"protocolVersion": 999, "clientCapabilities": {}},
                self.o.startup_timeout,
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
def _sent_id(agent: RawAgent, request_id: Any) -> bool:
    return agent.answer_seq(request_id) is not None and agent.was_sent(request_id)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rxacp check`` options."""
    parser.add_argument(
        "--agent",
        required=True,
        metavar='"CMD ARGS"',
        help='the agent command line, e.g. "npx my-agent --acp", or a WebSocket agent\'s '
        "ws:// / wss:// URL (needs rxacp[websocket])",
    )
    parser.add_argument(
        "--auth", metavar="METHOD_ID", help="authenticate with this auth method before session/new"
    )
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=STARTUP_S,
        metavar="S",
        help=f"bound of initialize, which includes the agent's start-up (default {STARTUP_S:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="bound of every wait but initialize, in seconds (default 10)",
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


def _command(agent: str, err: IO[str]) -> list[str] | None:
    agent = agent.strip()
    if agent.startswith(("ws://", "wss://")):
        try:
            from ..transport.websocket import WebSocketAcpClientTransport
        except ImportError as exc:
            err.write(f"rxacp check: {exc}\n")
            return None
        try:
            WebSocketAcpClientTransport(agent)
        except ValueError as exc:
            err.write(f"rxacp check: --agent: {exc}\n")
            return None
        return [agent]
    try:
        command = shlex.split(agent)
    except ValueError as exc:
        err.write(f"rxacp check: cannot parse --agent: {exc}\n")
        return None
    if not command:
        err.write("rxacp check: --agent is empty\n")
        return None
    if "://" in command[0]:
        scheme = command[0].split("://", 1)[0]
        err.write(
            f"rxacp check: --agent {command[0]!r}: only a command line (stdio) or a ws:// / "
            f"wss:// URL is supported, not {scheme}://\n"
        )
        return None
    return command


def run(args: argparse.Namespace, *, out: IO[str], err: IO[str]) -> int:
    """Run ``rxacp check`` with parsed ``args``; returns the exit code."""
    command = _command(args.agent, err)
    if command is None:
        return EXIT_USAGE
    for name in ("timeout", "startup_timeout"):
        if not getattr(args, name) > 0:
            flag = "--" + name.replace("_", "-")
            err.write(f"rxacp check: {flag} must be > 0 seconds, got {getattr(args, name)}\n")
            return EXIT_USAGE
    options = CheckOptions(
        command,
        args.prompt,
        args.slow_prompt,
        args.timeout,
        os.path.abspath(args.cwd) if args.cwd else "",
        args.auth,
        args.startup_timeout,
    )
    results = run_checks(options)
    data = report_json(args.agent, results)
    if args.json:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(report_text(args.agent, results)) + "\n")
    out.flush()
    return int(data["exitCode"])
