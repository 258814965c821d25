"""Schema records are keyword-only: a positional call (a literal Java ``new X(a, b)``) raises a
``TypeError`` naming the model's fields in order, and the keyword path is unchanged."""

from __future__ import annotations

import pytest

from rxacp import schema
from rxacp.schema import InitializeResponse, PromptRequest, TextContent
from rxacp.schema.unstable import ForkSessionRequest


def test_a_positional_record_call_names_the_fields_in_order() -> None:
    with pytest.raises(TypeError) as info:
        InitializeResponse(1, None, [])  # type: ignore[misc]
    message = str(info.value)
    assert "InitializeResponse takes keyword arguments only, got 3 positional" in message
    assert "protocol_version*, agent_capabilities, auth_methods, agent_info, meta" in message


def test_the_error_marks_required_fields_and_works_for_every_model_family() -> None:
    with pytest.raises(TypeError, match=r"session_id\*, prompt\*, meta"):
        PromptRequest("s", [])  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"TextContent takes keyword arguments only"):
        TextContent("hi")  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"ForkSessionRequest takes keyword arguments only"):
        ForkSessionRequest("s")  # type: ignore[misc]


def test_keyword_construction_still_validates_and_accepts_wire_names() -> None:
    assert PromptRequest(session_id="s", prompt=[]).session_id == "s"
    assert InitializeResponse(protocolVersion=1).protocol_version == 1
    with pytest.raises(ValueError, match="sessionId"):
        PromptRequest(prompt=[])


def test_every_exported_model_refuses_positional_arguments() -> None:
    models = [
        getattr(schema, name)
        for name in schema.__all__
        if isinstance(getattr(schema, name), type)
        and issubclass(getattr(schema, name), schema.AcpModel)
    ]
    assert len(models) > 100
    for model in models:
        with pytest.raises(TypeError, match=f"^{model.__name__} takes keyword arguments only"):
            model("positional")


def test_validation_from_the_wire_does_not_run_the_init_so_it_costs_what_it_did() -> None:
    models = [
        getattr(schema, name)
        for name in schema.__all__
        if isinstance(getattr(schema, name), type)
        and issubclass(getattr(schema, name), schema.AcpModel)
    ]
    assert [m.__name__ for m in models if m.__pydantic_custom_init__] == []
    calls: list[str] = []
    original = schema.AcpModel.__init__

    def counting(self: schema.AcpModel, /, *args: object, **data: object) -> None:
        calls.append(type(self).__name__)
        original(self, *args, **data)

    schema.AcpModel.__init__ = counting  # type: ignore[method-assign]
    try:
        request = PromptRequest.from_wire(
            {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]}
        )
    finally:
        schema.AcpModel.__init__ = original  # type: ignore[method-assign]
    assert calls == [] and request.prompt[0].text == "x"  # type: ignore[union-attr]
