"""Tests of rxacp.jsonrpc: classification rules, parse errors, serialization, round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxacp.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    Message,
    Notification,
    ParseError,
    Request,
    Response,
    classify,
    decode_json,
    error_obj,
    notification_obj,
    parse_message,
    request_obj,
    response_obj,
    serialize,
)

ID_VALUES: list[Any] = [0, 1, -7, 2**53 + 1, 2**70, -(2**70), "", "abc", "1", "ünï", None]


def _line(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _invalid(frame: Any) -> InvalidMessage:
    with pytest.raises(InvalidMessage) as info:
        parse_message(frame)
    return info.value


# --------------------------------------------------------------------------- happy paths


@pytest.mark.parametrize("id_", ID_VALUES)
def test_request_ids_of_every_type_are_kept_with_their_exact_type(id_: Any) -> None:
    msg = parse_message(_line({"jsonrpc": "2.0", "id": id_, "method": "m", "params": {}}))
    assert isinstance(msg, Request)
    assert msg == Request(id_, "m", {})
    assert type(msg.id) is type(id_)


@pytest.mark.parametrize("id_", ID_VALUES)
def test_response_ids_of_every_type_are_echoed_with_their_exact_type(id_: Any) -> None:
    wire = serialize(response_obj(id_, {"ok": True}))
    assert json.loads(wire)["id"] == id_
    msg = parse_message(wire)
    assert isinstance(msg, Response)
    assert msg == Response(id_, {"ok": True})
    assert type(msg.id) is type(id_)


def test_large_integer_id_is_written_back_digit_for_digit() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":1180591620717411303424,"method":"m"}')
    assert isinstance(msg, Request)
    assert b'"id":1180591620717411303424' in serialize(
        error_obj(msg.id, {"code": 1, "message": "x"})
    )


def test_request_without_params_has_params_none() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"method":"a"}') == Request(1, "a", None)


def test_params_array_is_accepted() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"method":"a","params":[1,2]}') == Request(
        1, "a", [1, 2]
    )


def test_message_without_id_key_is_a_notification() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","method":"session/update","params":{"a":1}}')
    assert msg == Notification("session/update", {"a": 1})


def test_null_id_with_method_is_a_request_answered_with_null() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":null,"method":"m"}')
    assert msg == Request(None, "m", None)


def test_result_null_is_a_response_with_result_none() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":3,"result":null}') == Response(3, None)


def test_error_response_keeps_code_message_and_data() -> None:
    error = {"code": -32002, "message": "nope", "data": {"uri": "x"}}
    msg = parse_message(_line({"jsonrpc": "2.0", "id": "r1", "error": error}))
    assert msg == ErrorResponse("r1", error)


def test_error_response_with_null_id_is_classified() -> None:
    error = {"code": -32700, "message": "Parse error"}
    assert parse_message(_line({"jsonrpc": "2.0", "id": None, "error": error})) == ErrorResponse(
        None, error
    )


def test_str_and_already_decoded_frames_are_accepted() -> None:
    obj = {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert parse_message(json.dumps(obj)) == Request(1, "m", None)
    assert parse_message(obj) == Request(1, "m", None)
    assert parse_message(bytearray(_line(obj))) == Request(1, "m", None)
    assert classify(obj) == Request(1, "m", None)


def test_crlf_terminated_line_is_accepted() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","method":"m"}\r') == Notification("m", None)


def test_duplicate_keys_last_one_wins() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b"}')
    assert msg == Request(2, "b", None)


def test_huge_numbers_in_params_are_kept_exactly() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","method":"m","params":[123456789012345678901234567890]}')
    assert msg == Notification("m", [123456789012345678901234567890])


def test_extra_members_are_ignored_and_method_wins_over_result() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","result":5,"x":1}')
    assert msg == Request(1, "m", None)


def test_unicode_text_survives_parse() -> None:
    msg = parse_message('{"jsonrpc":"2.0","method":"m","params":["héllo ✓ 😀"]}'.encode())
    assert msg == Notification("m", ["héllo ✓ 😀"])


# --------------------------------------------------------------------------- ParseError


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"\xff\xfe{}", id="invalid-utf8"),
        pytest.param(b'{"jsonrpc":"2.0","method":"\xed\xa0\x80"}', id="utf8-encoded-surrogate"),
        pytest.param(b'{"jsonrpc":"2.0","method":"m"', id="truncated"),
        pytest.param(b'{"jsonrpc":"2.0",', id="truncated-mid-object"),
        pytest.param(b"", id="empty-line"),
        pytest.param(b"   ", id="blank-line"),
        pytest.param(b"[" * 100000, id="deep-nesting-100000"),
        pytest.param(b'{"a":' * 100000, id="deep-object-nesting"),
        pytest.param(b"NaN", id="nan"),
        pytest.param(b'{"jsonrpc":"2.0","method":"m","params":[Infinity]}', id="infinity"),
        pytest.param(b'{"jsonrpc":"2.0","method":"m","params":[-Infinity]}', id="neg-infinity"),
        pytest.param(b'{"jsonrpc":"2.0","method":"m"} {}', id="two-values"),
        pytest.param(b"{'jsonrpc':'2.0'}", id="single-quotes"),
        pytest.param(b"\xef\xbb\xbf{}", id="utf8-bom"),
        pytest.param(b"[" + b"1" * 5000 + b"]", id="int-over-digit-limit"),
        pytest.param("{not json}", id="str-frame"),
    ],
)
def test_unparseable_frames_raise_parse_error(frame: bytes | str) -> None:
    with pytest.raises(ParseError) as info:
        parse_message(frame)
    assert info.value.reason
    assert info.value.to_error()["code"] == -32700


def test_invalid_utf8_error_names_the_byte_offset() -> None:
    with pytest.raises(ParseError, match="invalid UTF-8 at byte 3"):
        decode_json(b'"ab\xc3"')


def test_nan_error_names_the_literal() -> None:
    with pytest.raises(ParseError, match="NaN"):
        decode_json(b"[NaN]")


def test_decode_json_rejects_non_text_types_with_type_error() -> None:
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="bytes or str"):
        decode_json(5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- InvalidMessage


@pytest.mark.parametrize(
    "value",
    [
        pytest.param([], id="empty-batch"),
        pytest.param([{"jsonrpc": "2.0", "id": 1, "method": "m"}], id="batch"),
        pytest.param(5, id="number"),
        pytest.param("text", id="string"),
        pytest.param(None, id="null"),
        pytest.param(True, id="bool"),
        pytest.param({}, id="empty-object"),
        pytest.param({"jsonrpc": "2.0"}, id="only-version"),
        pytest.param({"foo": 1}, id="unrelated-object"),
    ],
)
def test_non_messages_are_answerable_invalid_messages_with_null_id(value: Any) -> None:
    error = _invalid(_line(value))
    assert error.answerable is True
    assert error.id is None
    assert error.to_error()["code"] == -32600


def test_batch_reason_says_batches_are_not_supported() -> None:
    assert "batch" in _invalid(b"[]").reason


@pytest.mark.parametrize(
    "id_",
    [
        pytest.param(1.5, id="float"),
        pytest.param(1.0, id="integral-float"),
        pytest.param(True, id="bool"),
        pytest.param([1], id="array"),
        pytest.param({"a": 1}, id="object"),
    ],
)
def test_request_with_bad_id_type_is_answerable_with_null_id(id_: Any) -> None:
    error = _invalid(_line({"jsonrpc": "2.0", "id": id_, "method": "m"}))
    assert (error.answerable, error.id) == (True, None)
    assert "id" in error.reason


@pytest.mark.parametrize("version", ["1.0", 2.0, None, "2"])
def test_wrong_jsonrpc_version_on_request_is_answered_with_its_id(version: Any) -> None:
    error = _invalid(_line({"jsonrpc": version, "id": 9, "method": "m"}))
    assert (error.answerable, error.id) == (True, 9)
    assert "jsonrpc" in error.reason


def test_missing_jsonrpc_member_on_request_is_answered_with_its_id() -> None:
    error = _invalid(b'{"id":"x","method":"m"}')
    assert (error.answerable, error.id) == (True, "x")


def test_wrong_jsonrpc_version_on_notification_is_not_answerable() -> None:
    error = _invalid(b'{"jsonrpc":"1.0","method":"m"}')
    assert error.answerable is False


@pytest.mark.parametrize("params", [None, 1, "s", True])
def test_scalar_or_null_params_on_request_are_answered_with_its_id(params: Any) -> None:
    error = _invalid(_line({"jsonrpc": "2.0", "id": 4, "method": "m", "params": params}))
    assert (error.answerable, error.id) == (True, 4)
    assert "params" in error.reason


def test_scalar_params_on_notification_are_not_answerable() -> None:
    error = _invalid(b'{"jsonrpc":"2.0","method":"m","params":3}')
    assert (error.answerable, error.id) == (False, None)


@pytest.mark.parametrize("method", [1, None, ["m"], {"m": 1}])
def test_non_string_method_is_invalid(method: Any) -> None:
    error = _invalid(_line({"jsonrpc": "2.0", "id": 5, "method": method}))
    assert (error.answerable, error.id) == (True, 5)
    assert "method" in error.reason
    assert _invalid(_line({"jsonrpc": "2.0", "method": method})).answerable is False


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"jsonrpc": "2.0", "id": 1}, id="neither-result-nor-error"),
        pytest.param({"jsonrpc": "2.0", "result": 1}, id="no-id"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "m"}},
            id="both",
        ),
        pytest.param({"jsonrpc": "1.0", "id": 1, "result": 1}, id="wrong-version"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5, "result": 1}, id="float-id"),
        pytest.param({"jsonrpc": "2.0", "id": False, "result": 1}, id="bool-id"),
    ],
)
def test_malformed_responses_are_never_answerable(obj: dict[str, Any]) -> None:
    assert _invalid(_line(obj)).answerable is False


def test_malformed_response_with_valid_id_reports_that_id() -> None:
    error = _invalid(b'{"jsonrpc":"2.0","id":12}')
    assert (error.answerable, error.id) == (False, 12)


def test_an_error_answer_without_an_id_reads_as_id_null() -> None:
    # codex-acp answers the $/cancel_request notification this way
    msg = parse_message(b'{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}')
    assert msg == ErrorResponse(None, {"code": -32601, "message": "Method not found"})


def test_error_null_beside_result_counts_as_absent() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":1,"result":7,"error":null}')
    assert msg == Response(1, 7)


def test_result_null_beside_error_is_an_error_response() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":5,"message":"m"}}')
    assert msg == ErrorResponse(1, {"code": 5, "message": "m"})


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(
            "boom",
            {"code": -32603, "message": "Malformed error object", "data": "boom"},
            id="string",
        ),
        pytest.param(
            {"message": "m"},
            {"code": -32603, "message": "m", "data": {"message": "m"}},
            id="missing-code",
        ),
        pytest.param(
            {"code": True, "message": "m", "data": 1},
            {"code": -32603, "message": "m", "data": 1},
            id="bool-code-keeps-own-data",
        ),
        pytest.param(
            {"code": -32000.5, "message": "m"},
            {"code": -32603, "message": "m", "data": {"code": -32000.5, "message": "m"}},
            id="float-code",
        ),
        pytest.param(
            {"code": 7, "message": 8},
            {"code": 7, "message": "Malformed error object", "data": {"code": 7, "message": 8}},
            id="non-string-message",
        ),
    ],
)
def test_malformed_error_member_is_normalised_so_the_pending_request_settles(
    error: Any, expected: dict[str, Any]
) -> None:
    msg = parse_message(_line({"jsonrpc": "2.0", "id": 1, "error": error}))
    assert msg == ErrorResponse(1, expected)


def test_invalid_message_repr_names_reason_id_and_answerable() -> None:
    text = repr(InvalidMessage("bad", id=3, answerable=False))
    assert "bad" in text and "id=3" in text and "answerable=False" in text


# --------------------------------------------------------------------------- serialize


def test_serialize_is_one_compact_utf8_line() -> None:
    wire = serialize(notification_obj("m", {"text": "a\nb\r\u2028 é 😀", "n": [1, 2]}))
    assert b"\n" not in wire and b"\r" not in wire
    assert b": " not in wire and b", " not in wire
    assert "é 😀".encode() in wire  # ensure_ascii=False
    assert not wire.endswith(b"\n")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_serialize_rejects_nan_and_infinity(value: float) -> None:
    with pytest.raises(ValueError):
        serialize(response_obj(1, {"x": value}))


def test_serialize_escapes_lone_surrogates_and_round_trips() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","method":"m","params":["\\ud800 \xc3\xa9"]}')
    assert msg == Notification("m", ["\ud800 é"])
    wire = serialize(msg.to_obj())
    wire.decode("utf-8")  # valid UTF-8
    assert parse_message(wire) == msg


def test_serialize_rejects_circular_and_too_deep_values_with_value_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        serialize(loop)
    deep: list[Any] = []
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(ValueError):
        serialize(deep)


def test_serialize_rejects_unknown_types_with_type_error() -> None:
    with pytest.raises(TypeError):
        serialize({"x": object()})


def test_serialize_accepts_message_dataclasses() -> None:
    assert json.loads(serialize(Request(1, "m", [1]))) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "m",
        "params": [1],
    }


def test_obj_helpers_build_exact_wire_dicts() -> None:
    assert request_obj(1, "m", None) == {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert request_obj("a", "m", {"x": 1}) == {
        "jsonrpc": "2.0",
        "id": "a",
        "method": "m",
        "params": {"x": 1},
    }
    assert notification_obj("n", None) == {"jsonrpc": "2.0", "method": "n"}
    assert notification_obj("n", [1]) == {"jsonrpc": "2.0", "method": "n", "params": [1]}
    assert response_obj(None, None) == {"jsonrpc": "2.0", "id": None, "result": None}
    err = {"code": -32600, "message": "m"}
    assert error_obj(None, err) == {"jsonrpc": "2.0", "id": None, "error": err}


def test_parse_error_and_invalid_message_build_their_error_objects() -> None:
    assert ParseError("x").to_error() == {"code": -32700, "message": "Parse error: x"}
    assert InvalidMessage("y").to_error() == {"code": -32600, "message": "Invalid request: y"}


# --------------------------------------------------------------------------- properties

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
structured = st.lists(json_values, max_size=4) | st.dictionaries(
    st.text(max_size=8), json_values, max_size=4
)
ids = st.integers() | st.text(max_size=10) | st.none()
methods = st.text(max_size=20)
error_objects = st.builds(
    lambda code, message, data: (
        {"code": code, "message": message}
        if data is None
        else {"code": code, "message": message, "data": data}
    ),
    st.integers(),
    st.text(max_size=20),
    json_values,
)
messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Request, ids, methods, st.none() | structured),
    st.builds(Notification, methods, st.none() | structured),
    st.builds(Response, ids, json_values),
    st.builds(ErrorResponse, ids, error_objects),
)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_any_valid_message_survives_serialize_then_parse(msg: Message) -> None:
    wire = serialize(msg.to_obj())
    assert b"\n" not in wire
    parsed = parse_message(wire)
    assert parsed == msg
    assert type(parsed) is type(msg)
    if not isinstance(msg, Notification):
        assert not isinstance(parsed, Notification)  # same type as msg (asserted above)
        assert type(parsed.id) is type(msg.id)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=100).map(str.encode))
def test_random_bytes_raise_only_parse_error_or_invalid_message(frame: bytes) -> None:
    try:
        msg = parse_message(frame)
    except (ParseError, InvalidMessage):
        return
    assert isinstance(msg, Request | Notification | Response | ErrorResponse)


envelope_like = st.dictionaries(
    st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "x"]),
    st.sampled_from(["2.0", "1.0"]) | json_values | error_objects,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(envelope_like | json_values)
def test_random_json_values_raise_only_invalid_message(value: Any) -> None:
    try:
        msg = classify(value)
    except InvalidMessage as error:
        assert isinstance(error.answerable, bool)
        assert error.id is None or isinstance(error.id, int | str)
        return
    if isinstance(msg, ErrorResponse):
        assert type(msg.error["code"]) is int and type(msg.error["message"]) is str
    # bytes round trip keeps the same answer
    assert parse_message(serialize(value)) == msg


# ----------------------------------------------- the fast (pydantic_core) path agrees with json


def _reference_parse(frame: bytes | str) -> Message:
    """parse_message as Python's json alone would decide it."""
    return classify(decode_json(frame))


