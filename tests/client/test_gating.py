"""Capability gating: after initialize, calls the agent did not advertise fail locally."""

from __future__ import annotations

from typing import Any

import pytest

from rxacp.errors import AcpCapabilityException
from rxacp.schema import PromptRequest
from rxacp.schema import methods as m

from .conftest import Rig
from .test_round_trips import CALLS, SID

GATED = sorted(name for name, (method, _) in CALLS.items() if m.METHODS[method].capability)


def _marker(client: Any) -> None:
    """An ungated round trip: anything sent before it has reached the agent once it returns."""
    client.ext_method("_test/echo", {})


def test_the_gated_methods_are_the_ones_the_spec_gates() -> None:
    assert GATED == [
        "archive_session",
        "auth_status",
        "close_session",
        "delete_session",
        "disable_provider",
        "fork_session",
        "list_providers",
        "list_sessions",
        "load_session",
        "logout",
        "resume_session",
        "session_status",
        "set_provider",
        "set_session_title",
        "unarchive_session",
    ]


@pytest.mark.parametrize("name", GATED)
def test_a_method_the_agent_did_not_advertise_fails_locally_and_sends_nothing(
    rig: Rig, name: str
) -> None:
    rig.agent_options = {"capabilities": {}}
    method, request = CALLS[name]
    client = rig.initialized_sync_client()
    capability = m.METHODS[method].capability
    with pytest.raises(AcpCapabilityException, match="nothing was sent") as info:
        getattr(client, name)(request)
    assert info.value.capability == capability
    _marker(client)
    assert rig.agent.count(method) == 0


@pytest.mark.parametrize("name", GATED)
def test_before_initialize_gated_methods_are_sent(rig: Rig, name: str) -> None:
    rig.agent_options = {"capabilities": {}}
    method, request = CALLS[name]
    client = rig.sync_builder().build()
    rig.on_close(client.close)
    getattr(client, name)(request)
    assert rig.agent.count(method) == 1


def test_the_async_gate_errors_at_subscription_so_the_observable_stays_cold(rig: Rig) -> None:
    rig.agent_options = {"capabilities": {}}
    client = rig.async_builder().build()
    rig.on_close(client.close)
    lazy = client.load_session({"sessionId": SID, "cwd": "/tmp", "mcpServers": []})
    client.initialize().run()  # gating starts now, for the Observable created before too
    errors: list[Exception] = []
    lazy.subscribe(on_error=errors.append)
    assert len(errors) == 1 and isinstance(errors[0], AcpCapabilityException)
    assert errors[0].capability == "loadSession"


BLOCKS = {
    "image": (
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        "promptCapabilities.image",
    ),
    "audio": (
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        "promptCapabilities.audio",
    ),
    "resource": (
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hi"}},
        "promptCapabilities.embeddedContext",
    ),
}


@pytest.mark.parametrize("kind", sorted(BLOCKS))
def test_prompt_content_the_agent_cannot_take_is_refused_locally(rig: Rig, kind: str) -> None:
    block, capability = BLOCKS[kind]
    rig.agent_options = {"capabilities": {"promptCapabilities": {}}}
    client = rig.initialized_sync_client()
    request = {"sessionId": SID, "prompt": [{"type": "text", "text": "echo x"}, block]}
    with pytest.raises(AcpCapabilityException) as info:
        client.prompt(request)
    assert info.value.capability == capability and kind in str(info.value)
    _marker(client)
    assert rig.agent.count(m.SESSION_PROMPT) == 0


@pytest.mark.parametrize("kind", sorted(BLOCKS))
def test_prompt_content_the_agent_advertised_is_sent(rig: Rig, kind: str) -> None:
    block, _ = BLOCKS[kind]
    client = rig.initialized_sync_client()
    request = {"sessionId": SID, "prompt": [{"type": "text", "text": "echo x"}, block]}
    assert client.prompt(request).stop_reason == "end_turn"


def test_text_and_resource_links_are_baseline_content(rig: Rig) -> None:
    rig.agent_options = {"capabilities": {}}
    client = rig.initialized_sync_client()
    link = {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"}
    request = PromptRequest.from_wire(
        {"sessionId": SID, "prompt": [{"type": "text", "text": "echo x"}, link]}
    )
    assert client.prompt(request).stop_reason == "end_turn"
