"""The one handler adapter: both roles parse params, fill empty results and hint the same way."""

from __future__ import annotations

from typing import Any, cast

import pytest
import reactivex

from rxacp.errors import AcpProtocolException
from rxacp.roles.handlers import (
    capabilities_from_handlers,
    request_handler,
    unhandled_hint,
)
from rxacp.schema import AgentCapabilities, ClientCapabilities
from rxacp.schema.methods import METHODS
from rxacp.session import IncomingRequest


class _Req:
    """The part of ``IncomingRequest`` a handler uses; records a direct answer (the fast path
    of plain values and of Observables that settle while subscribed)."""

    def __init__(self, params: Any) -> None:
        self.params = params
        self.answers: list[Any] = []

    def respond(self, result: Any) -> bool:
        self.answers.append(result)
        return True

    def respond_error(self, error: Any) -> bool:
        self.answers.append(error)
        return True


def _answer(method: str, fn: Any, params: Any) -> Any:
    handle = request_handler(cast(Any, None), METHODS[method], fn, blocking=False)
    req = _Req(params)
    try:
        source = handle(cast(IncomingRequest, req))
    except AcpProtocolException as exc:
        if exc.code == -32602:
            raise
        return exc  # answered by the engine with this error
    if source is None:
        return req.answers[0]
    out: list[Any] = []
    source.subscribe(out.append, out.append)
    return out[0]


@pytest.mark.parametrize(
    ("method", "params", "where"),
    [
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]}, "prompt.0"),
        ("fs/read_text_file", {"sessionId": "s"}, "path"),
    ],
)
def test_invalid_params_name_the_field_on_either_side(method: str, params: Any, where: str) -> None:
    with pytest.raises(AcpProtocolException) as caught:
        _answer(method, lambda _p: None, params)
    assert caught.value.code == -32602
    assert caught.value.message.startswith(f"Invalid params: {where}")


def test_none_answers_the_empty_response_or_an_error_naming_the_handler() -> None:
    empty = _answer("session/set_mode", lambda _p: None, {"sessionId": "s", "modeId": "m"})
    assert empty.to_wire() == {}
    error = _answer("fs/read_text_file", lambda _p: None, {"sessionId": "s", "path": "/x"})
    assert isinstance(error, AcpProtocolException) and error.code == -32603
    assert "fs/read_text_file handler" in error.message
    assert "ReadTextFileResponse has required fields" in error.message


def test_a_before_hook_runs_with_parsed_params_and_its_cleanup_after_the_answer() -> None:
    events: list[str] = []

    def before(_req: IncomingRequest, params: Any) -> Any:
        events.append(f"before {params.path}")
        return lambda: events.append("cleanup")

    handle = request_handler(
        cast(Any, None),
        METHODS["fs/read_text_file"],
        lambda p: reactivex.of({"content": "x"}),
        blocking=False,
        before=before,
    )
    req = _Req({"sessionId": "s", "path": "/a"})
    assert handle(cast(IncomingRequest, req)) is None  # settled while subscribed: answered
    assert events == ["before /a", "cleanup"]
    assert req.answers == [{"content": "x"}]


def test_a_pending_observable_answers_later_and_its_cleanup_runs_after_the_answer() -> None:
    from reactivex.subject import Subject

    events: list[str] = []
    later: Subject[Any] = Subject()
    handle = request_handler(
        cast(Any, None),
        METHODS["fs/read_text_file"],
        lambda p: later,
        blocking=False,
        before=lambda _r, _p: lambda: events.append("cleanup"),
    )
    source = handle(cast(IncomingRequest, _Req({"sessionId": "s", "path": "/a"})))
    assert source is not None
    out: list[Any] = []
    source.subscribe(out.append)
    assert out == [] and events == []
    later.on_next({"content": "late"})
    assert out == [{"content": "late"}] and events == ["cleanup"]


def test_unhandled_hints_name_the_builder_call_for_each_role() -> None:
    assert "AcpAgent builder .load_session_handler(fn)" in (
        unhandled_hint("agent")("session/load") or ""
    )
    assert "AcpClient builder .read_text_file_handler(fn)" in (
        unhandled_hint("client")("fs/read_text_file") or ""
    )
    assert "ext_request_handler('_x/y', fn)" in (unhandled_hint("client")("_x/y") or "")
    assert unhandled_hint("agent")("nope/never") is None


def test_capabilities_come_from_the_method_tables_paths_with_the_schemas_field_kinds() -> None:
    agent = capabilities_from_handlers(
        [METHODS["session/load"], METHODS["session/list"], METHODS["logout"]], AgentCapabilities
    )
    assert agent == {
        "loadSession": True,
        "sessionCapabilities": {"list": {}},
        "auth": {"logout": {}},
    }
    client = capabilities_from_handlers([METHODS["fs/read_text_file"]], ClientCapabilities)
    assert client == {"fs": {"readTextFile": True}}
