"""Interpreters of the reference agent's effect scripts (see ``_reference_script.py``).

* :func:`run_blocking` with a :class:`~rxacp.agent.SyncPromptContext` (sync and decorator agents);
* :func:`run_reactive` with a :class:`~rxacp.agent.PromptContext` (async agents): every waiting
  effect becomes an Observable and the script advances in ``flat_map``, so nothing blocks the
  loop and disposing the handler (grace period, ``$/cancel_request``) stops the script at once.

This module is *not* responsible for what the behaviours do, only for performing their effects.
"""

from __future__ import annotations

import threading
from typing import Any

import reactivex
from reactivex import operators as ops

from ..agent import PromptContext, SyncPromptContext
from ..schema import PromptResponse
from ._reference_script import (
    AskPermission,
    Effect,
    Pause,
    ReadFile,
    RunCommand,
    Say,
    Script,
    Update,
    WriteFile,
)

__all__ = ["run_blocking", "run_reactive"]


# ----------------------------------------------------------------------------- interpreters
def _send_now(effect: Effect, ctx: PromptContext | SyncPromptContext) -> bool:
    """Perform the effects that never wait (updates); True if ``effect`` was one of them."""
    if isinstance(effect, Say):
        if effect.thought:
            ctx.send_thought(effect.text)
        else:
            ctx.send_message(effect.text)
        return True
    if isinstance(effect, Update):
        ctx.send_update(effect.update)
        return True
    return False


def run_blocking(script: Script, ctx: SyncPromptContext) -> PromptResponse | None:
    """Run ``script`` on the calling (worker) thread with a blocking context."""
    cancelled = threading.Event()
    ctx.on_cancel(cancelled.set)
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            effect = script.send(value) if error is None else script.throw(error)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            value = _perform_blocking(effect, ctx, cancelled)
        except Exception as exc:
            error = exc


def _perform_blocking(effect: Effect, ctx: SyncPromptContext, cancelled: threading.Event) -> Any:
    if _send_now(effect, ctx):
        return None
    if isinstance(effect, Pause):
        if effect.cooperative:
            return cancelled.wait(effect.seconds)
        threading.Event().wait(effect.seconds)  # deliberately deaf to cancellation
        return False
    if isinstance(effect, ReadFile):
        return ctx.read_file(effect.path)
    if isinstance(effect, WriteFile):
        return ctx.write_file(effect.path, effect.content)
    if isinstance(effect, AskPermission):
        return ctx.request_permission(effect.request)
    if isinstance(effect, RunCommand):
        return ctx.execute(effect.command, *effect.args)
    raise TypeError(f"unknown effect {effect!r}")


def run_reactive(script: Script, ctx: PromptContext) -> reactivex.Observable[Any]:
    """Run ``script`` as an Observable of its answer; each waiting effect is an Observable.

    ``--R|`` where R is the answer (``None``: end_turn); disposing stops the script.
    """

    def advance(value: Any, error: Exception | None) -> reactivex.Observable[Any]:
        while True:
            try:
                effect = script.send(value) if error is None else script.throw(error)
            except StopIteration as stop:
                return reactivex.just(stop.value)
            except Exception as exc:
                return reactivex.throw(exc)
            value, error = None, None
            try:
                if _send_now(effect, ctx):
                    continue
                source = _perform_reactive(effect, ctx)
            except Exception as exc:
                error = exc
                continue
            settled: reactivex.Observable[tuple[Any, Exception | None]] = source.pipe(
                ops.last_or_default(None), ops.map(_succeeded), ops.catch(_failed)
            )

            def resume(pair: tuple[Any, Exception | None]) -> reactivex.Observable[Any]:
                return advance(*pair)

            return settled.pipe(ops.flat_map(resume))

    return reactivex.defer(lambda _scheduler: advance(None, None))


def _succeeded(value: Any) -> tuple[Any, Exception | None]:
    return value, None


def _failed(error: Exception, _source: Any) -> reactivex.Observable[tuple[Any, Exception | None]]:
    return reactivex.just((None, error))


def _perform_reactive(effect: Effect, ctx: PromptContext) -> reactivex.Observable[Any]:
    if isinstance(effect, Pause):
        elapsed: reactivex.Observable[bool] = reactivex.timer(
            effect.seconds, scheduler=ctx.scheduler
        ).pipe(ops.map(lambda _: False))
        if not effect.cooperative:
            return elapsed
        woken: reactivex.Observable[bool] = ctx.when_cancelled().pipe(ops.map(lambda _: True))
        return reactivex.merge(elapsed, woken).pipe(ops.take(1))
    if isinstance(effect, ReadFile):
        return ctx.read_file(effect.path)
    if isinstance(effect, WriteFile):
        return ctx.write_file(effect.path, effect.content)
    if isinstance(effect, AskPermission):
        return ctx.request_permission(effect.request)
    if isinstance(effect, RunCommand):
        return ctx.execute(effect.command, *effect.args)
    raise TypeError(f"unknown effect {effect!r}")
