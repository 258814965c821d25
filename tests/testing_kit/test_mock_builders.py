"""Test-kit parity with the Java kit (issue 19.6): ``MockAcpAgent.builder()``,
``MockAcpClient.builder()`` with the Java methods in snake_case, and
``MockAcpAgent.send_session_update``."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.schema import (
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
)
from rxacp.testing import MockAcpAgent, MockAcpClient

from .._notes import chunk_text

pytestmark = pytest.mark.timeout(30)


def test_the_agent_builder_scripts_initialize_new_session_and_prompts() -> None:
    mock = (
        MockAcpAgent.builder()
        .initialize_response(InitializeResponse.ok(agent_info={"name": "java-ish", "version": "9"}))
        .new_session_response(NewSessionResponse(session_id="mock-session"))
        .prompt_response(lambda req: PromptResponse.of("max_tokens"))
        .request_timeout(3)
        .build()
        .start()
    )
    updates: list[Any] = []
    with mock:
        builder = AcpClient.sync(mock.client_transport).session_update_consumer(updates.append)
        client = builder.build()
        init = client.initialize()
        assert init.agent_info is not None and init.agent_info.name == "java-ish"
        sid = client.new_session(NewSessionRequest.of("/w")).session_id
        assert sid == "mock-session"
        assert client.prompt(PromptRequest.text(sid, "hi")).stop_reason == "max_tokens"
        client.cancel(sid)
        mock.expect_received("session/cancel")
        assert [r.protocol_version for r in mock.get_received_init_requests()] == [1]
        assert [r.cwd for r in mock.get_received_new_session_requests()] == ["/w"]
        assert [p.prompt_text() for p in mock.get_received_prompts()] == ["hi"]
        assert [c.session_id for c in mock.get_received_cancellations()] == [sid]
        client.close()


def test_send_session_update_reaches_the_client_outside_any_turn() -> None:
    received: list[Any] = []
    arrived = threading.Event()

    def consume(note: Any) -> None:
        received.append(note)
        arrived.set()

    with MockAcpAgent.create_default() as mock:
        client = AcpClient.sync(mock.client_transport).session_update_consumer(consume).build()
        client.initialize()
        sid = client.new_session(NewSessionRequest.of("/w")).session_id
        mock.send_session_update(sid, "replayed history")
        assert arrived.wait(10)
        assert received[0].session_id == sid
        assert received[0].update.content.text == "replayed history"
        with pytest.raises(ValueError, match="session_id"):
            mock.send_session_update("", "x")
        client.close()


def _echo_agent(transport: Any) -> Any:
    def prompt(req: PromptRequest, ctx: Any) -> PromptResponse:
        text = req.prompt_text()
        if text.startswith("read "):
            ctx.send_message(ctx.read_file(text[5:]))
        elif text.startswith("write "):
            ctx.write_file(text[6:], "new content")
            ctx.send_message("written")
        else:
            ctx.send_message("allowed" if ctx.ask_permission("do it?") else "refused")
        return PromptResponse.end_turn()

    return (
        AcpAgent.sync(transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(prompt)
    )


def test_the_client_builder_answers_permissions_and_files_the_java_way() -> None:
    writes: list[str] = []
    builder = (
        MockAcpClient.builder()
        .permission_response(lambda req: RequestPermissionResponse.selected("allow"))
        .file_content("/a.txt", "A")
        .read_file_response(lambda req: ReadTextFileResponse(content=f"other {req.path}"))
        .write_file_response(lambda req: writes.append(req.path))
        .request_timeout(3)
        .timeout(5)
    )
    client = builder.build()
    from rxacp.testing import start_agent

    agent = start_agent(_echo_agent, client.agent_transport)
    try:
        assert client.prompt("permission").stop_reason == "end_turn"
        assert client.text().endswith("allowed")
        client.prompt("read /a.txt")
        client.prompt("read /b.txt")
        client.prompt("write /c.txt")
        texts = [chunk_text(u) for u in client.get_received_updates()]
        assert texts[-3:] == ["A", "other /b.txt", "written"]
        assert [r.path for r in client.get_received_file_read_requests()] == ["/a.txt", "/b.txt"]
        assert [r.path for r in client.get_received_file_write_requests()] == ["/c.txt"]
        assert writes == ["/c.txt"]
        assert len(client.get_received_permission_requests()) == 1
        assert client.get_current_session_id() == client.session_id
    finally:
        client.close_gracefully()
        agent.close()


def test_the_client_builder_never_auto_approves_by_default() -> None:
    from rxacp.testing import start_agent

    client = MockAcpClient.builder().build()
    agent = start_agent(_echo_agent, client.agent_transport)
    try:
        client.prompt("permission")
        assert client.text().endswith("refused")
    finally:
        client.close()
        agent.close()


def test_builders_check_their_arguments() -> None:
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="callable"):
        MockAcpAgent.builder().prompt_response("end_turn")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="absolute"):
        MockAcpClient.builder().file_content("relative.txt", "x")
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="callable"):
        MockAcpClient.builder().permission_response("allow")  # type: ignore[arg-type]
