"""validate_strict / validate_message: nothing the lenient models forgive passes unnoticed."""

from __future__ import annotations

from typing import Any

import pytest

from rxacp.schema import SessionNotification
from rxacp.schema.strict import validate_message, validate_strict


def _note(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "s-1", "update": update}


TEXT = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def test_a_valid_update_has_no_problems() -> None:
    assert validate_strict("session/update", _note(TEXT)) == []


def test_an_unknown_variant_and_unknown_fields_are_allowed() -> None:
    assert validate_strict("session/update", _note({"sessionUpdate": "from_the_future"})) == []
    assert validate_strict("session/update", _note({**TEXT, "newField": 1})) == []


def test_a_known_tag_with_a_bad_payload_is_reported_although_the_lenient_model_accepts_it() -> None:
    bad = _note({"sessionUpdate": "agent_message_chunk"})
    SessionNotification.from_wire(bad)  # the lenient model takes it (as an unknown variant)
    problems = validate_strict("session/update", bad)
    assert len(problems) == 1
    assert problems[0].startswith("update: sessionUpdate 'agent_message_chunk' is known")


def test_a_field_the_lenient_model_would_reset_is_reported_with_its_path() -> None:
    content = {"type": "text", "text": "hi", "annotations": 5}
    problems = validate_strict("session/update", _note({**TEXT, "content": content}))
    assert problems == [
        "update.content.annotations: 5 is not valid here (the lenient model dropped it)"
    ]


def test_list_items_the_lenient_model_would_skip_are_reported() -> None:
    problems = validate_strict("session/update", _note({"sessionUpdate": "plan", "entries": [{}]}))
    assert problems == ["update.entries: 1 invalid item(s) (the lenient model skipped them)"]


def test_a_missing_required_field_is_a_validation_problem() -> None:
    problems = validate_strict("session/update", {"update": TEXT})
    assert problems == ["params.sessionId: Field required"]


def test_results_are_checked_with_the_result_model() -> None:
    assert validate_strict("initialize", {"protocolVersion": 1}, result=True) == []
    problems = validate_strict("initialize", {"protocolVersion": "one"}, result=True)
    assert len(problems) == 1 and problems[0].startswith("result.protocolVersion:")


def test_unknown_methods_are_problems_but_extension_methods_are_not() -> None:
    assert validate_strict("session/nope", {}) == ["unknown method 'session/nope'"]
    assert validate_strict("_vendor/thing", {"any": 1}) == []


def test_non_object_params_are_reported() -> None:
    assert validate_strict("session/update", [1]) == ["params is list, not an object"]


# ---------------------------------------------------------------------------- envelopes
def test_a_valid_request_notification_and_response_have_no_problems() -> None:
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]}
    request = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}
    assert validate_message(request) == []
    assert (
        validate_message({"jsonrpc": "2.0", "method": "session/update", "params": _note(TEXT)})
        == []
    )
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    assert validate_message(answer, method="session/prompt") == []


def test_an_error_answer_without_an_id_is_a_json_rpc_violation() -> None:
    problems = validate_message({"jsonrpc": "2.0", "error": {"code": -32601, "message": "no"}})
    assert problems == [
        'a response must carry an "id" (null only when the request\'s id could not be read)'
    ]
    assert (
        validate_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
        == []
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"id": 1, "result": {}}, '"jsonrpc" must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, "exactly one of result and error"),
        ({"jsonrpc": "2.0", "id": 1}, "neither a request"),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, 'response "id"'),
        ({"jsonrpc": "2.0", "id": True, "method": "x/y"}, 'request "id"'),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}}, '"error.code"'),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, '"error.message"'),
        ({"jsonrpc": "2.0", "method": "session/update", "params": 5}, '"params" must be'),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "extra": 1}, "unexpected member(s)"),
        ([1], "must be an object"),
    ],
)
def test_envelope_violations_are_named(message: Any, expected: str) -> None:
    problems = validate_message(message)
    assert any(expected in p for p in problems), problems


def test_a_request_with_invalid_params_reports_the_params_problem() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s"}}
    assert validate_message(request) == ["params.prompt: Field required"]
