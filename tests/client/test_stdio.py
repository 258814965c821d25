"""The client over real stdio, against the scripted agent running as a child process."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rxacp.client import AcpClient, AcpSyncClient, CancellationSignal
from rxacp.schema import (
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionResponse,
)
from rxacp.schema import methods as m
from rxacp.session import CANCEL_REQUEST

from .conftest import stdio_transport, texts

SID = "sess-1"


class StdioRig:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.client: AcpSyncClient = (
            AcpClient.sync(stdio_transport())
            .session_update_consumer(self.updates.append)
            .read_text_file_handler(self._read)
            .request_permission_handler(lambda req: RequestPermissionResponse.selected("allow"))
            .build()
        )

    @staticmethod
    def _read(req: ReadTextFileRequest) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=f"contents of {req.path}: ünïcödé")

    def stats(self) -> dict[str, int]:
        """Counts of the methods the agent received (it reports them as an update)."""
        before = len(self.updates)
        self.client.prompt(PromptRequest.text(SID, "stats"))
        stats: dict[str, int] = json.loads(texts(self.updates[before:])[-1])
        return stats


@pytest.fixture
def stdio() -> Iterator[StdioRig]:
    rig = StdioRig()
    yield rig
    rig.client.close()


def test_stdio_round_trips_of_session_methods(stdio: StdioRig) -> None:
    client = stdio.client
    init = client.initialize()
    assert init.agent_info is not None and init.agent_info.name == "fake-agent"
    assert client.new_session({"cwd": "/tmp", "mcpServers": []}).session_id == SID
    assert client.list_sessions().sessions[0].session_id == SID
    client.load_session({"sessionId": SID, "cwd": "/tmp", "mcpServers": []})
    client.set_session_mode({"sessionId": SID, "modeId": "code"})
    assert client.fork_session({"sessionId": SID, "cwd": "/tmp"}).session_id == "sess-fork"
    assert client.ext_method("_test/echo", {"x": "ü"}) == {"x": "ü"}


def test_stdio_streaming_permission_and_file_read(stdio: StdioRig) -> None:
    client = stdio.client
    client.initialize()
    assert client.prompt(PromptRequest.text(SID, "stream 200")).stop_reason == "end_turn"
    assert texts(stdio.updates) == [str(i) for i in range(200)]
    del stdio.updates[:]
    client.prompt(PromptRequest.text(SID, "permission"))
    client.prompt(PromptRequest.text(SID, "read /tmp/ü.txt"))
    assert texts(stdio.updates) == [
        "permission:selected:allow",
        "read:contents of /tmp/ü.txt: ünïcödé",
    ]


def test_stdio_stop_signal_sends_one_session_cancel_and_returns_cancelled(
    stdio: StdioRig,
) -> None:
    client = stdio.client
    client.initialize()
    stop = CancellationSignal()
    answers: list[Any] = []
    done = threading.Event()
    client.async_client.prompt(PromptRequest.text(SID, "wait"), stop).subscribe(
        answers.append, on_completed=done.set
    )
    client.ext_method("_test/echo")  # the prompt reached the agent before this answer
    threading.Thread(target=stop.cancel).start()
    assert done.wait(30.0)
    stop.cancel()
    # the async answer does not wait for the sync client's consumer thread; the blocking
    # stats prompt does (it returns after everything before it was consumed)
    stats = stdio.stats()
    assert answers[0].stop_reason == "cancelled" and texts(stdio.updates)[0] == "after-cancel"
    assert stats[m.SESSION_CANCEL] == 1


def test_stdio_disposing_a_prompt_sends_session_cancel_and_cancel_request_once(
    stdio: StdioRig,
) -> None:
    client = stdio.client
    client.initialize()
    subscription = client.async_client.prompt(PromptRequest.text(SID, "hang")).subscribe()
    client.ext_method("_test/echo")  # the prompt is written before this round trip
    subscription.dispose()
    stats = stdio.stats()
    assert stats[CANCEL_REQUEST] == 1 and stats[m.SESSION_CANCEL] == 1


def test_an_initialize_timeout_says_what_the_agent_wrote_to_stderr() -> None:
    import sys

    from rxacp.errors import AcpTimeoutException
    from rxacp.transport import AgentParameters, StdioAcpClientTransport

    said = threading.Event()
    script = (
        "import sys, time\n"
        "print('error: OPENAI_API_KEY is not set', file=sys.stderr, flush=True)\n"
        "time.sleep(60)\n"
    )
    params = AgentParameters(sys.executable, ["-c", script], on_stderr_line=lambda line: said.set())
    client = AcpClient.sync(StdioAcpClientTransport(params)).request_timeout(0.5).build()
    try:
        client.session.start()
        assert said.wait(30), "the silent agent never wrote its stderr line"
        with pytest.raises(AcpTimeoutException) as excinfo:
            client.initialize()
        assert excinfo.value.stderr_tail is not None
        assert "OPENAI_API_KEY is not set" in excinfo.value.stderr_tail
        assert "initialize timed out after 0.5 s" in str(excinfo.value)
        assert "agent stderr tail" in str(excinfo.value)
    finally:
        client.close()
