"""Issue 17 item 1: validation amplification, on both sides of the connection.

One line whose list holds a million tiny invalid items (``{"a":{}}``) used to make pydantic
record one error per item: 8 MiB in took the reference agent to +2.8 GiB and 41 s and produced a
99 MiB ``-32602``. Lists now stop at their first invalid item (``fail_fast``) and error ``data``
holds at most 20 entries plus a count, so memory is the parsed line only and the answer is small.
The agent is the reference agent over real stdio; the client is an rxacp sync client in a fresh
subprocess (so its peak RSS is its own) facing a raw hostile agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pydantic

from rxacp.errors import exception_to_error
from rxacp.schema import (
    AcpModel,
    Content,
    PromptRequest,
    SessionNotification,
    TextContent,
    ToolCall,
)

from .conftest import (
    ROOT,
    Figure,
    agent_env,
    reference_agent_argv,
    rss_kib,
    scaled,
    send_json,
    spawn_agent,
)

PEERS = os.path.join(os.path.dirname(__file__), "peers")
MIB = 1024 * 1024
LINE_MIB = scaled(1, 8)
ITEMS = ['{"a":{}}'] + (["{}"] if scaled(0, 1) else [])
MAX_ANSWER = 16 * 1024


def growth_bound_mib(line_mib: int) -> int:
    """The issue's target (<= 300 MiB for 8 MiB) as a line multiple, with a base for small lines.

    The parsed line alone is ~30 bytes of Python objects per byte of ``{"a":{}}``; before the
    fix 1 MiB grew the agent by ~350 MiB and the client by ~450 MiB.
    """
    return 48 + 32 * line_mib


def answer_to(proc: subprocess.Popen[bytes], request_id: int) -> tuple[dict[str, Any], int]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, "the agent closed its stdout"
        msg = json.loads(line)
        if msg.get("id") == request_id:
            return msg, len(line)


def test_one_line_of_a_million_invalid_prompt_blocks_costs_the_agent_a_bounded_small_answer(
    figure: Figure,
) -> None:
    proc = spawn_agent(reference_agent_argv())
    try:
        send_json(proc, {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        answer_to(proc, 0)
        send_json(
            proc, {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        )
        session_id = answer_to(proc, 1)[0]["result"]["sessionId"]
        for rid, item in enumerate(ITEMS, start=2):
            idle = rss_kib(proc.pid)
            count = LINE_MIB * MIB // (len(item) + 1)
            head = f'{{"jsonrpc":"2.0","id":{rid},"method":"session/prompt","params":'
            line = head + f'{{"sessionId":"{session_id}","prompt":['
            line += ",".join([item] * count) + "]}}\n"
            assert proc.stdin is not None
            started = time.monotonic()
            proc.stdin.write(line.encode())
            proc.stdin.flush()
            answer, answer_bytes = answer_to(proc, rid)
            seconds = time.monotonic() - started
            growth_mib = (rss_kib(proc.pid, "VmHWM") - idle) // 1024
            error = answer["error"]
            figure(f"line_mib[{item}]", LINE_MIB)
            figure(f"invalid_items[{item}]", count)
            figure(f"agent_peak_growth_mib[{item}]", growth_mib)
            figure(f"answer_seconds[{item}]", round(seconds, 2))
            figure(f"answer_bytes[{item}]", answer_bytes)
            assert error["code"] == -32602 and error["message"].startswith("Invalid params: prompt")
            assert len(error["data"]) <= 21 and answer_bytes <= MAX_ANSWER, answer_bytes
            assert growth_mib <= growth_bound_mib(LINE_MIB), growth_mib
        # the agent keeps serving
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]}
        send_json(proc, {"id": 9, "method": "session/prompt", "params": params})
        assert answer_to(proc, 9)[0]["result"]["stopReason"] == "end_turn"
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


VICTIM = """
import json, sys
from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, PromptRequest, RequestPermissionResponse
from rxacp.transport import AgentParameters, StdioAcpClientTransport

def kib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])

updates = []
def consume(note):
    update = note.update
    if update.session_update == "tool_call":
        updates.append(["tool_call", len(update.content or [])])
    else:
        updates.append([update.session_update, update.content.text])

