"""``rxacp demo``: a five-second tour of rxacp against the reference agent (no network).

Spawns ``python -m rxacp.testing.reference_agent --cancel-grace 1`` over stdio and shows
(1) a streamed answer, (2) a prompt cancelled mid-stream with the measured time from
``session/cancel`` to the ``cancelled`` answer, (3) the SDK's grace period rescuing a handler
that ignores cancellation, and (4) a summary.

This module is *not* responsible for the reference agent's behaviour or the protocol itself.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

import rxacp

from ..client import AcpClient, AcpSyncClient, CancellationSignal
from ..errors import AcpException
from ..schema import NewSessionRequest, PromptRequest, SessionNotification
from ..transport import AgentParameters, StdioAcpClientTransport
from ..transport.tap import WireTapTransport
from .render import Style, colors_enabled

__all__ = ["GRACE_SECONDS", "add_arguments", "run"]

GRACE_SECONDS = 1
"""The reference agent's cancel grace period in the demo."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rxacp demo`` options."""
    parser.add_argument("--log-wire", metavar="FILE", help="record JSON-RPC traffic (JSON lines)")


def agent_parameters() -> AgentParameters:
    """How the demo launches the reference agent (this interpreter, this rxacp)."""
    source_root = os.path.dirname(os.path.dirname(os.path.abspath(rxacp.__file__)))
    path = os.environ.get("PYTHONPATH")
    return AgentParameters(
        sys.executable,
        ["-m", "rxacp.testing.reference_agent", "--cancel-grace", str(GRACE_SECONDS)],
        env={"PYTHONPATH": source_root + (os.pathsep + path if path else "")},
    )


