"""The client→agent calls: each method-table call defined once, on both client surfaces."""

from __future__ import annotations

import inspect
from typing import Any, assert_type

import pytest

from rxacp.client import AcpAsyncClient, AcpSyncClient
from rxacp.client._plain_calls import OptionalRequest, PlainCalls, Request, SyncPlainCalls
from rxacp.schema import ListSessionsResponse, NewSessionResponse
from rxacp.schema import methods as m
from rxacp.schema.unstable import ForkSessionResponse
from rxacp.session import AcpObservable

from .conftest import Rig

AGENT_METHODS = [
    spec for spec in m.METHODS.values() if spec.side == "agent" and spec.kind == "request"
]
EXPLICIT = {m.INITIALIZE, m.SESSION_CLOSE, m.SESSION_PROMPT}  # behaviour of their own
PLAIN = [spec for spec in AGENT_METHODS if spec.name not in EXPLICIT]
OPTIONAL = [m.METHODS[n] for n in (m.LOGOUT, m.SESSION_LIST, m.PROVIDERS_LIST, m.AUTH_STATUS)]


@pytest.mark.parametrize("spec", AGENT_METHODS, ids=lambda s: s.python_name)
def test_every_agent_method_of_the_table_is_on_both_clients_with_the_same_signature(
    spec: m.MethodSpec,
) -> None:
    observable = inspect.signature(getattr(AcpAsyncClient, spec.python_name))
    blocking = inspect.signature(getattr(AcpSyncClient, spec.python_name))
    assert list(blocking.parameters) == list(observable.parameters)
    assert [p.default for p in blocking.parameters.values()] == [
        p.default for p in observable.parameters.values()
    ]


@pytest.mark.parametrize("spec", PLAIN, ids=lambda s: s.python_name)
def test_every_plain_call_is_one_table_descriptor_and_its_blocking_twin(
    spec: m.MethodSpec,
) -> None:
    call = PlainCalls.__dict__[spec.python_name]
    twin = SyncPlainCalls.__dict__[spec.python_name]
    assert call.spec is twin.spec is spec
    assert getattr(AcpAsyncClient, spec.python_name) is call
    assert getattr(AcpSyncClient, spec.python_name) is twin


@pytest.mark.parametrize("spec", PLAIN, ids=lambda s: s.python_name)
def test_a_call_may_be_made_without_a_request_exactly_when_its_model_has_no_required_field(
    spec: m.MethodSpec,
) -> None:
    required = [f for f in spec.params_type.model_fields.values() if f.is_required()]
    parameter = inspect.signature(getattr(AcpAsyncClient, spec.python_name)).parameters["request"]
    assert (parameter.default is None) == (not required)


@pytest.mark.parametrize("optional", OPTIONAL, ids=lambda s: s.python_name)
def test_a_call_made_without_a_request_sends_an_empty_one_and_returns_the_typed_answer(
    rig: Rig, optional: m.MethodSpec
) -> None:
    sync = rig.initialized_sync_client()
    answers = [
        getattr(sync, optional.python_name)(),
        getattr(sync.async_client, optional.python_name)().run(),
    ]
    assert optional.result_type is not None
    assert all(isinstance(answer, optional.result_type) for answer in answers)
    assert [sent["params"] for sent in rig.agent.messages(optional.name)] == [{}, {}]


@pytest.mark.parametrize("spec", PLAIN, ids=lambda s: s.python_name)
def test_the_calls_are_documented_from_the_method_table(spec: m.MethodSpec) -> None:
    for surface, form in ((AcpAsyncClient, "a cold Observable"), (AcpSyncClient, "blocks until")):
        doc = getattr(surface, spec.python_name).__doc__
        head = f"**Unstable.** ``{spec.name}``" if spec.unstable else f"``{spec.name}``"
        assert doc.startswith(head)
        assert form in doc
        if spec.capability:
            assert f"gated by ``{spec.capability}``" in doc


def test_a_call_whose_declared_types_disagree_with_the_table_is_refused_at_class_creation() -> None:
    namespace: dict[str, Any] = {
        "__annotations__": {"new_session": "Request[LoadSessionRequest, NewSessionResponse]"},
        "new_session": Request(m.SESSION_NEW),
    }
    with pytest.raises((TypeError, RuntimeError)) as info:  # 3.11 wraps it in RuntimeError
        type("Drifted", (), namespace)
    assert "session/new: the declared types disagree with the method table" in str(
        info.value.__cause__ or info.value
    )


def test_a_call_named_unlike_its_method_is_refused_at_class_creation() -> None:
    namespace: dict[str, Any] = {
        "__annotations__": {"list": "OptionalRequest[ListSessionsRequest, ListSessionsResponse]"},
        "list": OptionalRequest(m.SESSION_LIST),
    }
    with pytest.raises((TypeError, RuntimeError)) as info:
        type("Drifted", (), namespace)
    assert "Drifted.list: session/list is called list_sessions" in str(
        info.value.__cause__ or info.value
    )


def test_a_call_without_its_declared_types_is_refused_at_class_creation() -> None:
    with pytest.raises((TypeError, RuntimeError)) as info:
        type("Undeclared", (), {"new_session": Request(m.SESSION_NEW)})
    assert "declare it as `new_session: Request[Params, Result]" in str(
        info.value.__cause__ or info.value
    )


def _returns_are_typed(client: AcpAsyncClient, sync: AcpSyncClient) -> None:
    """Checked by mypy (``mypy --strict tests``), never run: the derived forms are typed."""
    assert_type(client.list_sessions(), AcpObservable[ListSessionsResponse])
    assert_type(sync.list_sessions(), ListSessionsResponse)
    assert_type(sync.new_session({"cwd": "/", "mcpServers": []}), NewSessionResponse)
    assert_type(sync.fork_session({"sessionId": "s", "cwd": "/"}), ForkSessionResponse)