def _outcome(fn: Any, frame: Any) -> Any:
    try:
        return ("ok", fn(frame))
    except ParseError:
        return ("parse error", None)
    except InvalidMessage as exc:
        return ("invalid", exc.answerable, exc.id)


tricky_texts = st.sampled_from(
    [
        '{"jsonrpc":"2.0","id":1,"result":NaN}',
        '{"jsonrpc":"2.0","id":1,"result":Infinity}',
        '{"jsonrpc":"2.0","id":1,"result":1e400}',
        '{"jsonrpc":"2.0","id":1,"result":"\\ud800"}',
        '{"jsonrpc":"2.0","id":1,"result":"\ud800"}',
        '{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"result":1}',
        '{"jsonrpc":"2.0","id":1,"result":' + "[" * 500 + "]" * 500 + "}",
        '{"jsonrpc":"2.0","id":1,"result":1} x',
        ' {"jsonrpc":"2.0","method":"m"}\r',
        '{"jsonrpc":"2.0","id":1,"id":2,"result":{}}',
        "",
        "   ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    tricky_texts
    | tricky_texts.map(lambda t: t.encode("utf-8", "surrogatepass"))
    | json_values.map(json.dumps)
    | envelope_like.map(json.dumps)
    | st.binary(max_size=60)
    | st.text(max_size=40)
)
def test_parse_message_decides_exactly_as_pythons_json_would(frame: bytes | str) -> None:
    assert _outcome(parse_message, frame) == _outcome(_reference_parse, frame)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_serialize_writes_what_pythons_json_reads_back_unchanged(value: dict[str, Any]) -> None:
    wire = serialize(value)
    assert b"\n" not in wire
    assert json.loads(wire) == value


def test_serialize_keeps_the_words_nan_and_infinity_inside_strings() -> None:
    value = {"text": "NaN and -Infinity are words here", "n": [1.5, -2]}
    assert json.loads(serialize(value)) == value
    with pytest.raises(ValueError):
        serialize({"text": "NaN", "x": float("nan")})
