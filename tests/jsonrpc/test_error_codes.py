"""``AcpErrorCodes`` never raises on a code it does not know; ``describe`` and ``is_*`` work
for any code; the Java SDK's codes are there by name (issue 19.7)."""

from __future__ import annotations

import pytest

from rxacp.errors import AcpErrorCodes, AcpProtocolException


@pytest.mark.parametrize("code", [-32001, -32003, -32004, -32005, -32099, 1, 0, 404])
def test_an_unknown_code_is_an_unknown_member_not_a_value_error(code: int) -> None:
    member = AcpErrorCodes(code)
    assert member == code and member.name == "UNKNOWN"
    assert not AcpErrorCodes.is_known(code)


def test_known_codes_keep_their_names() -> None:
    assert AcpErrorCodes(-32601) is AcpErrorCodes.METHOD_NOT_FOUND
    assert AcpErrorCodes(-32002).name == "RESOURCE_NOT_FOUND"
    assert len(list(AcpErrorCodes)) == 8  # unknown codes do not become members


def test_the_java_sdk_codes_are_there_by_name_as_plain_ints() -> None:
    java = {
        "CONCURRENT_PROMPT": -32000,
        "CAPABILITY_NOT_SUPPORTED": -32001,
        "SESSION_NOT_FOUND": -32002,
        "NOT_INITIALIZED": -32003,
        "AUTHENTICATION_REQUIRED": -32004,
        "PERMISSION_DENIED": -32005,
    }
    for name, code in java.items():
        assert getattr(AcpErrorCodes, name) == code
        assert not isinstance(getattr(AcpErrorCodes, name), AcpErrorCodes)


def test_describe_says_what_any_code_means() -> None:
    assert AcpErrorCodes.describe(-32601) == "Method not found (-32601)"
    assert AcpErrorCodes.describe(-32000) == (
        "Authentication required (-32000; Java SDK: concurrent prompt)"
    )
    assert AcpErrorCodes.describe(-32005) == "Permission denied (-32005, Java SDK code)"
    assert AcpErrorCodes.describe(-32050) == "Server error (-32050)"
    assert AcpErrorCodes.describe(7) == "Unknown error (7)"
    assert AcpErrorCodes.describe(AcpErrorCodes.REQUEST_CANCELLED) == "Request cancelled (-32800)"


def test_predicates_test_a_code_or_an_exception_code() -> None:
    cancelled = AcpProtocolException.request_cancelled()
    assert AcpErrorCodes.is_request_cancelled(cancelled.code)
    assert AcpErrorCodes.is_method_not_found(-32601)
    assert AcpErrorCodes.is_invalid_params(-32602) and not AcpErrorCodes.is_invalid_params(-32601)
    assert AcpErrorCodes.is_parse_error(-32700) and AcpErrorCodes.is_invalid_request(-32600)
    assert AcpErrorCodes.is_internal_error(-32603)
    assert AcpErrorCodes.is_auth_required(-32000) and AcpErrorCodes.is_auth_required(-32004)
    assert AcpErrorCodes.is_resource_not_found(-32002)
    assert AcpErrorCodes.is_server_error(-32005) and not AcpErrorCodes.is_server_error(-32603)


def test_each_factory_default_message_is_the_standard_title_describe_gives_its_code() -> None:
    made = [
        AcpProtocolException.internal_error(),
        AcpProtocolException.request_cancelled(),
        AcpProtocolException.auth_required(),
        AcpProtocolException.resource_not_found(),
    ]
    for error in made:
        assert AcpErrorCodes.describe(error.code).startswith(f"{error.message} ({error.code}")
