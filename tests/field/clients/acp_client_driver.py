"""Drive an ACP agent with the PRODUCTION client ``acp-client`` (PyPI), one JSON fact per line.

Run by ``tests/field/test_clients.py`` with the interpreter of the isolated virtualenv where
``scripts/setup_field_agents.sh`` installed ``acp-client`` (never rxacp's own environment):

    python acp_client_driver.py --file PATH -- AGENT COMMAND...

It runs each scenario with acp-client's public API (``Agent.ask``, ``cancel`` by cancelling the
``ask`` task, ``permission=``, ``session=`` to carry a session on) and prints
``{"scenario": ..., ...facts}`` per scenario; the test asserts the facts. Every wait is bounded.

This script is *not* part of rxacp and must not import it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from acp_client import Agent, AgentError

WAIT_S = 20.0


def fact(scenario: str, **facts: Any) -> None:
    print(json.dumps({"scenario": scenario, **facts}), flush=True)


async def guarded(scenario: str, body: Any) -> None:
    try:
        await asyncio.wait_for(body, WAIT_S * 2)
    except Exception as exc:  # reported, asserted by the test
        fact(scenario, crashed=f"{type(exc).__name__}: {exc}")


async def stream(command: list[str], cwd: Path) -> None:
    agent = Agent(command, cwd)
    seen: list[int] = []
    try:
        text = await asyncio.wait_for(
            agent.ask("stream 40", on_text=lambda t: seen.append(len(t))), WAIT_S
        )
        fact("stream", text=text, growth=len(seen), session=agent.session)
    finally:
        await agent.stop()


async def cancel_then_ask(command: list[str], cwd: Path) -> None:
    agent = Agent(command, cwd)
    started = asyncio.Event()
    try:
        task = asyncio.ensure_future(agent.ask("slow 5", on_text=lambda _t: started.set()))
        await asyncio.wait_for(started.wait(), WAIT_S)
        task.cancel()  # acp-client sends session/cancel and gives the turn up at once
        with contextlib.suppress(asyncio.CancelledError):
            await task
        t0 = time.monotonic()
        try:
            again = await asyncio.wait_for(agent.ask("echo asked again"), WAIT_S)
            fact("cancel_then_ask", answer=again, elapsed=time.monotonic() - t0)
        except AgentError as exc:
            fact("cancel_then_ask", error=str(exc), elapsed=time.monotonic() - t0)
    finally:
        await agent.stop()


async def permission(command: list[str], cwd: Path, choice: str) -> None:
    asked: list[dict[str, Any]] = []

    async def decide(request: dict[str, Any]) -> str | None:
        asked.append(request)
        for option in request.get("options") or []:
            if str(option.get("kind", "")).startswith(choice):
                return str(option["optionId"])
        return None

    agent = Agent(command, cwd, permission=decide)
    try:
        text = await asyncio.wait_for(agent.ask("permission"), WAIT_S)
        fact(f"permission_{choice}", text=text, asked=len(asked))
    finally:
        await agent.stop()


async def read_without_fs(command: list[str], cwd: Path, file: Path) -> None:
    agent = Agent(command, cwd)
    try:
        try:
            text = await asyncio.wait_for(agent.ask(f"read {file}"), WAIT_S)
            fact("fs", text=text)
        except AgentError as exc:
            fact("fs", error=str(exc))
    finally:
        await agent.stop()


async def carry_on(command: list[str], cwd: Path) -> None:
    first = Agent(command, cwd)
    try:
        await asyncio.wait_for(first.ask("echo first run"), WAIT_S)
        old = first.session
    finally:
        await first.stop()
    second = Agent(command, cwd, session=old)
    try:
        text = await asyncio.wait_for(second.ask("echo second run"), WAIT_S)
        fact("carry_on", first=old, second=second.session, text=text)
    finally:
        await second.stop()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", required=True)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    command, cwd, file = args.command, Path.cwd(), Path(args.file)
    await guarded("stream", stream(command, cwd))
    await guarded("cancel_then_ask", cancel_then_ask(command, cwd))
    await guarded("permission_allow", permission(command, cwd, "allow"))
    await guarded("permission_reject", permission(command, cwd, "reject"))
    await guarded("fs", read_without_fs(command, cwd, file))
    await guarded("carry_on", carry_on(command, cwd))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
