"""``rxacp prompt``: send one prompt to any ACP agent over stdio and stream its answer.

Initializes, opens a session in ``--cwd``, sends the prompt and renders every ``session/update``
as it arrives: the agent's message text on stdout, everything else (thoughts, tool calls, plans,
permission questions, the stop reason) on stderr. It serves ``fs/read_text_file`` and
``fs/write_text_file`` inside the cwd only, and answers permission requests interactively or
with ``--yes`` / ``--no``. Ctrl-C once sends ``session/cancel`` (via
:class:`~rxacp.client.CancellationSignal`) and waits for the answer; twice disposes the prompt
(``$/cancel_request``) and exits 130.

Exit codes: 0 when the turn ended (any stop reason), 1 on an error (message on stderr),
2 on bad arguments, 130 after a double Ctrl-C.

This module is *not* responsible for terminals (not served) or for the wire log format.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

from ..client import AcpClient, AcpSyncClient, CancellationSignal, WorkspaceFileSystem
from ..errors import AcpException, AcpProtocolException
from ..schema import NewSessionRequest, PromptRequest, RequestPermissionRequest
from ..schema import RequestPermissionResponse as PermissionResponse
from ..transport import AcpTransport, AgentParameters, StdioAcpClientTransport
from .render import Style, UpdateRenderer, colors_enabled
from .wirelog import WireLogTransport

__all__ = ["PermissionPolicy", "add_arguments", "run"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rxacp prompt`` options."""
    parser.add_argument(
        "--agent",
        required=True,
        metavar='"CMD ARGS"',
        help='the agent command line, e.g. "python -m rxacp.testing.reference_agent", '
        "or a WebSocket agent's ws:// / wss:// URL (needs rxacp[websocket])",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session directory (default: current)")
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--yes", action="store_true", help="allow every permission request")
    answer.add_argument("--no", action="store_true", help="reject every permission request")
    parser.add_argument("--log-wire", metavar="FILE", help="record JSON-RPC traffic (JSON lines)")
    parser.add_argument("text", nargs="+", metavar="TEXT", help="the prompt")


class PermissionPolicy:
    """Answers ``session/request_permission``: ``"yes"``, ``"no"`` or ``"ask"`` (on ``stdin``)."""

    def __init__(
        self, mode: str, renderer: UpdateRenderer, style: Style, stdin: IO[str] | None
    ) -> None:
        self._mode = mode
        self._renderer = renderer
        self._style = style
        self._stdin = stdin
        self._lock = threading.Lock()  # one question at a time

    def __call__(self, request: RequestPermissionRequest) -> PermissionResponse:
        """Pick an option (runs on a worker thread; may block reading stdin)."""
        title = getattr(request.tool_call, "title", None) or request.tool_call.tool_call_id
        options = list(request.options)
        with self._lock:
            self._renderer.note(self._style("? permission: ", "yellow", "bold") + str(title))
            if self._mode in ("yes", "no"):
                prefix = "allow" if self._mode == "yes" else "reject"
                chosen = next((o for o in options if o.kind.startswith(prefix)), None)
                how = f"--{self._mode}"
            else:
                chosen, how = self._ask(options), "you"
            if chosen is None:
                self._renderer.note(self._style(f"  no option chosen ({how}): cancelled", "dim"))
                return PermissionResponse.cancelled()
            self._renderer.note(self._style(f"  → {chosen.name} ({how})", "dim"))
            return PermissionResponse.selected(chosen.option_id)

    def _ask(self, options: list[Any]) -> Any:
        listing = "  ".join(f"{i}) {o.name}" for i, o in enumerate(options, 1))
        reject = next((o for o in options if o.kind.startswith("reject")), None)
        for _attempt in range(3):
            self._renderer.note(f"  {listing}")
            self._renderer.note(f"  choose [1-{len(options)}]: ")
            line = self._stdin.readline() if self._stdin is not None else ""
            if not line:  # end of input: never approve by default
                return reject
            choice = line.strip()
            if choice.isdigit() and 1 <= int(choice) <= len(options):
                return options[int(choice) - 1]
            matches = [o for o in options if o.name.lower() == choice.lower()]
            if matches:
                return matches[0]
        return reject


@contextlib.contextmanager
def _sigint(handler: Any) -> Iterator[None]:
    """Install a SIGINT handler (main thread only) and restore the previous one after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run(
    args: argparse.Namespace,
    *,
    out: IO[str],
    err: IO[str],
    stdin: IO[str] | None,
) -> int:
    """Run ``rxacp prompt`` with parsed ``args``; returns the exit code."""
    style = Style(colors_enabled(err))
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        err.write(f"rxacp prompt: --cwd {cwd} is not a directory\n")
        return EXIT_USAGE
    transport: AcpTransport
    if args.agent.strip().startswith(("ws://", "wss://")):
        try:
            from ..transport.websocket import WebSocketAcpClientTransport
        except ImportError as exc:
            err.write(f"rxacp prompt: {exc}\n")
            return EXIT_USAGE
        transport = WebSocketAcpClientTransport(args.agent.strip())
    else:
        try:
            command = shlex.split(args.agent)
        except ValueError as exc:
            err.write(f"rxacp prompt: cannot parse --agent: {exc}\n")
            return EXIT_USAGE
        if not command:
            err.write("rxacp prompt: --agent is empty; give the agent's command line\n")
            return EXIT_USAGE
        if shutil.which(command[0]) is None:
            err.write(f"rxacp prompt: cannot find the agent command {command[0]!r}\n")
            return EXIT_ERROR
        transport = StdioAcpClientTransport(AgentParameters(command[0], command[1:]))
    if args.log_wire:
        transport = WireLogTransport(transport, args.log_wire)
    renderer = UpdateRenderer(out, err, style)
    fs = WorkspaceFileSystem(
        cwd, on_access=lambda action, path: renderer.note(style(f"· {action} {path}", "dim"))
    )
    mode = "yes" if args.yes else "no" if args.no else "ask"
    client = (
        AcpClient.sync(transport)
        .session_update_consumer(renderer)
        .read_text_file_handler(fs.read_text_file)
        .write_text_file_handler(fs.write_text_file)
        .request_permission_handler(PermissionPolicy(mode, renderer, style, stdin))
        .build()
    )
    try:
        return _converse(client, cwd, " ".join(args.text), renderer, style, err)
    except AcpProtocolException as exc:
        renderer.end()
        err.write(style("error: ", "red", "bold") + f"the agent answered with an error: {exc}\n")
        return EXIT_ERROR
    except AcpException as exc:
        renderer.end()
        err.write(style("error: ", "red", "bold") + f"{exc}\n")
        return EXIT_ERROR
    finally:
        client.close_gracefully(2.0)


def _converse(
    client: AcpSyncClient,
    cwd: str,
    text: str,
    renderer: UpdateRenderer,
    style: Style,
    err: IO[str],
) -> int:
    init = client.initialize()
    info = init.agent_info
    name = f"{info.name} {info.version}" if info is not None else "agent"
    renderer.note(style(f"connected to {name} · protocol {init.protocol_version}", "dim"))
    session = client.new_session(NewSessionRequest.of(cwd))
    stop = CancellationSignal()
    wake = threading.Event()
    box: dict[str, Any] = {}
    interrupts = [0]

    def finished(key: str, value: Any) -> None:
        box.setdefault(key, value)
        wake.set()

    def on_sigint(_signum: int, _frame: Any) -> None:
        interrupts[0] += 1
        wake.set()

    with _sigint(on_sigint):
        subscription = client.async_client.prompt(
            PromptRequest.text(session.session_id, text), stop
        ).subscribe(
            on_next=lambda r: finished("response", r),
            on_error=lambda e: finished("error", e),
            on_completed=lambda: finished("done", True),
        )
        cancelled_at: float | None = None
        while not box:
            wake.wait(0.5)
            wake.clear()
            if box:
                break
            if interrupts[0] >= 2:
                subscription.dispose()  # → $/cancel_request
                renderer.note(style("aborted: prompt disposed ($/cancel_request sent)", "red"))
                return EXIT_INTERRUPTED
            if interrupts[0] == 1 and cancelled_at is None:
                cancelled_at = time.monotonic()
                stop.cancel()  # → session/cancel
                renderer.note(
                    style("cancelling… (session/cancel sent; Ctrl-C again to abort)", "yellow")
                )
    if "error" in box:
        raise box["error"]
    response = box.get("response")
    reason = str(getattr(response, "stop_reason", "unknown"))
    detail = ""
    if cancelled_at is not None:
        detail = f" ({(time.monotonic() - cancelled_at) * 1000:.0f} ms after session/cancel)"
    color = "green" if reason == "end_turn" else "yellow"
    renderer.note(style(f"■ {reason}", color, "bold") + style(detail, "dim"))
    err.flush()
    return EXIT_OK
