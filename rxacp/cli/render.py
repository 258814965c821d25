"""Terminal output for the ``rxacp`` command line: styles and a ``session/update`` renderer.

Colors are used only when the stream is a terminal and ``NO_COLOR`` is unset or empty
(https://no-color.org). Writes are flushed at once so streamed tokens appear as they arrive,
and are safe from several threads (updates arrive on the connection's loop thread).

Everything an agent supplies (message text, tool and permission titles, option names, plan
entries, error messages and data, its name and version) goes through :func:`clean` first:
control characters other than tab — ``ESC`` sequences that retitle or clear the terminal,
``BEL``, carriage returns that overwrite a line, C1 controls and bidirectional overrides — are
shown escaped (``\\x1b``) instead of acting on the user's terminal. Newlines are escaped too
(``\\n``), so an agent-supplied field cannot forge a line of rxacp's own output; only the
streamed message and thought text keeps them (``clean(text, keep_newlines=True)``).

This module is *not* responsible for talking to agents: it only formats what it is given.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from typing import IO, Any

from ..schema import SessionNotification

__all__ = ["JsonRenderer", "Style", "UpdateRenderer", "clean", "colors_enabled", "is_terminal"]

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_LINE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: Any, *, keep_newlines: bool = False) -> str:
    """``text`` safe to print on one line of rxacp's output: control characters (except tab),
    newlines included, are escaped (``\\x1b``, ``\\n``), so agent-supplied text can neither
    drive the terminal nor forge a line. ``keep_newlines=True`` (streamed message text) keeps
    ``\\n`` (``\\r\\n`` becomes ``\\n``). The one sanitiser of the command line's output."""
    if not isinstance(text, str):
        text = str(text)
    if not keep_newlines:
        return _UNSAFE_IN_LINE.sub(_escape, text)
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _UNSAFE.sub(_escape, text)


_CODES = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}