class _Stream:
    """The demo's ``session/update`` consumer: prints message chunks inline, counts them, and
    calls ``on_chunk(n)`` after the n-th chunk of the current prompt."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self.chunks = 0
        self.on_chunk: Callable[[int], None] | None = None

    def reset(self, on_chunk: Callable[[int], None] | None = None) -> None:
        self.chunks = 0
        self.on_chunk = on_chunk

    def __call__(self, note: SessionNotification) -> None:
        if getattr(note.update, "session_update", None) != "agent_message_chunk":
            return
        text = getattr(getattr(note.update, "content", None), "text", "")
        self._out.write(str(text))
        self._out.flush()
        self.chunks += 1
        if self.on_chunk is not None:
            self.on_chunk(self.chunks)


@dataclass
class _Outcome:
    label: str
    stop_reason: str
    detail: str
    ok: bool


class _Demo:
    def __init__(self, client: AcpSyncClient, stream: _Stream, out: IO[str], style: Style) -> None:
        self.client = client
        self.stream = stream
        self.out = out
        self.s = style
        self.session_id = ""
        self.outcomes: list[_Outcome] = []

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def heading(self, number: int, title: str) -> None:
        self.say()
        self.say(self.s(f"{number} ", "magenta", "bold") + self.s(title, "bold"))

    def ask(self, text: str, cancel_after: int | None = None) -> tuple[str, float, float | None]:
        """Prompt; returns (stop reason, seconds the prompt took, ms from cancel to answer)."""
        stop = CancellationSignal()
        cancelled_at: list[float] = []

        def on_chunk(n: int) -> None:
            if cancel_after is not None and n == cancel_after:
                cancelled_at.append(time.perf_counter())
                stop.cancel()
                self.out.write(self.s(" ⏹ ", "red", "bold"))

        self.stream.reset(on_chunk)
        self.say(f"  {self.s('you  ', 'dim')}  {text}")
        self.out.write(f"  {self.s('agent', 'cyan')}  ")
        started = time.perf_counter()
        response = self.client.prompt(PromptRequest.text(self.session_id, text), stop)
        ended = time.perf_counter()
        self.say()
        waited = (ended - cancelled_at[0]) * 1000 if cancelled_at else None
        return str(response.stop_reason), ended - started, waited

    def streamed(self) -> None:
        self.heading(1, "A streamed answer: every chunk is a session/update as it arrives")
        reason, took, _ = self.ask("slow 1.5")
        chunks = self.stream.chunks
        ok = reason == "end_turn"
        self.say(self.result(ok, reason, f"{chunks} chunks in {took * 1000:.0f} ms"))
        self.outcomes.append(_Outcome("streamed", reason, f"{chunks} chunks", ok))

    def cancelled(self) -> None:
        self.heading(2, "Cancel mid-stream: CancellationSignal → session/cancel")
        reason, _, waited = self.ask("slow 10", cancel_after=6)
        ms = f"{waited:.1f} ms" if waited is not None else "?"
        ok = reason == "cancelled"
        self.say(self.result(ok, reason, f"answered {ms} after session/cancel"))
        self.outcomes.append(_Outcome("cancelled", reason, f"{ms} after cancel", ok))

    def rescued(self) -> None:
        self.heading(
            3, f"A stubborn handler ignores the cancel; the {GRACE_SECONDS} s grace period ends it"
        )
        reason, _, waited = self.ask("stubborn 10", cancel_after=4)
        ms = f"{waited:.0f} ms" if waited is not None else "?"
        ok = reason == "cancelled" and waited is not None and waited < GRACE_SECONDS * 1000 + 900
        self.say(
            self.result(ok, reason, f"the SDK answered for the handler {ms} after session/cancel")
        )
        self.outcomes.append(_Outcome("rescued", reason, f"{ms} after cancel (grace)", ok))

    def result(self, ok: bool, reason: str, detail: str) -> str:
        mark = self.s("✔", "green", "bold") if ok else self.s("✘", "red", "bold")
        return f"  {mark} stopReason {self.s(reason, 'bold')} · {detail}"


def run(args: argparse.Namespace, *, out: IO[str], err: IO[str]) -> int:
    """Run the demo; returns 0 if every step behaved as expected."""
    style = Style(colors_enabled(out))
    started = time.perf_counter()
    transport = WireTapTransport(StdioAcpClientTransport(agent_parameters()), args.log_wire)
    stream = _Stream(out)
    client = AcpClient.sync(transport).session_update_consumer(stream).build()
    demo = _Demo(client, stream, out, style)
    try:
        init = client.initialize()
        demo.session_id = client.new_session(NewSessionRequest.of(os.getcwd())).session_id
        info = init.agent_info
        agent = f"{info.name} {info.version}" if info is not None else "agent"
        pid = getattr(transport.inner, "pid", None)
        demo.say(
            style("rxacp demo", "bold", "cyan")
            + style(f" · {agent} over stdio (pid {pid}) · ACP v{init.protocol_version}", "dim")
        )
        demo.streamed()
        demo.cancelled()
        demo.rescued()
    except AcpException as exc:
        out.write("\n")
        err.write(style("demo failed: ", "red", "bold") + f"{exc}\n")
        return 1
    finally:
        client.close_gracefully(3.0)
    elapsed = time.perf_counter() - started
    _summary(demo, transport, elapsed, args.log_wire)
    return 0 if all(o.ok for o in demo.outcomes) else 1


def _summary(demo: _Demo, transport: WireTapTransport, elapsed: float, log: str | None) -> None:
    s = demo.s
    demo.heading(4, "Summary")
    for outcome in demo.outcomes:
        mark = s("✔", "green") if outcome.ok else s("✘", "red")
        demo.say(f"  {mark} {outcome.label:<10} {outcome.stop_reason:<10} {outcome.detail}")
    messages = transport.sent + transport.received
    demo.say(s(f"  {messages} JSON-RPC messages over stdio in {elapsed:.1f} s · no network", "dim"))
    if log:
        demo.say(s(f"  wire log: {log}", "dim"))
    demo.say()
    demo.say(
        "  Try it: "
        + s('rxacp prompt --agent "python -m rxacp.testing.reference_agent" "slow 5"', "bold")
        + s("  (Ctrl-C cancels)", "dim")
    )
