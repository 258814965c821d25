"""The interactive pieces of ``rxacp prompt``: permission questions, waiting, auth help.

- :class:`PermissionPolicy` answers ``session/request_permission`` (``--yes``, ``--no``, or a
  question on stdin). It never approves by default: no answer (end of input, stdin not a
  terminal in an interactive session, three invalid choices) is the outcome ``cancelled``, and
  it says so.
- :class:`Waiter` waits for one Observable (a call to the agent) on the main thread, printing
  progress to stderr while the agent is silent and turning Ctrl-C into cancellation:
  for a prompt turn the first Ctrl-C sends ``session/cancel`` and the second disposes the
  prompt (``$/cancel_request``); for any other call the first Ctrl-C disposes it.
- :func:`auth_help` lists an agent's ``authMethods`` and how to pass one with ``--auth``.

This module is *not* responsible for parsing arguments or rendering updates.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

import reactivex

from ..client import CancellationSignal
from ..schema import RequestPermissionRequest
from ..schema import RequestPermissionResponse as PermissionResponse
from .render import Style, clean

__all__ = ["Aborted", "PermissionPolicy", "Waiter", "auth_help"]


class Aborted(Exception):
    """The user pressed Ctrl-C (twice during a prompt turn) and the call was disposed."""


Say = Callable[[str], None]


class PermissionPolicy:
    """Answers ``session/request_permission``: ``"yes"``, ``"no"`` or ``"ask"`` (on ``stdin``).

    ``can_ask=False`` (an interactive session whose stdin is not a terminal: its lines are
    prompts, not answers) answers every question ``cancelled`` unless ``--yes``/``--no``.
    """

    def __init__(
        self,
        mode: str,
        say: Say,
        style: Style,
        stdin: IO[str] | None,
        *,
        can_ask: bool = True,
    ) -> None:
        self._mode = mode
        self._say = say
        self._style = style
        self._stdin = stdin
        self._can_ask = can_ask and stdin is not None
        self._lock = threading.Lock()  # one question at a time

    def __call__(self, request: RequestPermissionRequest) -> PermissionResponse:
        """Pick an option (runs on a worker thread; may block reading stdin)."""
        title = _permission_title(request)
        options = list(request.options)
        with self._lock:
            self._say(self._style("? permission: ", "yellow", "bold") + clean(title))
            if self._mode in ("yes", "no"):
                prefix = "allow" if self._mode == "yes" else "reject"
                chosen = next((o for o in options if str(o.kind).startswith(prefix)), None)
                how = f"--{self._mode}"
                why = f"no {prefix} option ({how})"
            elif not self._can_ask:
                chosen, how = None, "you"
                why = "stdin is not a terminal, so nobody can answer; use --yes or --no"
            else:
                chosen, why = self._ask(options)
                how = "you"
            if chosen is None:
                self._say(self._style(f"  → cancelled: {why}", "yellow"))
                return PermissionResponse.cancelled()
            self._say(self._style(f"  → {clean(chosen.name)} ({how})", "dim"))
            return PermissionResponse.selected(chosen.option_id)

    def _ask(self, options: list[Any]) -> tuple[Any, str]:
        listing = "  ".join(f"{i}) {clean(o.name)}" for i, o in enumerate(options, 1))
        for _attempt in range(3):
            self._say(f"  {listing}")
            self._say(f"  choose [1-{len(options)}]: ")
            line = self._stdin.readline() if self._stdin is not None else ""
            if not line:  # end of input: never approve by default
                return None, "no answer (end of input)"
            choice = line.strip()
            if choice.isdigit() and 1 <= int(choice) <= len(options):
                return options[int(choice) - 1], ""
            matches = [o for o in options if str(o.name).lower() == choice.lower()]
            if matches:
                return matches[0], ""
        return None, "no valid choice after 3 tries"


def _permission_title(request: Any) -> str:
    """What the permission asks: the v2 ``title``, or the v1 tool call's title (or id)."""
    tool_call = getattr(request, "tool_call", None)
    if tool_call is None:  # ACP v2: the prompt copy is the request's own title
        return str(getattr(request, "title", None) or "permission requested")
    return str(getattr(tool_call, "title", None) or tool_call.tool_call_id)


