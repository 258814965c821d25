"""Six ``ConvenienceApiTest`` tests (Java SDK 0.16.0-SNAPSHOT) ported line by line: the client
half here, the agent half in ``convenience_agents.py``; each runs over the in-memory pair (as in
Java) and over stdio (the agent in its own process). Java lines are in comments above their port.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import reactivex

from rxacp import AcpClient
from rxacp.schema import (
    ClientCapabilities,
    FileSystemCapability,
    InitializeRequest,
    NewSessionRequest,
    PermissionSelected,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    TextContent,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from rxacp.testing import InMemoryTransportPair
from rxacp.transport import AcpTransport

from .conftest import stdio_transport
from .convenience_agents import AGENTS, TIMEOUT, AtomicReference

pytestmark = pytest.mark.timeout(60)


@dataclass
class Rig:
    """What a test gets: the client transport, and the agent's captured value."""

    transport: AcpTransport
    captured: AtomicReference


@pytest.fixture(params=["memory", "stdio"])
def over(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.contextmanager
def _rig(over: str, name: str) -> Iterator[Rig]:
    # @BeforeEach void setUp() { transportPair = InMemoryTransportPair.create(); }
    captured = AtomicReference()
    if over == "stdio":

        def stderr(line: str) -> None:
            if line.startswith("captured "):
                captured.set(json.loads(line.removeprefix("captured ")))

        yield Rig(
            stdio_transport("tests.from_java.convenience_agents", name, stderr=stderr), captured
        )
        return
    transport_pair = InMemoryTransportPair.create()
    agent = AGENTS[name](transport_pair.agent_transport, captured)
    agent.start()  # agent.start();  (Thread.sleep(100) is not needed: start returns once started)
    try:
        yield Rig(transport_pair.client_transport, captured)
    finally:
        agent.close_gracefully()  # agent.closeGracefully();
        # @AfterEach void tearDown() { transportPair.closeGracefully().block(TIMEOUT); }
        transport_pair.close_gracefully().block(TIMEOUT)


def _run(rig: Rig, session_id: str, client: Any, caps: ClientCapabilities) -> None:
    # client.initialize(new InitializeRequest(1, clientCaps)).block(TIMEOUT);
    client.initialize(InitializeRequest(protocol_version=1, client_capabilities=caps)).block(
        TIMEOUT
    )
    # client.newSession(new NewSessionRequest("/workspace", List.of())).block(TIMEOUT);
    client.new_session(NewSessionRequest(cwd="/workspace", mcp_servers=[])).block(TIMEOUT)
    # client.prompt(new PromptRequest("file-session",
    #     List.of(new TextContent("test")))).block(TIMEOUT);
    client.prompt(PromptRequest(session_id=session_id, prompt=[TextContent(text="test")])).block(
        TIMEOUT
    )


def _read_caps() -> ClientCapabilities:
    # FileSystemCapability fsCaps = new FileSystemCapability(true, false);
    fs_caps = FileSystemCapability(read_text_file=True, write_text_file=False)
    # ClientCapabilities clientCaps = new ClientCapabilities(fsCaps, false);
    return ClientCapabilities(fs=fs_caps, terminal=False)


def test_read_file_returns_file_content(over: str) -> None:
    with _rig(over, "read_file") as rig:
        # .readTextFileHandler(req -> { assertThat(req.path()).isEqualTo("/path/to/file.txt");
        #     return Mono.just(new ReadTextFileResponse("File content here")); })
        def read_handler(req: ReadTextFileRequest) -> reactivex.Observable[ReadTextFileResponse]:
            assert req.path == "/path/to/file.txt"
            return reactivex.just(ReadTextFileResponse(content="File content here"))

        # AcpAsyncClient client = AcpClient.async(transportPair.clientTransport())
        #     .requestTimeout(TIMEOUT).readTextFileHandler(...).build();
        client = (
            AcpClient.async_(rig.transport)
            .request_timeout(TIMEOUT)
            .read_text_file_handler(read_handler)
            .build()
        )
        _run(rig, "file-session", client, _read_caps())
        # assertThat(readContent.get()).isEqualTo("File content here");
        assert rig.captured.get() == "File content here"
        # client.closeGracefully().block(TIMEOUT);
        client.close_gracefully().block(TIMEOUT)


def test_write_file_writes_content(over: str) -> None:
    with _rig(over, "write_file") as rig:
        written_path = AtomicReference()  # AtomicReference<String> writtenPath = ...
        written_content = AtomicReference()

        # .writeTextFileHandler(req -> { writtenPath.set(req.path());
        #     writtenContent.set(req.content()); return Mono.just(new WriteTextFileResponse()); })
        def write_handler(req: WriteTextFileRequest) -> reactivex.Observable[WriteTextFileResponse]:
            written_path.set(req.path)
            written_content.set(req.content)
            return reactivex.just(WriteTextFileResponse())

        client = (
            AcpClient.async_(rig.transport)
            .request_timeout(TIMEOUT)
            .write_text_file_handler(write_handler)
            .build()
        )
        # FileSystemCapability fsCaps = new FileSystemCapability(false, true);
        fs_caps = FileSystemCapability(read_text_file=False, write_text_file=True)
        _run(rig, "write-session", client, ClientCapabilities(fs=fs_caps, terminal=False))
        # assertThat(writtenPath.get()).isEqualTo("/output/result.txt");
        assert written_path.get() == "/output/result.txt"
        # assertThat(writtenContent.get()).isEqualTo("Generated content");
        assert written_content.get() == "Generated content"
        assert rig.captured.get() == "written"
        client.close_gracefully().block(TIMEOUT)


def test_try_read_file_returns_empty_on_error(over: str) -> None:
    with _rig(over, "try_read_file") as rig:
        # .readTextFileHandler(req -> Mono.error(new RuntimeException("File not found")))
        client = (
            AcpClient.async_(rig.transport)
            .request_timeout(TIMEOUT)
            .read_text_file_handler(lambda req: reactivex.throw(RuntimeError("File not found")))
            .build()
        )
        _run(rig, "try-read-session", client, _read_caps())
        # assertThat(resultPresent.get()).isFalse();
        assert rig.captured.get() is False
        client.close_gracefully().block(TIMEOUT)


@pytest.mark.parametrize(
    ("agent", "session_id", "option", "title", "expected"),
    [
        ("ask_permission_allowed", "perm-session", "allow", "Delete file?", True),
        ("ask_permission_denied", "deny-session", "deny", "Dangerous action?", False),
    ],
    ids=["askPermissionReturnsTrueWhenAllowed", "askPermissionReturnsFalseWhenDenied"],
)
def test_ask_permission(
    over: str, agent: str, session_id: str, option: str, title: str, expected: bool
) -> None:
    with _rig(over, agent) as rig:
        seen_titles: list[str | None] = []

        # .requestPermissionHandler(req -> { assertThat(req.toolCall().title()).isEqualTo(..);
        #     return Mono.just(new RequestPermissionResponse(new PermissionSelected("allow"))); })
        def permission(req: RequestPermissionRequest) -> Any:
            seen_titles.append(req.tool_call.title)
            return reactivex.just(
                RequestPermissionResponse(outcome=PermissionSelected(option_id=option))
            )

        client = (
            AcpClient.async_(rig.transport)
            .request_timeout(TIMEOUT)
            .request_permission_handler(permission)
            .build()
        )
        _run(rig, session_id, client, ClientCapabilities())
        # assertThat(permissionResult.get()).isTrue();  /  .isFalse();
        assert rig.captured.get() is expected
        assert seen_titles == [title]
        client.close_gracefully().block(TIMEOUT)


def test_ask_choice_returns_selected_option(over: str) -> None:
    with _rig(over, "ask_choice") as rig:
        seen: list[list[str]] = []

        # .requestPermissionHandler(req -> { assertThat(req.options()).hasSize(3); ...
        #     return Mono.just(new RequestPermissionResponse(new PermissionSelected("1"))); })
        def permission(req: RequestPermissionRequest) -> Any:
            seen.append([option.name for option in req.options])
            return reactivex.just(
                RequestPermissionResponse(outcome=PermissionSelected(option_id="1"))
            )

        client = (
            AcpClient.async_(rig.transport)
            .request_timeout(TIMEOUT)
            .request_permission_handler(permission)
            .build()
        )
        _run(rig, "choice-session", client, ClientCapabilities())
        # assertThat(choiceResult.get()).isEqualTo("Skip");
        assert rig.captured.get() == "Skip"
        assert seen == [["Overwrite", "Skip", "Cancel"]]
        client.close_gracefully().block(TIMEOUT)
