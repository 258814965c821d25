"""One prompt, one trace across two processes: the client's and the agent's spans.

The client (this process) and the agent (``tracing_agent.py``, spawned over stdio) each have an
OpenTelemetry tracer provider with a console exporter. The client puts the W3C trace context
into every request's ``params._meta``; the agent continues it. Prints both processes' spans as
a tree: name, kind, span id and parent id.

    pip install "rxacp[otel]" opentelemetry-sdk
    python examples/tracing_console.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, PromptRequest, ReadTextFileResponse
from rxacp.transport import AgentParameters, StdioAcpClientTransport

HERE = Path(__file__).resolve().parent


def run(client_spans: Path, agent_spans: Path) -> None:
    provider = TracerProvider()
    with client_spans.open("w", encoding="utf-8") as out:
        provider.add_span_processor(
            SimpleSpanProcessor(
                ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
            )
        )
        trace.set_tracer_provider(provider)  # before the client is built: tracing is on
        agent = AgentParameters(sys.executable, [str(HERE / "tracing_agent.py"), str(agent_spans)])
        with (
            AcpClient.sync(StdioAcpClientTransport(agent))
            .read_text_file_handler(lambda req: ReadTextFileResponse(content="a\nb\nc\n"))
            .build() as client
        ):
            client.initialize()
            sid = client.new_session(NewSessionRequest.of(os.getcwd())).session_id
            tracer = trace.get_tracer("example")
            with tracer.start_as_current_span("user asks"):  # the UI action: the trace's root
                client.prompt(PromptRequest.text(sid, "/notes.txt"))
        provider.shutdown()


def spans_of(path: Path, process: str) -> list[dict[str, str]]:
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        span = json.loads(line)
        spans.append(
            {
                "process": process,
                "name": span["name"],
                "kind": span["kind"].removeprefix("SpanKind."),
                "trace": span["context"]["trace_id"],
                "id": span["context"]["span_id"],
                "parent": span["parent_id"] or "-",
            }
        )
    return spans


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        client_spans, agent_spans = Path(tmp, "client.jsonl"), Path(tmp, "agent.jsonl")
        run(client_spans, agent_spans)
        spans = spans_of(client_spans, "client") + spans_of(agent_spans, "agent")
    root = next(s for s in spans if s["name"] == "user asks")
    print(f"trace {root['trace']}")
    children: dict[str, list[dict[str, str]]] = {}
    for span in spans:
        children.setdefault(span["parent"], []).append(span)

    def show(span: dict[str, str], depth: int) -> None:
        print(
            f"{'  ' * depth}{span['name']}  [{span['process']} {span['kind']}]  "
            f"id={span['id']} parent={span['parent']}"
        )
        for child in children.get(span["id"], []):
            show(child, depth + 1)

    show(root, 0)


if __name__ == "__main__":
    main()