@contextlib.contextmanager
def sigint(handler: Any) -> Iterator[None]:
    """Install a SIGINT handler (main thread only) and restore the previous one after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class Waiter:
    """Waits for calls to the agent with progress and Ctrl-C handling (see the module)."""

    def __init__(self, say: Say, style: Style, *, progress_every: float = 5.0) -> None:
        self._say = say
        self._style = style
        self._progress_every = progress_every
        self._activity = time.monotonic()
        self.cancelled_at: float | None = None
        """When the last prompt turn was cancelled with Ctrl-C (monotonic), else ``None``."""

    def activity(self, *_: Any) -> None:
        """Note that the agent just sent something (resets the silence clock)."""
        self._activity = time.monotonic()

    def wait(
        self,
        source: reactivex.Observable[Any],
        what: str,
        *,
        stop: CancellationSignal | None = None,
    ) -> Any:
        """Subscribe to ``source`` and return its last value (or raise its error).

        With ``stop`` (a prompt turn) the first Ctrl-C cancels it and the turn goes on until the
        agent answers; otherwise, or on a second Ctrl-C, the call is disposed and
        :class:`Aborted` raised.
        """
        wake = threading.Event()
        box: dict[str, Any] = {}
        interrupts = [0]
        self.cancelled_at = None

        def finished(key: str, value: Any) -> None:
            box.setdefault(key, value)
            wake.set()

        def on_sigint(_signum: int, _frame: Any) -> None:
            interrupts[0] += 1
            wake.set()

        started = time.monotonic()
        self._activity = started
        next_note = started + self._progress_every
        with sigint(on_sigint):
            subscription = source.subscribe(
                on_next=lambda value: box.__setitem__("value", value),
                on_error=lambda e: finished("error", e),
                on_completed=lambda: finished("done", True),
            )
            while "error" not in box and "done" not in box:
                wake.wait(min(0.5, self._progress_every))
                wake.clear()
                if "error" in box or "done" in box:
                    break
                if interrupts[0] >= (2 if stop is not None else 1):
                    subscription.dispose()
                    raise Aborted(what)
                if interrupts[0] == 1 and stop is not None and self.cancelled_at is None:
                    self.cancelled_at = time.monotonic()
                    stop.cancel()
                    self._say(
                        self._style(
                            "cancelling… (session/cancel sent; Ctrl-C again to abort)", "yellow"
                        )
                    )
                now = time.monotonic()
                if now >= next_note and now - self._activity >= self._progress_every:
                    self._say(
                        self._style(
                            f"… still waiting for {what} ({now - started:.0f} s, "
                            f"nothing from the agent for {now - self._activity:.0f} s)",
                            "dim",
                        )
                    )
                    next_note = now + self._progress_every
        if "error" in box:
            raise box["error"]
        return box.get("value")


def _method_line(method: Any) -> tuple[str, str]:
    wire: dict[str, Any] = method.to_wire() if hasattr(method, "to_wire") else dict(method)
    method_id = clean(wire.get("id", "?"))
    kind = clean(wire.get("type", "agent"))
    parts = [clean(wire.get("name", method_id)), f"({kind})"]
    names = [wire.get("varName"), wire.get("envVar")]
    for var in wire.get("vars") or ():
        names.append(var.get("name") if isinstance(var, dict) else var)
    env_vars = [clean(n) for n in names if isinstance(n, str) and n]
    if env_vars:
        parts.append("— set " + " and ".join(env_vars))
    description = wire.get("description")
    if description:
        parts.append(f"— {clean(description)}")
    return method_id, " ".join(parts)


def auth_help(methods: list[Any] | None) -> list[str]:
    """Lines explaining how to authenticate with one of ``methods`` (the agent's list)."""
    if not methods:
        return [
            "  the agent advertised no authMethods in initialize; see its documentation "
            "(often: log in with its own CLI first, or set an API key variable)"
        ]
    rows = [_method_line(m) for m in methods]
    width = max(len(method_id) for method_id, _ in rows)
    lines = ["  the agent's auth methods:"]
    lines += [f"    {method_id.ljust(width)}  {text}" for method_id, text in rows]
    lines.append(f"  pass one with --auth METHOD_ID, e.g. --auth {rows[0][0]}")
    return lines
