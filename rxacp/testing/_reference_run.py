"""Interpreters of the reference agent's effect scripts (see ``_reference_script.py``).

* :func:`run_blocking` with a :class:`~rxacp.agent.SyncPromptContext` (sync and decorator agents);
* :func:`run_reactive` with a :class:`~rxacp.agent.PromptContext` (async agents): every waiting
  effect becomes an Observable and the script advances in ``flat_map``, so nothing blocks the
  loop and disposing the handler (grace period, ``$/cancel_request``) stops the script at once.

This module is *not* responsible for what the behaviours do, only for performing their effects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from ..agent import PromptContext, SyncPromptContext
from ..schema import PromptResponse
from ._reference_script import (
    AskPermission,
    Effect,
    Finished,
    Pause,
    ReadFile,
    RunCommand,
    Say,
    Script,
    Update,
    WriteFile,
    resume,
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
    while not isinstance(step := resume(script, value, error), Finished):
        value, error = None, None
        try:
            value = _perform_blocking(step, ctx, cancelled)
        except Exception as exc:
            error = exc
    return step.value


def _perform_blocking(effect: Effect, ctx: SyncPromptContext, cancelled: threading.Event) -> Any:
    if _send_now(effect, ctx):
        return None
    if isinstance(effect, Pause):
        if effect.cooperative:
            return cancelled.wait(effect.seconds)
        threading.Event().wait(effect.seconds)  # deliberately deaf to cancellation
        return False
    return _client_call(effect, ctx)


def _client_call(effect: Effect, ctx: PromptContext | SyncPromptContext) -> Any:
    """The agent→client call ``effect`` stands for: its value from a blocking context, an
    Observable of it from a reactive one (the two contexts name the calls alike)."""
    if isinstance(effect, ReadFile):
        return ctx.read_file(effect.path)
    if isinstance(effect, WriteFile):
        return ctx.write_file(effect.path, effect.content)
    if isinstance(effect, AskPermission):
        return ctx.request_permission(effect.request)
    if isinstance(effect, RunCommand):
        return ctx.execute(effect.command, *effect.args)
    raise TypeError(f"unknown effect {effect!r}")


SLICE = 256
"""Updates an async run sends in a row before it lets the loop run other work."""

PAUSED_RETRY = 0.001
"""Seconds an async run waits before looking again while the client is behind."""


def run_reactive(
    script: Script, ctx: PromptContext, paused: Callable[[], bool] | None = None
) -> reactivex.Observable[Any]:
    """Run ``script`` as an Observable of its answer; each waiting effect is an Observable.

    ``--R|`` where R is the answer (``None``: end_turn); disposing stops the script.

    One subscription drives the script: effects that never wait run in a plain loop, a
    waiting effect is subscribed on its own and the script resumes from its completion
    (synchronous completions continue the same loop, so nothing nests). A ``Pause`` is one
    timer on ``ctx.scheduler``, woken early by a single ``ctx.on_cancel`` callback registered
    per run. Each step costs one subscription, not a ``flat_map`` + ``merge`` chain per step:
    those allocate ~30 Rx objects each (≈90 µs apiece here), which made 1,000 concurrent
    ``slow 0.3`` turns take 3-11 s of agent CPU.

    After every :data:`SLICE` updates in a row the run yields to the loop (so a cancel or a
    disposal can arrive mid-stream), and while ``paused()`` is true (e.g. the agent session's
    ``outbound_paused``: the client is behind) it waits before sending more, so a long
    ``stream`` keeps the agent's memory flat.
    """

    def subscribe(
        observer: abc.ObserverBase[Any], _scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return _Driver(script, ctx, observer, paused).start()

    return reactivex.create(subscribe)


class _Driver:
    """One run of a script for one subscriber (see :func:`run_reactive`).

    Runs where its effects complete: the connection's loop for an async agent (client
    answers, ``ctx.scheduler`` timers and cancellation are all delivered there).
    """

    def __init__(
        self,
        script: Script,
        ctx: PromptContext,
        observer: abc.ObserverBase[Any],
        paused: Callable[[], bool] | None,
    ) -> None:
        self._script = script
        self._ctx = ctx
        self._observer = observer
        self._paused = paused
        self._current: abc.DisposableBase | None = None  # the waiting effect's subscription
        self._stopped = False
        self._wake: Callable[[], None] | None = None  # ends a cooperative Pause early
        self._cancel_hooked = False

    def start(self) -> abc.DisposableBase:
        self._advance(None, None)
        return Disposable(self._dispose)

    def _release(self) -> None:
        current, self._current = self._current, None
        if current is not None:
            current.dispose()

    def _dispose(self) -> None:
        self._stopped = True
        self._wake = None
        self._release()

    def _on_cancel(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            wake()

    def _resume_later(self) -> None:
        """Continue on a later loop turn (after :data:`PAUSED_RETRY` while paused)."""

        def resume(_scheduler: abc.SchedulerBase, _state: Any = None) -> None:
            self._current = None
            if self._paused is not None and self._paused():
                self._resume_later()
            else:
                self._advance(None, None)

        scheduler = self._ctx.scheduler
        if self._paused is not None and self._paused():
            self._current = scheduler.schedule_relative(PAUSED_RETRY, resume)
        else:
            self._current = scheduler.schedule(resume)

    def _advance(self, value: Any, error: Exception | None) -> None:
        ctx = self._ctx
        sent = 0
        while not self._stopped:
            try:
                effect = self._script.send(value) if error is None else self._script.throw(error)
            except StopIteration as stop:
                self._stopped = True
                self._observer.on_next(stop.value)
                self._observer.on_completed()
                return
            except Exception as exc:
                self._stopped = True
                self._observer.on_error(exc)
                return
            value, error = None, None
            try:
                if _send_now(effect, ctx):
                    sent += 1
                    if sent >= SLICE:
                        self._resume_later()
                        return
                    continue
                settled = self._wait(effect)
            except Exception as exc:
                self._release()
                error = exc
                continue
            if settled is None:
                return  # the script resumes from the effect's completion
            value, error = settled

    def _wait(self, effect: Effect) -> tuple[Any, Exception | None] | None:
        """Start a waiting effect: its outcome if it settled at once, else None (it resumes)."""
        box: list[tuple[Any, Exception | None]] = []
        waiting = [False]

        def settle(value: Any, error: Exception | None) -> None:
            if box or self._stopped:
                return
            box.append((value, error))
            self._wake = None
            if waiting[0]:
                self._release()
                self._advance(value, error)

        ctx = self._ctx
        if isinstance(effect, Pause):
            if effect.cooperative:
                if ctx.is_cancelled():
                    return True, None

                def woken() -> None:
                    settle(True, None)

                self._wake = woken
                if not self._cancel_hooked:  # one callback per run, not one per Pause
                    self._cancel_hooked = True
                    ctx.on_cancel(self._on_cancel)

            def elapsed(_scheduler: abc.SchedulerBase, _state: Any = None) -> None:
                settle(False, None)

            if not box:
                self._current = ctx.scheduler.schedule_relative(effect.seconds, elapsed)
        else:
            last: list[Any] = [None]

            def on_next(value: Any) -> None:
                last[0] = value

            def on_error(exc: Exception) -> None:
                settle(None, exc)

            def on_completed() -> None:
                settle(last[0], None)

            self._current = _client_call(effect, ctx).subscribe(on_next, on_error, on_completed)
        if box:  # settled while subscribing
            self._release()
            return box[0]
        waiting[0] = True
        return None
