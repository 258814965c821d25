"""Cost of the read model (``SessionState``) and of tracing (issue 31).

    python benchmarks/read_model.py [--reps 3] [--updates 20000] [--round-trips 2000]

Three parts, each scenario in a fresh interpreter (so one scenario's imports, e.g.
OpenTelemetry, cannot change another's), scenarios alternating within each repetition; the
table shows the median (and min) over the repetitions:

1. **fold**: ``SessionState.apply`` in process, per streamed ``agent_message_chunk`` (20,000
   chunks into one message), per ``tool_call_update``, and per item through
   ``fold_session_state()`` (one Rx hop more). Target: a text chunk <= 5 us.
2. **end to end**: client CPU (``time.process_time`` of the client process) per update of one
   ``stream N`` turn of the reference agent over stdio (the agent in its own process):
   ``plain`` = a ``session_update_consumer`` that does nothing, read model off
   (the default); ``plain+fold`` = the same consumer with the read model on
   (``track_session_states()``); ``render`` = no consumer, a ``session_state(sid)`` subscriber
   reading each snapshot. Target: ``render`` <= 1.5x ``plain``.
3. **tracing**: CPU per ``session/prompt`` round trip (sync client and sync agent in one process,
   in memory, both sides counted): ``absent`` (OpenTelemetry not importable), ``no provider``
   (installed, imported, no provider set: nothing installed), ``provider`` (an SDK provider
   with an in-memory exporter on both sides: two spans per round trip, exported).

Not a unit test; figures vary with the machine (a shared 2-core box: compare rows of one run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- scenarios
def fold(updates: int) -> dict[str, float]:
    from reactivex import from_iterable

    from rxacp.client import SessionState, fold_session_state
    from rxacp.schema import SessionNotification

    chunks = [
        SessionNotification.from_wire(
            {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"w{i} "},
                },
            }
        )
        for i in range(updates)
    ]
    tools = [
        SessionNotification.from_wire(
            {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": f"t{i % 20}",
                    "status": "in_progress",
                },
            }
        )
        for i in range(updates)
    ]

    def per_item(notes: list[Any]) -> float:
        state = SessionState()
        start = time.process_time()
        for note in notes:
            state = state.apply(note)
        return (time.process_time() - start) / len(notes) * 1e6

    operator_start = time.process_time()
    from_iterable(chunks).pipe(fold_session_state()).subscribe(lambda _s: None)
    operator = (time.process_time() - operator_start) / len(chunks) * 1e6
    return {
        "text chunk (us)": per_item(chunks),
        "tool_call_update (us)": per_item(tools),
        "fold_session_state() per item (us)": operator,
    }


def end_to_end(kind: str, updates: int) -> dict[str, float]:
    from rxacp.client import AcpClient, SessionState
    from rxacp.schema import NewSessionRequest, PromptRequest
    from rxacp.transport import AgentParameters, StdioAcpClientTransport

    agent = AgentParameters(sys.executable, ["-m", "rxacp.testing.reference_agent"])
    builder = AcpClient.async_(StdioAcpClientTransport(agent))
    if kind != "render":
        builder.session_update_consumer(lambda _note: None)
    builder.track_session_states(kind != "plain")  # the read model is opt-in
    client = builder.build()
    try:
        client.initialize().block(30)
        sid = client.new_session(NewSessionRequest.of("/tmp")).block(30).session_id
        seen = [0]

        def render(state: SessionState) -> None:
            seen[0] += len(state.messages)  # what a renderer reads first

        if kind == "render":
            client.session_state(sid).subscribe(render)
        client.prompt(PromptRequest.text(sid, "stream 200")).block(30)  # warm up
        start = time.process_time()
        client.prompt(PromptRequest.text(sid, f"stream {updates}")).block(120)
        cpu = time.process_time() - start
    finally:
        client.close()
    return {"client CPU per update (us)": cpu / updates * 1e6}


def tracing(kind: str, round_trips: int) -> dict[str, float]:
    if kind == "absent":
        for name in ("opentelemetry", "opentelemetry.trace"):
            sys.modules[name] = None  # type: ignore[assignment]
    providers: list[Any] = [None, None]
    if kind == "no provider":
        import opentelemetry.trace  # noqa: F401  (imported, no provider set)
    if kind == "provider":
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        for i in range(2):
            providers[i] = TracerProvider()
            providers[i].add_span_processor(SimpleSpanProcessor(exporter))

    from rxacp.agent import AcpAgent
    from rxacp.client import AcpClient
    from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse
    from rxacp.testing.memory import InMemoryTransportPair

    pair = InMemoryTransportPair.create()
    agent_builder = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s"))
        .prompt_handler(lambda req, ctx: PromptResponse.end_turn())
    )
    client_builder = AcpClient.sync(pair.client_transport)
    if providers[0] is not None:
        agent_builder.tracing(tracer_provider=providers[0])
        client_builder.tracing(tracer_provider=providers[1])
    agent = agent_builder.build()
    agent.start()
    client = client_builder.build()
    try:
        client.initialize()
        request = PromptRequest.text("s", "hi")
        for _ in range(200):
            client.prompt(request)
        start = time.process_time()
        for _ in range(round_trips):
            client.prompt(request)
        cpu = time.process_time() - start
    finally:
        client.close()
        agent.close()
    return {"CPU per round trip, both sides (us)": cpu / round_trips * 1e6}


# ---------------------------------------------------------------------------- driver
def _scenario(part: str, kind: str, args: argparse.Namespace) -> dict[str, float]:
    command = [
        sys.executable,
        __file__,
        "--scenario",
        part,
        kind,
        "--updates",
        str(args.updates),
        "--round-trips",
        str(args.round_trips),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--updates", type=int, default=20000)
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--scenario", nargs=2, metavar=("PART", "KIND"))
    args = parser.parse_args()
    if args.scenario:
        part, kind = args.scenario
        if part == "fold":
            result = fold(args.updates)
        elif part == "end-to-end":
            result = end_to_end(kind, args.updates)
        else:
            result = tracing(kind, args.round_trips)
        print(json.dumps(result))
        return 0

    plan = [("fold", "in process")]
    plan += [("end-to-end", k) for k in ("plain", "plain+fold", "render")]
    plan += [("tracing", k) for k in ("absent", "no provider", "provider")]
    runs: dict[tuple[str, str], list[dict[str, float]]] = {key: [] for key in plan}
    for rep in range(args.reps):
        order = plan[rep % len(plan) :] + plan[: rep % len(plan)]  # rotate the order
        for key in order:
            runs[key].append(_scenario(*key, args))
    print(f"{'part':<11} {'scenario':<12} {'measure':<38} {'median':>8} {'min':>8}")
    medians: dict[tuple[str, str, str], float] = {}
    for (part, kind), results in runs.items():
        for measure in results[0]:
            values = [r[measure] for r in results]
            medians[(part, kind, measure)] = statistics.median(values)
            print(
                f"{part:<11} {kind:<12} {measure:<38} "
                f"{statistics.median(values):>8.2f} {min(values):>8.2f}"
            )
    per_update = "client CPU per update (us)"
    plain = medians[("end-to-end", "plain", per_update)]
    print(
        f"\nrender / plain: {medians[('end-to-end', 'render', per_update)] / plain:.2f}x "
        f"(target <= 1.5x); plain+fold / plain: "
        f"{medians[('end-to-end', 'plain+fold', per_update)] / plain:.2f}x"
    )
    text = medians[("fold", "in process", "text chunk (us)")]
    print(f"fold per text chunk: {text:.2f} us (target <= 5 us)")
    rt = "CPU per round trip, both sides (us)"
    absent = medians[("tracing", "absent", rt)]
    for kind in ("no provider", "provider"):
        print(f"tracing {kind} / absent: {medians[('tracing', kind, rt)] / absent:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
