"""One outgoing request from subscription to settlement, and the model → wire helper.

This module is *not* responsible for sending or routing (see ``requests.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pydantic
from reactivex import abc

__all__ = ["PendingRequest", "to_wire_value"]


def to_wire_value(value: Any) -> Any:
    """A model as its wire JSON (``to_wire()``); any other value unchanged."""
    to_wire = getattr(value, "to_wire", None)
    if to_wire is not None:
        return to_wire()
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


class PendingRequest:
    """One outgoing request from subscription to settlement."""

    __slots__ = (
        "cancel_sent",
        "done",
        "id",
        "late",
        "lock",
        "method",
        "observer",
        "on_abandon",
        "params",
        "result_type",
        "timeout",
        "timeout_setting",
        "timer",
        "written",
    )

    def __init__(
        self,
        method: str,
        params: Any,
        result_type: Any,
        observer: abc.ObserverBase[Any],
        timeout: float | None,
        on_abandon: Callable[[], Callable[[], None] | None] | None = None,
    ) -> None:
        self.method = method
        self.params = params
        self.result_type = result_type
        self.observer = observer
        self.timeout = timeout
        self.timeout_setting: str | None = None
        """What sets ``timeout`` (named in the timeout error)."""
        self.on_abandon = on_abandon
        """Run on the loop when the request is given up (disposed or timed out) after it was
        written and before its answer, just before ``$/cancel_request`` is written (a prompt
        sends ``session/cancel`` here). It may return a callable run once when the peer's late
        answer arrives (or the connection ends)."""
        self.id: int | None = None
        self.done = False
        self.written = False
        self.cancel_sent = False
        """``$/cancel_request`` was sent (or is due once written) by ``cancel_when``."""
        self.timer: abc.DisposableBase | None = None
        self.late: Callable[[], None] | None = None
        """What ``on_abandon`` asked to run when the late answer arrives (see :meth:`run_late`)."""
        self.lock = threading.Lock()

    def run_late(self) -> None:
        """Run the late-answer callback once (the answer arrived, or the connection ended)."""
        late, self.late = self.late, None
        if late is not None:
            late()

    def claim(self) -> bool:
        """Settle it once: True for the first caller (answer, dispose, timeout or close)."""
        with self.lock:
            if self.done:
                return False
            self.done = True
        timer, self.timer = self.timer, None
        if timer is not None:
            timer.dispose()
        return True
