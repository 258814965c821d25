"""Terminal output for the ``rxacp`` command line: styles and a ``session/update`` renderer.

Colors are used only when the stream is a terminal and ``NO_COLOR`` is unset or empty
(https://no-color.org). Writes are flushed at once so streamed tokens appear as they arrive,
and are safe from several threads (updates arrive on the connection's loop thread).

This module is *not* responsible for talking to agents: it only formats what it is given.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import IO, Any

from ..schema import SessionNotification

__all__ = ["Style", "UpdateRenderer", "colors_enabled"]

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
    if env.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


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


class UpdateRenderer:
    """Prints ``session/update``\\ s as they arrive: message text inline, the rest on own lines.

    ``out`` receives the agent's message text, ``side`` everything else (thoughts, tool calls,
    plans, notes). They may be the same stream.
    """

    def __init__(self, out: IO[str], side: IO[str], style: Style, *, indent: str = "") -> None:
        self._out = out
        self._side = side
        self._style = style
        self._indent = indent
        self._lock = threading.Lock()
        self._inline: str | None = None  # the kind of the text currently being streamed inline
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
                self._chunk(kind, update)
            elif kind == "tool_call":
                self._line(self._tool_call(update, new=True))
            elif kind == "tool_call_update":
                self._line(self._tool_call(update, new=False))
            elif kind == "plan":
                self._plan(update)
            elif kind == "current_mode_update":
                self._line(self._style(f"mode → {getattr(update, 'current_mode_id', '?')}", "dim"))
            else:
                self._line(self._style(f"[{kind}]", "dim"))

    def note(self, text: str) -> None:
        """A line of commentary on the side stream (ends any inline text first)."""
        with self._lock:
            self._line(text)

    def end(self) -> None:
        """End the current inline text with a newline, if any."""
        with self._lock:
            self._break()

    # -- parts ---------------------------------------------------------------------------
    def _chunk(self, kind: str, update: Any) -> None:
        text = _content_text(getattr(update, "content", None))
        if kind == "agent_message_chunk":
            self.message_chunks += 1
            self.message_text += text
        if self._inline != kind:
            self._break()
            self._inline = kind
            if kind == "agent_thought_chunk":
                self._write(self._side, self._indent + self._style("thinking: ", "dim", "italic"))
            elif kind == "user_message_chunk":
                self._write(self._side, self._indent + self._style("you: ", "bold"))
            else:
                self._write(self._out, self._indent)
        if kind == "agent_thought_chunk":
            self._write(self._side, self._style(text, "dim", "italic"))
        elif kind == "user_message_chunk":
            self._write(self._side, text)
        else:
            self._write(self._out, text.replace("\n", "\n" + self._indent))

    def _tool_call(self, update: Any, *, new: bool) -> str:
        call_id = getattr(update, "tool_call_id", "?")
        status = getattr(update, "status", None) or ("pending" if new else "")
        title = getattr(update, "title", None)
        color = {"completed": "green", "failed": "red", "in_progress": "yellow"}.get(status, "cyan")
        head = self._style("⚙ tool", "cyan", "bold") if new else self._style("  ↳", "cyan")
        parts = [head, title or call_id]
        if status:
            parts.append(self._style(f"[{status}]", color))
        for item in getattr(update, "content", None) or ():
            text = _content_text(getattr(item, "content", None))
            if text:
                parts.append(self._style(f"→ {text}", "dim"))
        return " ".join(parts)

    def _plan(self, update: Any) -> None:
        marks = {"completed": ("✔", "green"), "in_progress": ("▶", "yellow")}
        self._line(self._style("plan", "magenta", "bold"))
        for entry in getattr(update, "entries", None) or ():
            mark, color = marks.get(getattr(entry, "status", ""), ("○", "dim"))
            self._line(f"  {self._style(mark, color)} {getattr(entry, 'content', '')}")

    # -- low level (lock held) -------------------------------------------------------------
    def _break(self) -> None:
        if self._inline is not None:
            stream = self._out if self._inline == "agent_message_chunk" else self._side
            self._write(stream, "\n")
            self._inline = None

    def _line(self, text: str) -> None:
        self._break()
        self._write(self._side, self._indent + text + "\n")

    @staticmethod
    def _write(stream: IO[str], text: str) -> None:
        stream.write(text)
        stream.flush()


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text
    kind = getattr(content, "type", "content")
    uri = getattr(content, "uri", None)
    return f"[{kind}{' ' + uri if uri else ''}]"
