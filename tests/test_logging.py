"""Logging (issue 31 item 6): the standard ``logging`` module, one logger per layer, nothing
printed by the library, wire frames only at DEBUG."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.schema import NewSessionRequest, NewSessionResponse, PromptRequest
from rxacp.testing.memory import InMemoryTransportPair

PACKAGE = Path(__file__).resolve().parents[1] / "rxacp"

LAYER_LOGGERS = {
    "schema": ("rxacp.schema",),
    "session": ("rxacp.session", "rxacp.wire"),
    "transport": ("rxacp.transport",),
    "client": ("rxacp.client",),
    "agent": ("rxacp.agent",),
    "testing": ("rxacp.testing",),
    "cli": ("rxacp.cli",),
}
"""Each layer logs under its own name (``rxacp.wire``: the engine's frame log)."""

PRINTING = {"cli", "__main__.py", "testing/reference_agent.py"}
"""Programs, not library code: the command line and the reference agent's ``main``."""


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "schema/_generated" not in path.as_posix() and "unstable/_generated" not in str(path)
    ]


def _calls(tree: ast.Module, name: str) -> list[ast.Call]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == name:
                found.append(node)
    return found


def test_every_logger_is_named_after_its_layer() -> None:
    wrong = []
    for rel, tree in _modules():
        layer = rel.split("/")[0].removesuffix(".py")
        allowed = LAYER_LOGGERS.get(layer, (f"rxacp.{layer}",))
        for call in _calls(tree, "getLogger"):
            arg = call.args[0] if call.args else None
            name = arg.value if isinstance(arg, ast.Constant) else None
            if not isinstance(name, str) or not name.startswith(allowed):
                wrong.append(f"{rel}: getLogger({ast.unparse(arg) if arg else ''})")
    assert wrong == []


def test_the_library_prints_nothing_and_installs_no_handler() -> None:
    offenders = []
    for rel, tree in _modules():
        program = rel.split("/")[0] in PRINTING or rel in PRINTING
        for name in ("basicConfig", "addHandler", "setLevel"):
            offenders += [f"{rel}: {name}" for _ in _calls(tree, name)]
        if not program:
            offenders += [f"{rel}: print" for _ in _calls(tree, "print")]
    assert offenders == []


def _round_trip() -> None:
    pair = InMemoryTransportPair.create()
    agent = (
        AcpAgent.sync(pair.agent_transport)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s"))
        .prompt_handler(lambda req, ctx: ctx.send_message("hi"))
        .build()
    )
    agent.start()
    client = AcpClient.sync(pair.client_transport).build()
    try:
        client.initialize()
        client.new_session(NewSessionRequest.of("/tmp"))
        client.prompt(PromptRequest.text("s", "hello"))
    finally:
        client.close()
        agent.close()


def test_a_normal_session_logs_nothing_at_info_or_above(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="rxacp"):
        _round_trip()
    assert [r for r in caplog.records if r.name.startswith("rxacp")] == []


def test_wire_frames_are_logged_only_at_debug_on_rxacp_wire(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="rxacp.wire"):
        _round_trip()
    frames = [r for r in caplog.records if r.name == "rxacp.wire"]
    assert frames and {r.levelno for r in frames} == {logging.DEBUG}
    text = "\n".join(r.getMessage() for r in frames)
    assert "client -> " in text and "agent <- " in text and "session/prompt" in text
