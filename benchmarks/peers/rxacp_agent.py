"""Benchmark agent written with rxacp: ``python rxacp_agent.py sync|async|rx``.

Prompts: ``echo x`` (one chunk), ``stream n`` (n chunks), ``read PATH`` (``fs/read_text_file``
through the client, one chunk with the text), ``wait`` (sends "waiting", then waits
cooperatively for the cancel and answers ``cancelled``). The sync agent runs its handler on a
worker thread (the SDK holds it when the client is behind); the async agent answers with plain
values where it can, and streams with an Observable in slices of 256 chunks, yielding to the
loop between slices and waiting while ``session.outbound_paused`` (the client is behind).
``uvloop`` is the async agent on a uvloop event loop. ``rx`` is the async agent written the
Java way: every handler returns an Observable (``reactivex.defer(...)``, like ``Mono.defer``),
to measure what an Observable-returning handler costs against a plain value. Not a behaviour test.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import reactivex
from reactivex import abc
from reactivex import operators as ops

from rxacp import AcpAgent, StdioAcpAgentTransport
from rxacp.agent import PromptContext, SyncPromptContext
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse

__all__ = ["main"]

SLICE = 256
AGENT: list[Any] = []  # the running agent (its session tells when the client is behind)


def _split(request: PromptRequest) -> tuple[str, str]:
    command, _, arg = request.prompt_text().partition(" ")
    return command, arg


def prompt_sync(request: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    """The blocking handler (worker thread)."""
    command, arg = _split(request)
    if command == "echo":
        ctx.send_message(arg)
    elif command == "stream":
        send = ctx.send_message
        for i in range(int(arg)):
            send(str(i))
    elif command == "read":
        ctx.send_message(ctx.read_file(arg))
    elif command == "wait":
        cancelled = threading.Event()
        ctx.on_cancel(cancelled.set)
        ctx.send_message("waiting")
        cancelled.wait(60)
        return PromptResponse.cancelled()
    return PromptResponse.end_turn()


def prompt_async(request: PromptRequest, ctx: PromptContext) -> Any:
    """The async handler (runs on the connection's loop, never blocks it): a plain answer,
    or an Observable of it when it has to wait."""
    command, arg = _split(request)
    if command == "echo":
        ctx.send_message(arg)
    elif command == "stream":
        return _stream(ctx, int(arg))
    elif command == "read":
        return ctx.read_file(arg).pipe(ops.map(lambda text: _said(ctx, text)))
    elif command == "wait":
        ctx.send_message("waiting")
        return ctx.when_cancelled().pipe(ops.map(lambda _: PromptResponse.cancelled()))
    return PromptResponse.end_turn()


def prompt_rx(request: PromptRequest, ctx: PromptContext) -> reactivex.Observable[Any]:
    """The async handler written the Java way: always an Observable, built in ``defer``."""
    command, arg = _split(request)
    if command == "echo":

        def echo(_scheduler: abc.SchedulerBase | None) -> reactivex.Observable[Any]:
            ctx.send_message(arg)
            return reactivex.just(PromptResponse.end_turn())

        return reactivex.defer(echo)
    if command in ("stream", "read", "wait"):
        return reactivex.defer(lambda _scheduler: prompt_async(request, ctx))
    return reactivex.defer(lambda _scheduler: reactivex.just(PromptResponse.end_turn()))


def _said(ctx: PromptContext, text: str) -> PromptResponse:
    ctx.send_message(text)
    return PromptResponse.end_turn()


def _stream(ctx: PromptContext, count: int) -> reactivex.Observable[Any]:
    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        sched = ctx.scheduler
        position = [0]

        def step(_sched: abc.SchedulerBase, _state: Any = None) -> None:
            start = position[0]
            end = min(count, start + SLICE)
            send = ctx.send_message
            for i in range(start, end):
                send(str(i))
            position[0] = end
            if end >= count or ctx.is_cancelled():
                observer.on_next(PromptResponse.end_turn())
                observer.on_completed()
            elif AGENT and AGENT[0].session.outbound_paused:  # the client is behind: wait
                sched.schedule_relative(0.001, step)
            else:
                sched.schedule(step)

        return sched.schedule(step)

    return reactivex.create(subscribe)


def main() -> None:
    """Serve stdin/stdout with the API named by the first argument."""
    api = sys.argv[1] if len(sys.argv) > 1 else "sync"
    if api == "uvloop":  # the async agent, its loop made by uvloop's policy
        import asyncio

        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        api = "async"
    transport = StdioAcpAgentTransport()
    counter = [0]

    def new_session(_request: Any) -> NewSessionResponse:
        counter[0] += 1
        return NewSessionResponse(session_id=f"rx-sess-{counter[0]}")

    builder = AcpAgent.sync(transport) if api == "sync" else AcpAgent.async_(transport)
    builder.new_session_handler(new_session)
    handlers = {"sync": prompt_sync, "async": prompt_async, "rx": prompt_rx}
    builder.prompt_handler(handlers[api])
    agent = builder.build()
    AGENT.append(agent)
    agent.run()


if __name__ == "__main__":
    main()
