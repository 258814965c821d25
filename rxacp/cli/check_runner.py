"""The runner of ``rxacp check``: one :class:`Checker` per agent command, holding the verdicts.

It starts the agent twice: the protocol run, and version negotiation on a fresh process that
starts once the first one's ``initialize`` settled (two start-ups never race over the agent's
home: gemini-cli locks its project registry with a backoff that grows past 30 s, opencode
migrates its database). It runs ``initialize``, ``authenticate`` and two ``session/new``
itself, then the steps of :mod:`.check_steps` in order, and judges the whole recorded log at
the end (JSON-RPC id echo, stray answers, every ``session/update``'s schema and session id,
clean stdout, exit on EOF). A failure is attributed to the step that failed: an agent that
exits fails that step with its exit code and stderr tail, and every later step is "not
reached".

This module is *not* responsible for the individual steps (:mod:`.check_steps`), the rules and
reports (:mod:`.check_report`), the wire mechanics (:mod:`.check_driver`) or the command line
(:mod:`.check`).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from ..errors import AcpException
from .check_driver import AnswerTimeout, RawAgent
from .check_report import RULES, CheckResult
from .check_rules import check_update
from .check_steps import (
    bare_cancel,
    cancel_cancelled,
    cancel_request,
    close_cancels,
    method_not_found,
    parse_error,
    prompt_stop_reason,
)

__all__ = ["STARTUP_S", "STRING_ID", "CheckOptions", "Checker", "agent_closed"]

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
        self.owned: list[tuple[int, int]] = []
        """Message ranges a step already judged (left out of ``jsonrpc.no_stray_answers``)."""
        self.current = ""
        """The check whose step is running (an agent exit or a timeout is blamed on it)."""
        self._gone = ""  # "the agent exited during <check>" once it died mid-run
        self.auth_methods: list[Any] = []
        self._started = asyncio.Event()
        """Set once the protocol connection's ``initialize`` settled (answered, timed out or
        the agent could not start): the negotiation process starts then, not alongside."""

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
        """Run all checks: one connection for the protocol and a second one for version
        negotiation (a fresh process: ``initialize`` comes once per connection), started once
        the first one's ``initialize`` settled and then run alongside it."""
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
        try:
            await self._protocol_run()
        finally:
            self._started.set()

    async def _protocol_run(self) -> None:
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
            self._note_gone(agent, self.current)
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
            kind = "Streamable HTTP" if agent.http else "WebSocket"
            self.verdict("stdio.exit_on_eof", None, f"not applicable: a {kind} agent")
            return
        exited, took = await agent.close()
        self.verdict(
            "stdio.exit_on_eof",
            exited,
            f"exited {took:.2f} s after EOF"
            if exited
            else f"still running {took:.1f} s after stdin closed; it was terminated",
        )

    _agent: RawAgent | None = None

    def _fail_current(self, detail: str) -> None:
        if self.current:
            self.verdict(self.current, False, detail)

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
        self.current = check_id
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
            self.current = ""

    async def _main(self, agent: RawAgent) -> None:
        self._agent = agent
        self.current = "initialize"
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
        self._started.set()
        self.current = ""
        if not self._initialized(init):
            return
        self._id_answer(agent, STRING_ID)
        if not await self._authenticate(agent):
            return
        sessions = await self._sessions(agent)
        if sessions is None:
            return
        first, second = sessions
        await self._step("prompt.stop_reason", lambda: prompt_stop_reason(self, agent, first))
        await self._step("cancel.cancelled", lambda: cancel_cancelled(self, agent, first))
        await self._step("cancel.bare_no_answer", lambda: bare_cancel(self, agent, second))
        await self._step("jsonrpc.method_not_found", lambda: method_not_found(self, agent))
        await self._step("cancel_request.prompt", lambda: cancel_request(self, agent, second))
        await self._step("session.close_cancels", lambda: close_cancels(self, agent))
        await self._step("jsonrpc.parse_error", lambda: parse_error(self, agent))

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
        self.current = "authenticate"
        answer = await agent.request("authenticate", {"methodId": self.o.auth}, self.o.timeout)
        self.current = ""
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

    def new_session_params(self) -> dict[str, Any]:
        """The params of every ``session/new`` the checker sends."""
        return {"cwd": self.o.cwd or os.getcwd(), "mcpServers": []}

    async def _sessions(self, agent: RawAgent) -> tuple[str, str] | None:
        ids: list[str] = []
        for request_id in (0, "session-2"):
            self.current = "session.new"
            try:
                answer = await agent.request(
                    "session/new", self.new_session_params(), self.o.timeout, request_id
                )
            except AnswerTimeout as exc:
                self.verdict("session.new", False, str(exc))
                self._note_gone(agent, "session.new")
                return None
            self._id_answer(agent, request_id)
            sid = self.session_id_of(answer)
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

    def session_id_of(self, answer: dict[str, Any]) -> str | None:
        """The sessionId of a session/new answer (remembered as given), else None."""
        sid = (answer.get("result") or {}).get("sessionId")
        if not isinstance(sid, str) or not sid:
            return None
        self._given.add(sid)
        return sid

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
            if not item.is_response or any(a < item.seq <= b for a, b in self.owned):
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
        await self._started.wait()
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


def _sent_id(agent: RawAgent, request_id: Any) -> bool:
    return agent.answer_seq(request_id) is not None and agent.was_sent(request_id)
