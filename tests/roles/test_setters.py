"""Typed handler setters from the method table (``rxacp.roles.builders``), for both roles.

This file is type-checked by ``mypy --strict`` (CI): the correctly typed handlers below pass,
and each wrongly typed one carries a ``type: ignore[arg-type]`` that mypy would report as
unused (``warn_unused_ignores``) if the setter accepted it — so the setters' typing is proven
statically, for the sync and the async builder of each role.
"""

from __future__ import annotations

from typing import Any

import pytest
import reactivex

from rxacp.agent import AcpAgent, AsyncAgentBuilder, PromptContext, SyncPromptContext
from rxacp.client import AcpClient, AcpSyncClientBuilder
from rxacp.roles.builders import BlockingBuilder, HandlerSetter
from rxacp.schema import (
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
)
from rxacp.schema import methods as m
from rxacp.testing.memory import InMemoryTransportPair


def new_session(request: NewSessionRequest) -> NewSessionResponse:
    return NewSessionResponse(session_id=f"s-{request.cwd}")


def new_session_rx(request: NewSessionRequest) -> reactivex.Observable[NewSessionResponse]:
    return reactivex.just(new_session(request))


def prompt(request: PromptRequest, context: SyncPromptContext) -> PromptResponse:
    context.send_message(f"echo {request.prompt_text()}")
    return PromptResponse.end_turn()


def prompt_rx(
    request: PromptRequest, context: PromptContext
) -> reactivex.Observable[PromptResponse]:
    return reactivex.just(PromptResponse.end_turn())


def read(request: ReadTextFileRequest) -> ReadTextFileResponse:
    return ReadTextFileResponse(content=f"contents of {request.path}")


def read_rx(request: ReadTextFileRequest) -> reactivex.Observable[ReadTextFileResponse]:
    return reactivex.just(read(request))


def test_correctly_typed_handlers_pass_the_type_checker_on_both_flavours_of_both_roles() -> None:
    pair = InMemoryTransportPair.create()
    sync_agent = AcpAgent.sync(pair.agent_transport).new_session_handler(new_session)
    sync_agent.prompt_handler(prompt).cancel_handler(lambda note: None)
    async_agent = AcpAgent.async_(pair.agent_transport).new_session_handler(new_session_rx)
    async_agent.new_session_handler(new_session).prompt_handler(prompt_rx)
    sync_client = AcpClient.sync(pair.client_transport).read_text_file_handler(read)
    async_client = AcpClient.async_(pair.client_transport).read_text_file_handler(read_rx)
    # each setter returns its own builder, so the chain keeps the flavour's typing
    assert type(sync_agent).__name__ == "SyncAgentBuilder"
    assert type(async_agent).__name__ == "AsyncAgentBuilder"
    assert isinstance(sync_client, BlockingBuilder)
    assert not isinstance(async_client, BlockingBuilder)


def test_wrongly_typed_handlers_are_refused_by_the_type_checker() -> None:
    pair = InMemoryTransportPair.create()
    sync_agent = AcpAgent.sync(pair.agent_transport)
    async_agent = AcpAgent.async_(pair.agent_transport)
    sync_client = AcpClient.sync(pair.client_transport)
    sync_agent.new_session_handler(read)  # type: ignore[arg-type]
    sync_agent.prompt_handler(prompt_rx)  # type: ignore[arg-type]
    async_agent.prompt_handler(prompt)  # type: ignore[arg-type]
    sync_client.read_text_file_handler(new_session)  # type: ignore[arg-type]
    # at run time a setter still takes any callable (the type checker is the guard)
    assert sync_agent.new_session_handler(lambda r: r) is sync_agent  # type: ignore[arg-type,return-value]


def test_a_typed_setter_registers_the_handler_that_answers_the_peer() -> None:
    pair = InMemoryTransportPair.create()
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(new_session)
        .prompt_handler(prompt)
        .build()
    )
    agent.start()
    updates: list[Any] = []
    client = AcpClient.sync(pair.client_transport).session_update_consumer(updates.append).build()
    try:
        client.initialize()
        assert client.new_session({"cwd": "/w", "mcpServers": []}).session_id == "s-/w"
        answer = client.prompt({"sessionId": "s-/w", "prompt": [{"type": "text", "text": "x"}]})
        assert answer.stop_reason == "end_turn"
    finally:
        client.close()
        agent.close()
    assert [u.update.content.text for u in updates] == ["echo x"]


def test_setters_are_named_and_documented_from_the_method_table() -> None:
    assert AsyncAgentBuilder.load_session_handler.__doc__ == (
        "Handle ``session/load`` (advertises ``loadSession`` by default)."
    )
    assert AcpSyncClientBuilder.read_text_file_handler.__doc__ == (
        "Handle ``fs/read_text_file`` (advertises ``fs.readTextFile`` by default)."
    )
    assert (AsyncAgentBuilder.fork_session_handler.__doc__ or "").startswith("Unstable: ")


def test_a_non_callable_handler_is_a_type_error_naming_the_setter() -> None:
    builder = AcpAgent.sync(InMemoryTransportPair.create().agent_transport)
    with pytest.raises(TypeError, match="new_session_handler takes a callable, not int"):
        builder.new_session_handler(3)  # type: ignore[arg-type]


def _declaring_error(declare: Any) -> str:
    """The error of declaring a class (``__set_name__``'s, which Python may wrap)."""
    with pytest.raises((TypeError, RuntimeError)) as caught:
        declare()
    error: BaseException = caught.value
    if isinstance(error, RuntimeError) and error.__cause__ is not None:
        error = error.__cause__
    assert isinstance(error, TypeError)
    return str(error)


def test_a_setter_whose_name_or_types_disagree_with_the_table_is_refused_when_declared() -> None:
    def misnamed() -> None:
        class Misnamed(BlockingBuilder):
            create_session_handler = HandlerSetter[NewSessionRequest, NewSessionResponse](
                m.SESSION_NEW
            )

    def mistyped() -> None:
        class Mistyped(BlockingBuilder):
            new_session_handler = HandlerSetter[PromptRequest, NewSessionResponse](m.SESSION_NEW)

    assert "session/new's setter is new_session_handler" in _declaring_error(misnamed)
    assert "disagree with the method table" in _declaring_error(mistyped)
