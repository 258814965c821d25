"""Tests of rxacp.errors: exception tree, exception_to_error and error_to_exception."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pydantic
import pytest

from rxacp.errors import (
    AcpCapabilityException,
    AcpConnectionException,
    AcpErrorCodes,
    AcpException,
    AcpProtocolException,
    AcpTimeoutException,
    error_to_exception,
    exception_to_error,
)
from rxacp.jsonrpc import ErrorResponse, error_obj, parse_message, serialize


class _Params(pydantic.BaseModel):
    session_id: str
    count: int


def _validation_error() -> pydantic.ValidationError:
    try:
        _Params.model_validate({"count": "not a number", "secret": "hunter2"})
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("validation should have failed")


def test_error_codes_match_the_spec_error_code_constants() -> None:
    schema_text = resources.files("rxacp").joinpath("schema/spec/schema.json").read_text("utf-8")
    spec = json.loads(schema_text)["$defs"]["ErrorCode"]["anyOf"]
    consts = {entry["const"] for entry in spec if "const" in entry}
    assert consts == {int(code) for code in AcpErrorCodes}


def test_protocol_exception_keeps_code_message_and_data() -> None:
    exc = AcpProtocolException(-32002, "no such file", {"path": "/x"})
    assert exception_to_error(exc) == {
        "code": -32002,
        "message": "no such file",
        "data": {"path": "/x"},
    }


def test_protocol_exception_without_data_omits_the_data_member() -> None:
    error = exception_to_error(AcpProtocolException(-32601, "Method not found: x"))
    assert error == {"code": -32601, "message": "Method not found: x"}


def test_protocol_exception_keeps_falsy_data_that_is_not_none() -> None:
    assert exception_to_error(AcpProtocolException(1, "m", 0))["data"] == 0


def test_enum_codes_are_written_as_plain_integers() -> None:
    error = exception_to_error(AcpProtocolException.request_cancelled())
    assert type(error["code"]) is int
    assert b'"code":-32800' in serialize(error)


@pytest.mark.parametrize(
    ("factory", "code"),
    [
        (lambda: AcpProtocolException.method_not_found("x/y", "register a handler"), -32601),
        (lambda: AcpProtocolException.invalid_params("bad"), -32602),
        (lambda: AcpProtocolException.invalid_request("bad"), -32600),
        (AcpProtocolException.internal_error, -32603),
        (AcpProtocolException.request_cancelled, -32800),
        (AcpProtocolException.auth_required, -32000),
        (AcpProtocolException.resource_not_found, -32002),
    ],
)
def test_protocol_exception_factories_use_the_spec_codes(factory: Any, code: int) -> None:
    assert exception_to_error(factory())["code"] == code


def test_method_not_found_message_names_method_and_hint() -> None:
    message = AcpProtocolException.method_not_found("fs/read_text_file", "register X").message
    assert "fs/read_text_file" in message and "register X" in message


def test_pydantic_validation_error_is_invalid_params_with_serializable_details() -> None:
    error = exception_to_error(_validation_error())
    assert error["code"] == -32602
    assert error["message"] == "Invalid params"
    locations = {tuple(item["loc"]) for item in error["data"]}
    assert locations == {("session_id",), ("count",)}
    wire = serialize(error_obj(1, error))  # JSON-serializable, no inputs echoed
    assert b"not a number" not in wire and b"hunter2" not in wire
    assert isinstance(parse_message(wire), ErrorResponse)


def test_generic_exception_is_internal_error_without_traceback() -> None:
    def fail() -> None:
        raise KeyError("missing")

    try:
        fail()
    except KeyError as exc:
        error = exception_to_error(exc)
    assert error["code"] == -32603
    assert "KeyError" in error["message"]
    assert "Traceback" not in error["message"] and ".py" not in error["message"]
    assert "data" not in error
    assert set(error) == {"code", "message"}


def test_generic_exception_is_named_by_type_and_its_text_is_not_sent() -> None:
    expected = "Internal error: RuntimeError (details logged, not sent)"
    assert exception_to_error(RuntimeError())["message"] == expected
    assert exception_to_error(RuntimeError("/home/me/secret"))["message"] == expected


def test_generic_exception_message_is_bounded() -> None:
    assert len(exception_to_error(ValueError("x" * 10_000))["message"]) <= 500


def test_capability_exception_is_internal_error_naming_the_capability() -> None:
    error = exception_to_error(AcpCapabilityException("fs.readTextFile"))
    assert error["code"] == -32603
    assert "fs.readTextFile" in error["message"]


def test_error_to_exception_reads_a_well_formed_error() -> None:
    exc = error_to_exception({"code": -32002, "message": "gone", "data": [1]})
    assert (exc.code, exc.message, exc.data) == (-32002, "gone", [1])


@pytest.mark.parametrize(
    "error",
    [None, "boom", 5, [], {}, {"code": "x"}, {"code": True, "message": 3}, {"message": None}],
)
def test_error_to_exception_tolerates_malformed_error_objects(error: Any) -> None:
    exc = error_to_exception(error)
    assert isinstance(exc, AcpProtocolException)
    assert type(exc.code) is int and exc.code == -32603
    assert isinstance(exc.message, str) and exc.message


def test_error_to_exception_keeps_the_code_when_only_the_message_is_bad() -> None:
    exc = error_to_exception({"code": -32601, "message": 1, "data": "d"})
    assert (exc.code, exc.message, exc.data) == (-32601, "Unknown error", "d")


def test_protocol_error_round_trips_through_the_wire() -> None:
    original = AcpProtocolException(-32000, "auth", {"methods": ["a"]})
    msg = parse_message(serialize(error_obj(7, exception_to_error(original))))
    assert isinstance(msg, ErrorResponse)
    back = error_to_exception(msg.error)
    assert (back.code, back.message, back.data) == (-32000, "auth", {"methods": ["a"]})


def test_every_exception_is_an_acp_exception() -> None:
    for exc in [
        AcpProtocolException(1, "m"),
        AcpCapabilityException("loadSession"),
        AcpConnectionException("eof"),
        AcpTimeoutException("session/new", 60),
    ]:
        assert isinstance(exc, AcpException)


def test_timeout_exception_is_a_builtin_timeout_error_naming_method_and_duration() -> None:
    exc = AcpTimeoutException("session/new", 1.5)
    assert isinstance(exc, TimeoutError)
    assert "session/new" in str(exc) and "1.5 s" in str(exc)
    with pytest.raises(TimeoutError):
        raise exc


def test_connection_exception_message_includes_exit_code_and_stderr_tail() -> None:
    exc = AcpConnectionException("agent exited", exit_code=3, stderr_tail="panic: boom")
    assert "agent exited" in str(exc)
    assert "exit code 3" in str(exc)
    assert "panic: boom" in str(exc)
    assert (exc.exit_code, exc.stderr_tail) == (3, "panic: boom")


def test_connection_exception_without_details_is_just_the_reason() -> None:
    assert str(AcpConnectionException("closed")) == "closed"


def test_protocol_exception_str_and_repr_show_code_and_message() -> None:
    exc = AcpProtocolException(-32602, "bad")
    assert str(exc) == "bad (code -32602)"
    assert "-32602" in repr(exc) and "'bad'" in repr(exc)


def test_protocol_exception_str_shows_the_data_agents_put_the_cause_in() -> None:
    data = {"details": "stream disconnected before completion: error sending request"}
    exc = AcpProtocolException(-32603, "Internal error", data)
    assert str(exc) == (
        'Internal error (code -32603); data: {"details": "stream disconnected before '
        'completion: error sending request"}'
    )
    assert str(AcpProtocolException(-32000, "Auth", "log in first")) == (
        "Auth (code -32000); data: log in first"
    )


def test_protocol_exception_str_cuts_long_data() -> None:
    exc = AcpProtocolException(-32603, "Internal error", {"details": "x" * 10_000})
    text = str(exc)
    assert len(text) < 700
    assert text.endswith("more characters)")


def test_timeout_exception_with_a_stderr_tail_survives_pickling() -> None:
    import pickle

    from rxacp.errors import AcpTimeoutException

    exc = pickle.loads(pickle.dumps(AcpTimeoutException("initialize", 2.0, stderr_tail="boom")))
    assert (exc.method, exc.timeout_seconds, exc.stderr_tail) == ("initialize", 2.0, "boom")
    assert "boom" in str(exc)