def colors_enabled(stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    """True if ``stream`` is a terminal and ``NO_COLOR`` is not set to a non-empty value."""
    env = os.environ if environ is None else environ
    return not env.get("NO_COLOR") and is_terminal(stream)


class Style:
    """ANSI styling that turns into plain text when disabled."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        """``text`` wrapped in the given styles (``"bold"``, ``"green"`` ...)."""
        if not self.enabled or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


_STATUS_KINDS = frozenset(
    {
        "session_info_update",
        "usage_update",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "notice",
        "compaction_update",
    }
)
"""Updates shown as a status line only where the message text is at a line start."""


def _same_destination(out: IO[str], side: IO[str]) -> bool:
    """True when ``out`` and ``side`` end up in one place: the same object, the same file or
    pipe (``2>&1``), or both terminals."""
    if out is side or (is_terminal(out) and is_terminal(side)):
        return True
    try:
        a, b = os.fstat(out.fileno()), os.fstat(side.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def is_terminal(stream: IO[str] | None) -> bool:
    """True if ``stream`` is a terminal (False for ``None``, a closed or a fake stream)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


class UpdateRenderer:
    """Prints ``session/update``\\ s as they arrive: message text inline, the rest on own lines.

    ``out`` receives the agent's message text, ``side`` everything else (thoughts, tool calls,
    plans, status, notes). They may be the same stream (a terminal, ``2>&1``). Side lines —
    tool calls and their updates, plans, status updates (session info, usage, commands, mode,
    config, notices) and :meth:`side_line` — wait while the text is mid-line and are shown
    once it reaches a line start (or the turn ends), so they never cut a word in half; only
    :meth:`note` (a question the user must answer, an error) ends the line at once. When
    ``out`` and ``side`` are different destinations (say stdout piped to a file), no line
    break is ever inserted into ``out``: it holds exactly the agent's text plus a final newline.
    """

    def __init__(
        self,
        out: IO[str],
        side: IO[str],
        style: Style,
        *,
        indent: str = "",
        show_thoughts: bool = True,
    ) -> None:
        self._out = out
        self._side = side
        self._style = style
        self._indent = indent
        self._show_thoughts = show_thoughts
        self._shared = _same_destination(out, side)
        self._lock = threading.Lock()
        self._inline: str | None = None  # the kind of the text currently being streamed inline
        self._out_open = False  # the message text on ``out`` does not end with a newline
        self._side_open = False  # a thought / user line on ``side`` is not finished
        self._deferred: list[str] = []
        self._titles: dict[str, str] = {}
        self.message_chunks = 0
        """How many ``agent_message_chunk`` updates were shown."""
        self.message_text = ""
        """The concatenated text of those chunks."""

    # -- public --------------------------------------------------------------------------
    def __call__(self, notification: SessionNotification) -> None:
        """Render one notification (use as a ``session_update_consumer``)."""
        update = notification.update
        kind = str(getattr(update, "session_update", "unknown"))
        with self._lock:
            if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
                if kind != "agent_thought_chunk" or self._show_thoughts:
                    self._chunk(kind, update)
            elif kind == "tool_call":
                self._status(self._tool_call(update, new=True))
            elif kind == "tool_call_update":  # v2: the first upsert of an id creates it
                call_id = clean(getattr(update, "tool_call_id", "?"))
                self._status(self._tool_call(update, new=call_id not in self._titles))
            elif kind == "plan":
                self._plan(update)
            elif kind == "plan_update":  # v2
                self._plan(getattr(update, "plan", None))
            elif kind == "state_update":  # v2: the turn's end is printed by the caller
                state = getattr(update, "state", None)
                if state not in ("running", "idle"):
                    self._status(self._style(f"state: {clean(str(state))}", "dim"))
            elif kind == "user_message":  # v2: the prompt just sent, echoed by the agent
                pass
            elif kind in _STATUS_KINDS:
                self._status(self._style(_status_text(kind, update), "dim"))
            else:
                self._status(self._style(f"[{clean(kind)}]", "dim"))

    def note(self, text: str) -> None:
        """A line of commentary on the side stream (ends any inline text first)."""
        with self._lock:
            self._line(text)

    def side_line(self, text: str) -> None:
        """A line on the side stream that waits, like a status line, until the text is at a
        line start (e.g. the agent's stderr with ``--show-stderr``)."""
        with self._lock:
            self._status(text)

    def end(self) -> None:
        """End the current inline text with a newline, if any, and show deferred lines."""
        with self._lock:
            self._break(final=True)

    # -- parts ---------------------------------------------------------------------------
    def _chunk(self, kind: str, update: Any) -> None:
        text = clean(_content_text(getattr(update, "content", None)), keep_newlines=True)
        if kind == "agent_message_chunk":
            self.message_chunks += 1
            self.message_text += text
        if self._inline != kind:
            self._break()
            self._inline = kind
            if kind == "agent_thought_chunk":
                self._write(self._side, self._indent + self._style("thinking: ", "dim", "italic"))
                self._side_open = True
            elif kind == "user_message_chunk":
                self._write(self._side, self._indent + self._style("you: ", "bold"))
                self._side_open = True
            elif not self._out_open:
                self._write(self._out, self._indent)
        if not text:
            return
        if kind != "agent_message_chunk":
            shown = self._style(text, "dim", "italic") if kind == "agent_thought_chunk" else text
            self._write(self._side, shown)
            self._side_open = not text.endswith("\n")
            if not self._side_open and self._deferred:
                self._flush_deferred()
        else:
            cut = text.rfind("\n") + 1 if self._deferred else 0
            if cut:  # the text reaches a line start: show the waiting side lines there
                self._write(self._out, text[: cut - 1].replace("\n", "\n" + self._indent) + "\n")
                self._out_open = False
                self._flush_deferred()
                text = text[cut:]
                if not text:
                    return
                self._write(self._out, self._indent)
            self._write(self._out, text.replace("\n", "\n" + self._indent))
            self._out_open = not text.endswith("\n")

    def _tool_call(self, update: Any, *, new: bool) -> str:
        call_id = clean(getattr(update, "tool_call_id", "?"))
        status = getattr(update, "status", None) or ("pending" if new else "")
        title = getattr(update, "title", None)
        if title:
            self._titles[call_id] = clean(title)
        shown = self._titles.get(call_id, call_id)
        kind = getattr(update, "kind", None)
        color = {"completed": "green", "failed": "red", "in_progress": "yellow"}.get(status, "cyan")
        head = self._style("⚙ tool", "cyan", "bold") if new else self._style("  ↳", "cyan")
        parts = [head, shown]
        if new and kind and kind != "other":
            parts.append(self._style(f"({clean(kind)})", "dim"))
        if status:
            parts.append(self._style(f"[{clean(status)}]", color))
        for item in getattr(update, "content", None) or ():
            text = _tool_content_text(item)
            if text:
                parts.append(self._style(f"→ {clean(text)}", "dim"))
        return " ".join(parts)

    def _plan(self, update: Any) -> None:
        marks = {"completed": ("✔", "green"), "in_progress": ("▶", "yellow")}
        self._status(self._style("plan", "magenta", "bold"))
        for entry in getattr(update, "entries", None) or ():
            mark, color = marks.get(getattr(entry, "status", ""), ("○", "dim"))
            self._status(f"  {self._style(mark, color)} {clean(getattr(entry, 'content', ''))}")

    def _status(self, text: str) -> None:
        if self._mid_line():
            self._deferred.append(text)
        else:
            self._line(text)

    def _mid_line(self) -> bool:
        """True while a status line written now would cut visible text in half."""
        if self._inline == "agent_message_chunk":
            return self._out_open and self._shared
        return self._inline is not None and self._side_open

    # -- low level (lock held) -------------------------------------------------------------
    def _break(self, *, final: bool = False) -> None:
        if self._inline is not None:
            if self._inline != "agent_message_chunk":
                if self._side_open:
                    self._write(self._side, "\n")
                    self._side_open = False
            elif self._out_open and self._shared:
                self._write(self._out, "\n")
                self._out_open = False
            self._inline = None
        if final and self._out_open:  # the text ends with a newline, however it was cut
            self._write(self._out, "\n")
            self._out_open = False
        if self._deferred:
            self._flush_deferred()

    def _flush_deferred(self) -> None:
        lines, self._deferred = self._deferred, []
        for text in lines:
            self._write(self._side, self._indent + text + "\n")

    def _line(self, text: str) -> None:
        self._break()
        self._write(self._side, self._indent + text + "\n")

    @staticmethod
    def _write(stream: IO[str], text: str) -> None:
        stream.write(text)
        stream.flush()


class JsonRenderer:
    """``--json``: each update as one JSON line on ``out`` (``{"type": "update", ...}``).

    Lines: ``{"type": "update", "sessionId", "update"}`` per ``session/update``;
    :meth:`response` writes ``{"type": "response", "sessionId", "response"}`` and :meth:`error`
    ``{"type": "error", "error": {"code", "message", "data"?}}``. Control characters in strings
    are JSON escapes (``\\u001b``), so the output is safe on a terminal too.
    """

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self.message_chunks = 0
        self.message_text = ""

    def __call__(self, notification: SessionNotification) -> None:
        wire = notification.to_wire()
        update = notification.update
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.message_chunks += 1
            self.message_text += _content_text(getattr(update, "content", None))
        self.emit({"type": "update", "sessionId": wire.get("sessionId"), "update": wire["update"]})

    def response(self, session_id: str, response: Any) -> None:
        wire = response.to_wire() if hasattr(response, "to_wire") else response
        self.emit({"type": "response", "sessionId": session_id, "response": wire})

    def error(self, code: int | None, message: str, data: Any = None) -> None:
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        self.emit({"type": "error", "error": body})

    def emit(self, value: Any) -> None:
        line = json.dumps(value, ensure_ascii=False, default=str)
        line = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def note(self, text: str) -> None:
        """Notes are not part of the JSON stream (they still go to stderr elsewhere)."""

    def end(self) -> None:
        """Nothing to end: every line is complete."""


def _status_text(kind: str, update: Any) -> str:
    if kind == "session_info_update":
        title = getattr(update, "title", None)
        return f"session: {clean(title)}" if title else "session info updated"
    if kind == "usage_update":
        used, size = getattr(update, "used", "?"), getattr(update, "size", "?")
        text = (
            f"usage: {used:,} / {size:,} tokens"
            if isinstance(used, int) and isinstance(size, int)
            else f"usage: {used} / {size} tokens"
        )
        cost = getattr(update, "cost", None)
        if cost is not None:
            text += f" · {getattr(cost, 'amount', '?')} {clean(getattr(cost, 'currency', ''))}"
        return text
    if kind == "available_commands_update":
        names = [clean(getattr(c, "name", "?")) for c in getattr(update, "available_commands", ())]
        return "commands: " + (" ".join(f"/{n}" for n in names) if names else "none")
    if kind == "current_mode_update":
        return f"mode → {clean(getattr(update, 'current_mode_id', '?'))}"
    if kind == "config_option_update":
        options = getattr(update, "config_options", None) or ()
        shown = [
            f"{clean(getattr(o, 'id', '?'))}={clean(getattr(o, 'current_value', '?'))}"
            for o in options
        ]
        return "config: " + (" ".join(shown) or "updated")
    if kind == "notice":
        severity = clean(getattr(update, "severity", "info"))
        return f"notice [{severity}]: {clean(getattr(update, 'title', ''))}"
    return f"[{clean(kind)}]"


def _tool_content_text(item: Any) -> str:
    kind = getattr(item, "type", None)
    if kind == "diff":
        return f"diff {getattr(item, 'path', '?')}"
    if kind == "terminal":
        return f"terminal {getattr(item, 'terminal_id', '?')}"
    return _content_text(getattr(item, "content", None))


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text
    kind = getattr(content, "type", "content")
    uri = getattr(content, "uri", None)
    return f"[{kind}{' ' + uri if uri else ''}]"
