"""``PromptTimeouts``: the prompt-turn timers of an agent as one value (Java ``PromptTimeouts``).

Not responsible for running the timers (``rxacp.agent.turn`` does).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from .._durations import Duration, to_seconds

__all__ = ["PromptTimeouts"]


def _duration(value: Duration | None, name: str) -> timedelta | None:
    seconds = to_seconds(value, name=name)
    return None if seconds is None else timedelta(seconds=seconds)


@dataclass(frozen=True)
class PromptTimeouts:
    """The SDK's prompt-turn policy timers (see the cancellation docs, S7/S8).

    ``cancel_grace_period``: how long after ``session/cancel`` a handler may take before the SDK
    disposes it and answers ``cancelled`` itself. ``max_prompt_duration``: a hard ceiling on one
    turn (answered ``-32800`` with ``{"maxPromptDuration": "PT30M"}``). ``None`` (or ``0``)
    disables a timer. Accepts ``timedelta`` or seconds; stored as ``timedelta | None``.

    >>> t = PromptTimeouts.DEFAULTS.with_max_prompt_duration(timedelta(minutes=30))
    >>> t.cancel_grace_period, t.max_prompt_duration
    (datetime.timedelta(seconds=60), datetime.timedelta(seconds=1800))
    """

    cancel_grace_period: timedelta | None = timedelta(seconds=60)
    max_prompt_duration: timedelta | None = None

    DEFAULTS: ClassVar[PromptTimeouts]
    """60 s grace period, no maximum duration (what a builder uses unless told otherwise)."""
    NONE: ClassVar[PromptTimeouts]
    """Both timers off: a handler that never answers keeps its session busy."""

    def __post_init__(self) -> None:
        for name in ("cancel_grace_period", "max_prompt_duration"):
            object.__setattr__(self, name, _duration(getattr(self, name), name))

    def with_cancel_grace_period(self, period: Duration | None) -> PromptTimeouts:
        """A copy with another grace period (``None``/``0`` disables it)."""
        return dataclasses.replace(
            self, cancel_grace_period=_duration(period, "cancel_grace_period")
        )

    def with_max_prompt_duration(self, duration: Duration | None) -> PromptTimeouts:
        """A copy with another maximum turn duration (``None``/``0`` disables it)."""
        return dataclasses.replace(
            self, max_prompt_duration=_duration(duration, "max_prompt_duration")
        )


PromptTimeouts.DEFAULTS = PromptTimeouts()
PromptTimeouts.NONE = PromptTimeouts(None, None)
