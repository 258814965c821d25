"""Static types of ``AcpObservable.pipe`` and the agent→client calls, checked by mypy --strict.

Every ``assert_type`` here is checked by ``mypy --strict tests`` (CI, ``land.sh``): mypy fails
when an expression's inferred type differs — including when it is ``Any``, which an annotated
assignment would accept. The tests also run, and assert the runtime values agree.
"""

from __future__ import annotations

from typing import assert_type

import reactivex
from reactivex import operators as ops

from rxacp.agent import AcpAsyncAgent, AcpSyncAgent, PromptContext, SyncPromptContext
from rxacp.agent.context import CommandResult
from rxacp.schema import (
    CreateTerminalResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
)
from rxacp.session import AcpObservable, Completion
from rxacp.session.observable import as_acp_observable


def _numbers() -> AcpObservable[int]:
    return as_acp_observable(reactivex.of(1, 2, 3))


def _text(n: int) -> str:
    return str(n)


def _length(s: str) -> int:
    return len(s)


def _is_odd(n: int) -> bool:
    return n % 2 == 1


def test_pipe_with_one_operator_is_an_acp_observable_of_what_the_operator_emits() -> None:
    texts = _numbers().pipe(ops.map(_text))
    assert_type(texts, AcpObservable[str])
    assert isinstance(texts, AcpObservable)
    assert texts.block(30) == "3"


def test_pipe_chains_the_types_of_several_operators() -> None:
    lengths = _numbers().pipe(ops.filter(_is_odd), ops.map(_text), ops.map(_length))
    assert_type(lengths, AcpObservable[int])
    collected = _numbers().pipe(ops.map(_text), ops.to_list())
    assert_type(collected, AcpObservable[list[str]])
    assert collected.block(30) == ["1", "2", "3"]


def _collect(source: reactivex.Observable[str]) -> list[str]:
    out: list[str] = []
    source.subscribe(out.append)
    return out


def test_pipe_ending_in_a_non_observable_returns_what_the_last_operator_returns() -> None:
    collected = _numbers().pipe(ops.map(_text), _collect)
    assert_type(collected, list[str])
    assert collected == ["1", "2", "3"]


def test_a_pipe_result_is_awaitable_and_blockable_with_its_element_type() -> None:
    last = _numbers().pipe(ops.map(_text)).block(30)
    assert_type(last, str)
    assert last == "3"


# Never called (they would need a live agent and turn): mypy checks their assert_types.
def _async_surfaces(agent: AcpAsyncAgent, ctx: PromptContext) -> None:
    assert_type(
        agent.read_text_file(session_id="s", path="/x"), AcpObservable[ReadTextFileResponse]
    )
    assert_type(ctx.read_text_file(path="/x"), AcpObservable[ReadTextFileResponse])
    assert_type(ctx.create_terminal(command="ls"), AcpObservable[CreateTerminalResponse])
    assert_type(
        agent.terminal_output(session_id="s", terminal_id="t"),
        AcpObservable[TerminalOutputResponse],
    )
    assert_type(ctx.read_file("/x"), AcpObservable[str])
    assert_type(ctx.write_file("/x", "y"), AcpObservable[None])
    assert_type(ctx.ask_permission("go?"), AcpObservable[bool])
    assert_type(ctx.ask_choice("which?", ["a"]), AcpObservable[str | None])
    assert_type(ctx.ask_choice("which?", "a", "b"), AcpObservable[str | None])  # Java varargs
    assert_type(agent.start(), Completion)
    assert_type(agent.close_gracefully(), Completion)
    assert_type(agent.start().block(), None)
    assert_type(ctx.execute("ls", "-l"), AcpObservable[CommandResult])
    assert_type(ctx.complete_elicitation(elicitation_id="e"), None)


def _sync_surfaces(agent: AcpSyncAgent, ctx: SyncPromptContext) -> None:
    assert_type(agent.read_text_file(session_id="s", path="/x"), ReadTextFileResponse)
    assert_type(ctx.read_text_file(path="/x"), ReadTextFileResponse)
    assert_type(ctx.request_permission(None), RequestPermissionResponse)
    assert_type(ctx.read_file("/x", line=1), str)
    assert_type(ctx.write_file("/x", "y"), None)
    assert_type(ctx.ask_permission("go?"), bool)
    assert_type(ctx.ask_choice("which?", ["a"]), str | None)
    assert_type(ctx.ask_choice("which?", "a", "b"), str | None)
    assert_type(agent.start(), Completion)
    assert_type(ctx.execute("ls", "-l", cwd="/"), CommandResult)
