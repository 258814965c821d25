"""Remote errors are not forwarded as the handler's own (issue 14 item 4).

When a handler's call to the peer fails because the peer answered an error, and the handler
lets it escape, its own request is answered ``-32603`` naming the failed call with the peer's
code and message in ``data``; the exception is an ``AcpRemoteException``. Errors a handler
raises itself keep their code.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from rxacp import AcpRemoteException
from rxacp.agent import AcpAgent, SyncAgentBuilder, SyncPromptContext
from rxacp.agent.support import AcpAgentSupport, acp_agent, prompt
from rxacp.client import AcpClient
from rxacp.errors import AcpErrorCodes, AcpProtocolException, exception_to_error
from rxacp.schema import (
    InitializeResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
)
from rxacp.testing.memory import InMemoryTransportPair

from .conftest import Rig, stdio_transport, texts

SID = "sess-1"
SECRET = "client-internal detail"


def test_an_escaping_remote_error_maps_to_32603_naming_the_call() -> None:
    remote = AcpRemoteException(-32002, "Resource not found: /x", {"p": 1}, "fs/read_text_file")
    error = exception_to_error(remote)
    assert error == {
        "code": AcpErrorCodes.INTERNAL_ERROR,
        "message": "Internal error: fs/read_text_file failed: the peer answered error -32002",
        "data": {
            "method": "fs/read_text_file",
            "peerError": {"code": -32002, "message": "Resource not found: /x"},
        },
    }
    own = exception_to_error(AcpProtocolException(-32002, "mine", {"k": 1}))
    assert own == {"code": -32002, "message": "mine", "data": {"k": 1}}


def test_a_remote_exception_is_a_protocol_exception_that_survives_pickling() -> None:
    remote = AcpRemoteException(-32601, "Method not found", None, "_x/y")
    assert isinstance(remote, AcpProtocolException)
    copy = pickle.loads(pickle.dumps(remote))
    assert type(copy) is AcpRemoteException and copy.method == "_x/y" and copy.code == -32601
    assert repr(copy).startswith("AcpRemoteException(code=-32601")


# ---------------------------------------------------------------------------- the client side
def test_requests_the_agent_answers_with_an_error_emit_a_remote_exception(rig: Rig) -> None:
    client = rig.async_builder().build()
    rig.on_close(client.close)
    with pytest.raises(AcpRemoteException) as caught:
        client.ext_method("_nope/missing").run()
    assert caught.value.code == AcpErrorCodes.METHOD_NOT_FOUND
    assert caught.value.method == "_nope/missing"


@pytest.fixture(params=["memory", "stdio"])
def ext_client(request: pytest.FixtureRequest, rig: Rig) -> Iterator[tuple[Any, list[Any]]]:
    """A client whose ``_test/ping`` handler calls the agent's unknown ``_nope/missing`` and
    lets the agent's -32601 escape."""
    updates: list[Any] = []
    holder: dict[str, Any] = {}

    def ping(params: Any) -> Any:
        return holder["client"].ext_method("_nope/missing")

    builder = (
        rig.async_builder() if request.param == "memory" else AcpClient.async_(stdio_transport())
    )
    client = (
        builder.session_update_consumer(updates.append).ext_request_handler("_test/ping", ping)
    ).build()
    holder["client"] = client
    yield client, updates
    client.close()


def test_a_client_handler_letting_the_agents_error_escape_answers_32603_naming_the_call(
    ext_client: tuple[Any, list[Any]],
) -> None:
    client, updates = ext_client
    client.initialize().run()
    client.prompt(PromptRequest.text(SID, "ext")).run()
    (report,) = texts(updates)
    assert report.startswith("error:-32603:Internal error: _nope/missing failed")
    assert "the peer answered error -32601" in report


# ---------------------------------------------------------------------------- the agent side
def _client(pair: InMemoryTransportPair) -> Any:
    def read(req: ReadTextFileRequest) -> Any:
        raise AcpProtocolException(-32002, f"no such file ({SECRET})", {"internal": SECRET})

    return AcpClient.sync(pair.client_transport).read_text_file_handler(read).build()


def _prompt_error(client: Any, text: str) -> AcpProtocolException:
    client.initialize()
    with pytest.raises(AcpProtocolException) as caught:
        client.prompt(PromptRequest.text(SID, text))
    return caught.value


@pytest.mark.parametrize("api", ["sync", "async"])
def test_an_agent_handler_letting_the_clients_error_escape_answers_32603_not_the_clients_error(
    api: str,
) -> None:
    pair = InMemoryTransportPair.create()
    seen: list[BaseException] = []

    def sync_prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        if req.prompt_text() == "own":
            raise AcpProtocolException(-32002, "my own not-found", {"mine": True})
        try:
            ctx.read_file("/missing")
        except AcpRemoteException as exc:
            seen.append(exc)
            raise
        return PromptResponse.end_turn()

    def async_prompt(req: PromptRequest, ctx: Any) -> Any:
        if req.prompt_text() == "own":
            raise AcpProtocolException(-32002, "my own not-found", {"mine": True})
        return ctx.read_file("/missing")

    end = pair.agent_transport
    builder = AcpAgent.sync(end) if api == "sync" else AcpAgent.async_(end)
    builder.initialize_handler(lambda req: InitializeResponse.ok())
    if isinstance(builder, SyncAgentBuilder):
        builder.prompt_handler(sync_prompt)
    else:
        builder.prompt_handler(async_prompt)
    agent = builder.build()
    agent.start()
    client = _client(pair)
    try:
        error = _prompt_error(client, "read")
        assert error.code == AcpErrorCodes.INTERNAL_ERROR
        assert error.message == (
            "Internal error: fs/read_text_file failed: the peer answered error -32002"
        )
        assert error.data == {
            "method": "fs/read_text_file",
            "peerError": {"code": -32002, "message": f"no such file ({SECRET})"},
        }
        assert "data" not in error.data["peerError"]  # the client's data is not echoed back
        if api == "sync":
            assert isinstance(seen[0], AcpRemoteException)
            assert seen[0].method == "fs/read_text_file"
        own = _prompt_error(client, "own")
        assert (own.code, own.data) == (-32002, {"mine": True})  # a handler's own error keeps it
    finally:
        client.close()
        agent.close()


def test_a_decorated_agent_letting_a_remote_error_escape_answers_32603() -> None:
    pair = InMemoryTransportPair.create()

    @acp_agent(name="reader", version="1")
    class Reader:
        @prompt
        def answer(self, req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
            ctx.read_file("/missing")
            return PromptResponse.end_turn()

    agent = AcpAgentSupport.create(Reader()).transport(pair.agent_transport).start()
    client = _client(pair)
    try:
        error = _prompt_error(client, "read")
        assert error.code == AcpErrorCodes.INTERNAL_ERROR
        assert error.data["method"] == "fs/read_text_file"
        assert error.data["peerError"]["code"] == -32002
    finally:
        client.close()
        agent.close()
