"""Duration arguments: ``timedelta`` or float seconds, where ``0``/``None`` disables a timer.

Not responsible for scheduling anything; it only normalises the value users pass to builders.
"""

from __future__ import annotations

import datetime as _dt

__all__ = ["Duration", "iso8601_duration", "to_seconds", "wait_seconds"]

Duration = _dt.timedelta | float | int


def to_seconds(value: Duration | None, *, name: str = "duration") -> float | None:
    """Return the duration in seconds, or ``None`` when it is disabled (``None`` or zero).

    Raises ``ValueError`` (naming the option) for negative values and ``TypeError`` for
    anything that is not a ``timedelta`` or a number.
    """
    if value is None:
        return None
    if isinstance(value, _dt.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(
            f"{name} must be a timedelta or seconds (float), not {type(value).__name__}"
        )
    if seconds < 0 or seconds != seconds:
        raise ValueError(f"{name} must be >= 0 seconds, got {value!r}")
    return seconds or None


def wait_seconds(value: Duration | None, *, default: float, name: str = "timeout") -> float:
    """The bound of a wait in seconds: ``default`` for ``None``; ``0`` waits not at all (the
    condition is checked once). The same types and checks as :func:`to_seconds`."""
    if value is None:
        return default
    return to_seconds(value, name=name) or 0.0


def iso8601_duration(seconds: float) -> str:
    """Format seconds as an ISO-8601 duration: ``1800`` → ``"PT30M"``, ``1.5`` → ``"PT1.5S"``."""
    total = round(seconds, 6)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    out = "PT"
    if hours:
        out += f"{int(hours)}H"
    if minutes:
        out += f"{int(minutes)}M"
    if secs or out == "PT":
        out += f"{secs:g}S" if secs != int(secs) else f"{int(secs)}S"
    return out
