"""Interop peer: an ACP client written with the OFFICIAL Python SDK (``agent-client-protocol``).

Runs ONLY inside ``.venv-interop-py/`` as ``python -I`` (see ``scripts/setup_interop.sh``); it must
not import rxacp. Public API only: ``acp.spawn_agent_process``, the ``ClientSideConnection``
methods (``initialize``, ``new_session``, ``prompt``, ``cancel``, ``ext_method``), schema models
and ``text_block``; the wire tap is the documented ``observers=`` connection option.

Usage::

    python -I python_sdk_client.py --scenarios echo,... [--file PATH] [--timeout S] -- CMD ...

Spawns the agent CMD over stdio, initializes once, runs each scenario (each in its own ACP
session) and prints ONE JSON line per scenario: ``{"scenario": name, ...facts}``. It is NOT
responsible for the verdict: ``tests/interop/test_python_sdk_client.py`` asserts on the facts.

Scenarios: initialize, new_session, echo, stream, read, permission_allow, permission_reject,
cancel (``session/cancel`` during ``slow``), cancel_request (what SDK 0.12.1 does when a prompt
is abandoned: it cancels the asyncio task and sends NOTHING, it has no ``$/cancel_request``; the
facts show rxacp's side still answers and keeps serving), fail, unknown_method.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
)

__all__ = ["main"]

STREAM_N = 10_000
SLOW_SECONDS = 5
STDIO_LIMIT = 50 * 1024 * 1024


def _error_facts(error: BaseException) -> dict[str, Any]:
    if isinstance(error, RequestError):
        return {"code": error.code, "message": str(error), "data": error.data}
    return {"code": None, "message": f"{type(error).__name__}: {error}"}


class InteropClient:
    """The client side: serves fs reads from disk, answers permissions, records updates."""

    def __init__(self) -> None:
        self.updates: dict[str, list[Any]] = {}
        self.update_events: dict[str, asyncio.Event] = {}
        self.permission_choice = "allow"
        self.permission_offers: list[list[dict[str, str]]] = []
        self.served_reads: list[str] = []
        self.wire: list[dict[str, Any]] = []

    # -- acp.Client methods -------------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)
        self.update_events.setdefault(session_id, asyncio.Event()).set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_offers.append([{"optionId": o.option_id, "kind": o.kind} for o in options])
        prefix = f"{self.permission_choice}_"
        option = next((o for o in options if str(o.kind).startswith(prefix)), None)
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.served_reads.append(path)
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    # -- wire tap (connection observer) -------------------------------------------------------
    def observe(self, event: Any) -> None:
        message = event.message
        self.wire.append(
            {
                "dir": "in" if event.direction.value == "incoming" else "out",
                "method": message.get("method"),
                "id": message.get("id"),
                "isResponse": "method" not in message and "id" in message,
                "sessionId": (message.get("params") or {}).get("sessionId")
                if isinstance(message.get("params"), dict)
                else None,
                "result": message.get("result"),
                "error": message.get("error"),
            }
        )

    # -- helpers ------------------------------------------------------------------------------
    def texts(self, session_id: str) -> list[str]:
        out: list[str] = []
        for update in self.updates.get(session_id, []):
            content = getattr(update, "content", None)
            if update.session_update != "agent_message_chunk" or content is None:
                continue
            if content.type == "text":
                out.append(content.text)
        return out

    def prompt_id(self, session_id: str) -> Any:
        for w in reversed(self.wire):
            if (
                w["dir"] == "out"
                and w["method"] == "session/prompt"
                and w["sessionId"] == session_id
            ):
                return w["id"]
        return None

    def answer(self, request_id: Any) -> dict[str, Any] | None:
        for w in self.wire:
            if w["dir"] == "in" and w["isResponse"] and w["id"] == request_id:
                return w
        return None

    def updates_after_answer(self, session_id: str, request_id: Any) -> int | None:
        at = next(
            (
                i
                for i, w in enumerate(self.wire)
                if w["dir"] == "in" and w["isResponse"] and w["id"] == request_id
            ),
            None,
        )
        if at is None:
            return None
        return sum(
            1
            for w in self.wire[at + 1 :]
            if w["dir"] == "in" and w["method"] == "session/update" and w["sessionId"] == session_id
        )

    async def first_update(self, session_id: str, timeout: float) -> None:
        event = self.update_events.setdefault(session_id, asyncio.Event())
        await asyncio.wait_for(event.wait(), timeout)


class Scenarios:
    """Each scenario returns its facts (a JSON object)."""

    def __init__(self, conn: Any, client: InteropClient, init: Any, file: str | None) -> None:
        self.conn = conn
        self.client = client
        self.init = init
        self.file = file

    async def _session(self) -> str:
        response = await self.conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        return str(response.session_id)

    async def _prompt(self, session_id: str, text: str) -> Any:
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])

    async def _round_trip(self) -> None:
        """Everything the agent wrote before answering this has been read afterwards."""
        with contextlib.suppress(RequestError):  # -32601 is expected; any answer will do
            await self.conn.ext_method("interop/ping", {})

    async def initialize(self) -> dict[str, Any]:
        init = self.init
        return {
            "protocolVersion": init.protocol_version,
            "agentInfo": init.agent_info.model_dump(by_alias=True) if init.agent_info else None,
        }

    async def new_session(self) -> dict[str, Any]:
        return {"sessionIds": [await self._session(), await self._session()]}

    async def echo(self) -> dict[str, Any]:
        sid = await self._session()
        text = "héllo wörld ✓ 日本"
        response = await self._prompt(sid, f"echo {text}")
        await self._round_trip()
        return {
            "stopReason": response.stop_reason,
            "texts": self.client.texts(sid),
            "expected": text,
        }

    async def stream(self) -> dict[str, Any]:
        sid = await self._session()
        response = await self._prompt(sid, f"stream {STREAM_N}")
        # The SDK's prompt() returns after the updates it received were handled.
        texts = self.client.texts(sid)
        digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()
        await self._round_trip()
        return {
            "stopReason": response.stop_reason,
            "count": len(texts),
            "allUpdates": len(self.client.updates.get(sid, [])),
            "digest": digest,
            "afterAnswer": self.client.updates_after_answer(sid, self.client.prompt_id(sid)),
        }

    async def read(self) -> dict[str, Any]:
        if not self.file:
            raise ValueError("scenario read needs --file")
        sid = await self._session()
        response = await self._prompt(sid, f"read {self.file}")
        await self._round_trip()
        return {
            "stopReason": response.stop_reason,
            "texts": self.client.texts(sid),
            "expected": Path(self.file).read_text(encoding="utf-8"),
            "servedReads": self.client.served_reads.count(self.file),
        }

    async def _permission(self, choice: str) -> dict[str, Any]:
        self.client.permission_choice = choice
        sid = await self._session()
        before = len(self.client.permission_offers)
        response = await self._prompt(sid, "permission")
        await self._round_trip()
        offered = (
            self.client.permission_offers[before]
            if len(self.client.permission_offers) > before
            else None
        )
        chosen = next(
            (o["optionId"] for o in offered or [] if o["kind"].startswith(f"{choice}_")), None
        )
        return {
            "stopReason": response.stop_reason,
            "offered": offered,
            "chosen": chosen,
            "texts": self.client.texts(sid),
        }

    async def permission_allow(self) -> dict[str, Any]:
        return await self._permission("allow")

    async def permission_reject(self) -> dict[str, Any]:
        return await self._permission("reject")

    async def cancel(self) -> dict[str, Any]:
        sid = await self._session()
        task = asyncio.ensure_future(self._prompt(sid, f"slow {SLOW_SECONDS}"))
        await self.client.first_update(sid, SLOW_SECONDS)
        cancelled_at = time.monotonic()
        await self.conn.cancel(session_id=sid)
        response: Any = None
        error = None
        try:
            response = await task
        except Exception as exc:  # the verdict is the test's
            error = _error_facts(exc)
        answered_at = time.monotonic()
        await self._round_trip()
        return {
            "stopReason": getattr(response, "stop_reason", None),
            "error": error,
            "afterAnswer": self.client.updates_after_answer(sid, self.client.prompt_id(sid)),
            "cancelToAnswerMs": round((answered_at - cancelled_at) * 1000),
        }

    async def cancel_request(self) -> dict[str, Any]:
        """SDK 0.12.1 has no ``$/cancel_request``: abandoning a prompt (task.cancel()) sends
        nothing. Record that, then end the turn with session/cancel and check that rxacp still
        answers the (now orphaned) prompt and serves the next turn."""
        sid = await self._session()
        task = asyncio.ensure_future(self._prompt(sid, f"slow {SLOW_SECONDS}"))
        await self.client.first_update(sid, SLOW_SECONDS)
        prompt_id = self.client.prompt_id(sid)
        task.cancel()
        try:
            await task
            local = "answered"
        except asyncio.CancelledError:
            local = "cancelled"
        await self._round_trip()
        sent_cancel_request = any(
            w["dir"] == "out" and w["method"] == "$/cancel_request" for w in self.client.wire
        )
        answered_before_session_cancel = self.client.answer(prompt_id) is not None
        cancelled_at = time.monotonic()
        await self.conn.cancel(session_id=sid)
        deadline = cancelled_at + SLOW_SECONDS
        while self.client.answer(prompt_id) is None and time.monotonic() < deadline:
            await self._round_trip()  # bounded: each is one request/answer with the agent
        answered_at = time.monotonic()
        late = self.client.answer(prompt_id)
        await self._round_trip()
        after_answer = self.client.updates_after_answer(sid, prompt_id)
        follow_up = await self._prompt(sid, "echo still alive")
        await self._round_trip()
        return {
            "localOutcome": local,
            "sentCancelRequest": sent_cancel_request,
            "answeredBeforeSessionCancel": answered_before_session_cancel,
            "lateAnswer": None
            if late is None
            else {"result": late["result"], "error": late["error"]},
            "cancelToAnswerMs": round((answered_at - cancelled_at) * 1000),
            "afterAnswer": after_answer,
            "followUpStopReason": follow_up.stop_reason,
            "followUpText": texts[-1] if (texts := self.client.texts(sid)) else None,
        }

    async def fail(self) -> dict[str, Any]:
        sid = await self._session()
        try:
            response = await self._prompt(sid, "fail")
        except RequestError as exc:
            return {"error": _error_facts(exc)}
        return {"stopReason": response.stop_reason, "error": None}

    async def unknown_method(self) -> dict[str, Any]:
        try:
            result = await self.conn.ext_method("interop/nope", {})
        except RequestError as exc:
            return {"error": _error_facts(exc)}
        return {"result": result, "error": None}


def _emit(fact: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(fact, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


async def _run(args: argparse.Namespace) -> int:
    client = InteropClient()
    command, *agent_args = args.command
    async with spawn_agent_process(
        client,
        command,
        *agent_args,
        env=dict(os.environ),
        transport_kwargs={"limit": STDIO_LIMIT},
        observers=[client.observe],
    ) as (conn, _process):
        try:
            init = await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(
                        fs=FileSystemCapabilities(read_text_file=True, write_text_file=False),
                        terminal=False,
                    ),
                    client_info=Implementation(name="python-sdk-interop-client", version="1.0.0"),
                ),
                args.timeout,
            )
        except Exception as exc:
            for name in args.scenarios:
                _emit({"scenario": name, "fatal": "initialize failed", "error": _error_facts(exc)})
            return 1
        scenarios = Scenarios(conn, client, init, args.file)
        for name in args.scenarios:
            run = getattr(scenarios, name, None)
            started = time.monotonic()
            if run is None or name.startswith("_"):
                _emit({"scenario": name, "fatal": f"unknown scenario {name}"})
                continue
            try:
                facts = await asyncio.wait_for(run(), args.timeout)
            except BaseException as exc:  # report, never hang
                if isinstance(exc, KeyboardInterrupt):
                    raise
                facts = {"crash": _error_facts(exc)}
            facts["elapsedMs"] = round((time.monotonic() - started) * 1000)
            _emit({"scenario": name, **facts})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=lambda s: [x for x in s.split(",") if x], default=[])
    parser.add_argument("--file", default=None)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("no agent command after --")
    return asyncio.run(_run(args))


if __name__ == "__main__":
    sys.exit(main())
