"""The agent half of ``tracing_console.py``: a traced agent whose spans go to a file.

Its stdout is the protocol, so its console exporter writes to the file named by its first
argument (one JSON span per line). It continues the client's trace from
``params._meta.traceparent``; the file it reads through the client is part of the same trace.
"""

from __future__ import annotations

import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse

spans = open(sys.argv[1], "w", encoding="utf-8")  # noqa: SIM115 - open while the agent runs
provider = TracerProvider()
provider.add_span_processor(
    SimpleSpanProcessor(
        ConsoleSpanExporter(out=spans, formatter=lambda span: span.to_json(indent=None) + "\n")
    )
)
trace.set_tracer_provider(provider)  # set before the agent is built: tracing is on


def prompt(request: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
    notes = ctx.read_file(request.prompt_text())  # a request back to the client, same trace
    ctx.send_message(f"{len(notes.splitlines())} lines")
    return PromptResponse.end_turn()


agent = (
    AcpAgent.sync(StdioAcpAgentTransport())
    .new_session_handler(lambda req: NewSessionResponse(session_id="traced"))
    .prompt_handler(prompt)
    .build()
)
agent.run()
provider.shutdown()
spans.close()