transport = StdioAcpClientTransport(AgentParameters(sys.executable, sys.argv[1:]))
client = (
    AcpClient.sync(transport)
    .request_timeout(600)
    .session_update_consumer(consume)
    .request_permission_handler(lambda request: RequestPermissionResponse.cancelled())
    .build()
)
with client:
    client.initialize()
    session_id = client.new_session(NewSessionRequest.of("/")).session_id
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM: the peak from here on is the attack's
    idle = kib("VmRSS")
    answer = client.prompt(PromptRequest.text(session_id, "go"))
    growth = kib("VmHWM") - idle
print(json.dumps({"growth_kib": growth, "stop": answer.stop_reason, "updates": updates}))
"""


def test_a_hostile_agents_invalid_million_item_lists_cost_the_client_a_bounded_small_answer(
    figure: Figure,
) -> None:
    agent = os.path.join(PEERS, "amplifying_agent.py")
    size = LINE_MIB * MIB
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", VICTIM, agent, str(size)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, **agent_env()},
    )
    seconds = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    growth_mib = result["growth_kib"] // 1024
    tool_call, report = result["updates"]
    fields = dict(part.split("=") for part in report[1].split())
    figure("line_mib", LINE_MIB)
    figure("client_peak_growth_mib", growth_mib)
    figure("client_seconds_for_both_lines", round(seconds, 2))
    figure("permission_answer_bytes", int(fields["answer_bytes"]))
    assert result["stop"] == "end_turn"
    # session/request_permission with a million invalid options: -32602, small and capped
    assert fields["code"] == "-32602" and int(fields["entries"]) <= 21
    assert int(fields["answer_bytes"]) <= MAX_ANSWER, fields
    # the tool_call update with a million invalid content items: delivered, invalid items dropped
    assert tool_call == ["tool_call", 0]
    assert growth_mib <= growth_bound_mib(LINE_MIB), growth_mib


def test_an_invalid_list_records_one_error_however_long_and_lenient_lists_keep_good_items() -> None:
    bad: list[dict[str, Any]] = [{"a": {}}] * 10_000
    try:
        prompt = [{"type": "text", "text": "ok"}, *bad]
        PromptRequest.from_wire({"sessionId": "s", "prompt": prompt})
    except pydantic.ValidationError as exc:
        assert exc.error_count() <= 2, exc.error_count()  # one item: its known and Unknown branch
    else:
        raise AssertionError("an invalid prompt block was accepted")
    good = {"type": "content", "content": {"type": "text", "text": "kept"}}
    content = [good, *bad[:500], good, {"type": "content"}, good]
    update = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "content": content}
    note = SessionNotification.from_wire({"sessionId": "s", "update": update})
    assert isinstance(note.update, ToolCall) and note.update.content is not None
    kept = [c.content for c in note.update.content if isinstance(c, Content)]
    assert [c.text for c in kept if isinstance(c, TextContent)] == ["kept"] * 3


def test_every_list_of_every_acp_model_stops_at_its_first_invalid_item() -> None:
    import rxacp.schema.unstable
    import rxacp.schema.v2
    import rxacp.schema.v2.unstable  # noqa: F401

    def models(cls: type[AcpModel]) -> Iterator[type[AcpModel]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from models(sub)

    def lists(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == "list":
                yield node
            for key, child in node.items():
                if key != "metadata":
                    yield from lists(child)
        elif isinstance(node, list | tuple):
            for child in node:
                yield from lists(child)

    every = set(models(AcpModel))
    for model in every:
        model.model_rebuild()  # models build their schema on first use (defer_build)
    found = [s for m in every for s in lists(m.__pydantic_core_schema__)]
    assert len(found) > 100
    assert all(s.get("fail_fast") for s in found)


def test_error_data_lists_at_most_20_errors_and_counts_the_rest() -> None:
    fields: dict[str, Any] = {f"f{i}": (int, ...) for i in range(50)}
    wide = pydantic.create_model("Wide", __base__=AcpModel, **fields)
    try:
        wide.model_validate({})
    except pydantic.ValidationError as exc:
        error = exception_to_error(exc)
    assert error["code"] == -32602
    assert len(error["data"]) == 21
    assert error["data"][-1]["type"] == "too_many_errors"
    assert error["data"][-1]["msg"] == "30 more error(s) not listed"
