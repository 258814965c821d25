"""METHODS covers the whole protocol and agrees with meta.json and the schema's x-method/x-side."""

from __future__ import annotations

import pytest

from rxacp.schema import methods
from rxacp.schema.methods import (
    CANCEL_REQUEST,
    METHODS,
    MethodSpec,
    is_capability_enabled,
    method_spec,
    methods_for_side,
)

from ._strategies import load_schema

META = load_schema("meta.json")
META_UNSTABLE = load_schema("meta.unstable.json")


def _all_meta_methods() -> dict[str, str]:
    names: dict[str, str] = {}
    for meta in (META, META_UNSTABLE):
        for group in ("agentMethods", "clientMethods", "protocolMethods"):
            names.update(meta[group])
    return names


def test_methods_covers_every_method_of_both_meta_files_and_cancel_request() -> None:
    assert set(_all_meta_methods().values()) == set(METHODS)
    assert METHODS[CANCEL_REQUEST].name == "$/cancel_request"


def test_every_meta_key_has_an_upper_case_constant() -> None:
    for key, name in _all_meta_methods().items():
        assert getattr(methods, key.upper()) == name


def test_unstable_flag_matches_the_stable_meta_file() -> None:
    stable = {
        n for g in ("agentMethods", "clientMethods", "protocolMethods") for n in META[g].values()
    }
    for name, spec in METHODS.items():
        assert spec.unstable == (name not in stable), name


def test_params_and_result_types_and_sides_match_the_schema_annotations() -> None:
    defs = load_schema("schema.unstable.json")["$defs"]
    for def_name, definition in defs.items():
        name = definition.get("x-method")
        if name is None or definition["x-side"] == "proxy":
            continue  # proxy/* is conductor <-> proxy traffic, not routed (as in the TS SDK)
        spec = METHODS[name]
        side = definition["x-side"]
        # mcp/message: the request is handled by the client, the notification by the agent.
        both = side in ("both", "protocol") or name == "mcp/message"
        expected_side = "both" if both else side
        assert spec.side == expected_side, name
        if def_name.endswith("Response") and "properties" not in definition:
            assert spec.result_type is None, name  # any JSON value
        elif def_name.endswith("Response"):
            assert spec.result_type is not None and spec.result_type.__name__ == def_name
        elif spec.notification_type is not None and def_name.endswith("Notification"):
            assert spec.notification_type.__name__ == def_name
        else:
            assert spec.params_type.__name__ == def_name
            assert spec.kind == ("notification" if def_name.endswith("Notification") else "request")


@pytest.mark.parametrize(
    ("name", "python_name", "capability"),
    [
        ("session/load", "load_session", "loadSession"),
        ("session/list", "list_sessions", "sessionCapabilities.list"),
        ("session/fork", "fork_session", "sessionCapabilities.fork"),
        ("logout", "logout", "auth.logout"),
        ("fs/read_text_file", "read_text_file", "fs.readTextFile"),
        ("terminal/create", "create_terminal", "terminal"),
        ("elicitation/complete", "complete_elicitation", "elicitation.url"),
        ("providers/set", "set_provider", "providers"),
        ("session/archive", "archive_session", "sessionCapabilities.archive"),
        ("session/unarchive", "unarchive_session", "sessionCapabilities.archive"),
        ("session/status", "session_status", "sessionCapabilities.status"),
        ("session/set_title", "set_session_title", "sessionCapabilities.title"),
        ("auth/status", "auth_status", "auth.status"),
        ("auth/status_update", "auth_status_update", None),
        ("session/prompt", "prompt", None),
        ("session/cancel", "cancel", None),
        ("session/update", "session_update", None),
    ],
)
def test_method_python_names_and_capability_gates(
    name: str, python_name: str, capability: str | None
) -> None:
    spec = method_spec(name)
    assert isinstance(spec, MethodSpec)
    assert (spec.python_name, spec.capability) == (python_name, capability)


def test_python_names_are_unique() -> None:
    names = [spec.python_name for spec in METHODS.values()]
    assert len(names) == len(set(names))


def test_methods_for_side_filters_by_handling_side_and_stability() -> None:
    agent = {s.name for s in methods_for_side("agent")}
    assert {"session/prompt", "session/cancel", "$/cancel_request"} <= agent
    assert "session/update" not in agent and "session/fork" not in agent
    assert "session/fork" in {s.name for s in methods_for_side("agent", include_unstable=True)}
    client = {s.name for s in methods_for_side("client")}
    assert {"session/update", "fs/write_text_file", "terminal/kill"} <= client
    assert method_spec("_vendor/ext") is None


def test_capability_paths_resolve_on_models_and_wire_dicts() -> None:
    from rxacp.schema import AgentCapabilities, ClientCapabilities

    caps = AgentCapabilities.from_wire({"loadSession": True, "sessionCapabilities": {"list": {}}})
    assert is_capability_enabled(caps, "loadSession")
    assert is_capability_enabled(caps, "sessionCapabilities.list")
    assert not is_capability_enabled(caps, "sessionCapabilities.close")
    assert not is_capability_enabled(ClientCapabilities(), "fs.readTextFile")
    assert is_capability_enabled({"fs": {"readTextFile": True}}, "fs.readTextFile")
    assert not is_capability_enabled({"terminal": False}, "terminal")
    assert is_capability_enabled(None, None)
