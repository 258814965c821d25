"""``rxacp prompt``: talk to any ACP agent from the terminal and stream its answers.

Initializes (``--auth METHOD_ID`` authenticates next), opens a session in ``--cwd`` and sends
the prompt given on the command line — or, with no prompt text, runs an interactive session:
one turn per line of stdin, until end of input (Ctrl-D). Every ``session/update`` is rendered
as it arrives: the agent's message text on stdout, everything else (thoughts, tool calls and
their status, plans, usage and session info, permission questions, the stop reason) on stderr;
``--json`` prints each update as a JSON line on stdout instead. Agent-supplied text is printed
with control characters escaped (see :func:`rxacp.cli.render.clean`).

It serves ``fs/read_text_file`` / ``fs/write_text_file`` inside the cwd only, ``terminal/*``
with ``--terminals`` (commands run locally, cwd confined, see
:class:`~rxacp.client.LocalTerminals`), and answers permission requests on stdin or with
``--yes`` / ``--no`` (no answer is ``cancelled``, never an approval). Ctrl-C once sends
``session/cancel`` and waits for the answer; twice disposes the prompt (``$/cancel_request``).
``--timeout`` bounds each turn and ``--startup-timeout`` the start-up calls (``initialize``,
``authenticate``, ``session/new``; default: ``--timeout`` if given, else the SDK's 60 s);
while the agent is silent, progress lines go to stderr. ``--show-stderr`` shows a spawned
agent's stderr live (otherwise only its tail, when it exits or start-up times out). A line on
the agent's stdout that is not JSON-RPC is shown as it arrives (:mod:`.stdout_junk`), and an
answer rxacp refused (say ``protocolVersion: "one"``) is reported as the agent's, naming the
field — not as an error answer.

Exit codes: 0 when every turn ended (any stop reason), 1 on an error (message on stderr),
2 on bad arguments, 130 after Ctrl-C aborted a call.

This module is *not* responsible for the wire log format (``rxacp.transport.WireTapTransport``)
or for how updates look (``render.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import time
from collections.abc import Callable
from typing import IO, Any

from ..client import (
    AcpAsyncClient,
    AcpClient,
    CancellationSignal,
    LocalTerminals,
    WorkspaceFileSystem,
)
from ..errors import (
    AcpErrorCodes,
    AcpException,
    AcpProtocolException,
    AcpRemoteException,
    AcpTimeoutException,
)
from ..schema import (
    PromptRequest,
    RequestPermissionRequest,
)
from ..schema import (
    RequestPermissionResponse as PermissionResponse,
)
from ..transport import AcpTransport, AgentParameters, StdioAcpClientTransport, WireTapTransport
from ..transport.tap import WireFrame
from .agent_arg import add_agent_argument, is_url, parse_agent, url_transport
from .interact import Aborted, PermissionPolicy, Waiter, auth_help
from .render import JsonRenderer, Style, UpdateRenderer, clean, colors_enabled, is_terminal
from .stdout_junk import junk_hint, read_line

__all__ = ["PermissionPolicy", "add_arguments", "make_transport", "run"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rxacp prompt`` options."""
    add_agent_argument(parser, "python -m rxacp.testing.reference_agent")
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        default=os.environ.get("RXACP_AGENT_TOKEN") or None,
        help="bearer token for a ws:// agent started with token= "
        "(default: $RXACP_AGENT_TOKEN; the variable keeps it out of the process list)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session directory (default: current)")
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--yes", action="store_true", help="allow every permission request")
    answer.add_argument("--no", action="store_true", help="reject every permission request")
    parser.add_argument(
        "--auth", metavar="METHOD_ID", help="authenticate with this auth method before session/new"
    )
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help="bound each prompt turn (and start-up, unless --startup-timeout is given)",
    )
    parser.add_argument(
        "--startup-timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help="bound initialize, authenticate and session/new "
        "(default: --timeout if given, else 60)",
    )
    parser.add_argument(
        "--show-stderr",
        action="store_true",
        help="show the agent's stderr as it arrives (a spawned agent)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print each update as a JSON line on stdout"
    )
    parser.add_argument(
        "--hide-thoughts", action="store_true", help="do not show the agent's thoughts"
    )
    parser.add_argument(
        "--terminals",
        action="store_true",
        help="serve terminal/* requests: run the agent's commands locally (cwd confined)",
    )
    parser.add_argument(
        "--terminal-shell",
        action="store_true",
        help="with --terminals: run commands through /bin/sh -c (for agents that send a "
        "whole command line)",
    )
    parser.add_argument(
        "--protocol-version",
        type=int,
        choices=(1, 2),
        default=1,
        help="ACP version to ask for (2: the v2 Draft, experimental; falls back to 1 when the "
        "agent answers 1)",
    )
    parser.add_argument("--log-wire", metavar="FILE", help="record JSON-RPC traffic (JSON lines)")
    parser.add_argument(
        "--progress-every", type=_positive_seconds, default=5.0, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "text",
        nargs="*",
        metavar="TEXT",
        help="the prompt (none: an interactive session, one turn per line of stdin)",
    )


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def make_transport(
    agent: str,
    err: IO[str],
    prog: str,
    token: str | None = None,
    on_stderr_line: Callable[[str], None] | None = None,
) -> AcpTransport | int:
    """The transport for ``--agent`` (a command line, a ws:// or an http:// URL), or an exit
    code. ``token``: the bearer token a remote agent started with ``token=`` requires;
    ``on_stderr_line``: called with each stderr line of a spawned agent (on its loop)."""
    command = parse_agent(agent, prog, err)
    if command is None:
        return EXIT_USAGE
    if is_url(agent):
        return url_transport(command[0], token=token)
    if shutil.which(command[0]) is None:
        err.write(f"{prog}: cannot find the agent command {command[0]!r}\n")
        return EXIT_ERROR
    return StdioAcpClientTransport(
        AgentParameters(command[0], command[1:], on_stderr_line=on_stderr_line)
    )


class _StdoutJunk:
    """Says what arrived on the agent's stdout that is not JSON-RPC (the first few lines, then
    how many more), as it arrives; it counts as activity from the agent."""

    SHOWN = 3

    def __init__(self, show: _Output, activity: Callable[[], None]) -> None:
        self._show = show
        self._activity = activity
        self.count = 0
        self.glued = False

    def __call__(self, frame: WireFrame) -> None:
        if frame.direction != "in" or not isinstance(frame.raw, bytes | str):
            return
        decoded = frame.message  # the tap decoded it already: re-read junk only
        if isinstance(decoded, dict) and decoded.get("jsonrpc") == "2.0":
            return
        _message, junk = read_line(frame.raw)
        if junk is None:
            return
        self._activity()
        self.count += 1
        style = self._show.style
        hint = junk_hint(junk)
        self.glued = self.glued or bool(hint)
        if self.count <= self.SHOWN:
            self._show.say(
                style("! the agent wrote a line that is not JSON-RPC to stdout: ", "yellow")
                + clean(repr(junk))
                + (style(f" — {clean(hint)}", "yellow") if hint else "")
            )
        elif self.count == self.SHOWN + 1:
            self._show.say(style("! more lines that are not JSON-RPC on its stdout", "yellow"))

    def summary(self) -> str:
        """For an error: ``""``, or how many junk lines came (they were shown as they came)."""
        if not self.count:
            return ""
        lost = " (one held a JSON-RPC message after other text)" if self.glued else ""
        return f"; the agent wrote {self.count} line(s) that are not JSON-RPC to stdout{lost}"


class _Output:
    """Where things go: the update consumer, notes (stderr) and error lines."""

    def __init__(self, args: argparse.Namespace, out: IO[str], err: IO[str]) -> None:
        self.style = Style(colors_enabled(err))
        self.err = err
        self.text = UpdateRenderer(out, err, self.style, show_thoughts=not args.hide_thoughts)
        self.json = JsonRenderer(out) if args.json else None
        self.side = UpdateRenderer(err, err, self.style) if args.json else self.text

    def consumer(self, notification: Any) -> None:
        (self.json or self.text)(notification)

    def say(self, text: str) -> None:
        self.side.note(text)

    def error(self, text: str, exc: BaseException | None = None) -> None:
        """One ``error:`` line (agent-supplied parts cannot break it); a spawned agent's stderr
        tail, when the error carries one, follows indented, a line per stderr line."""
        self.text.end()
        tail = ""
        if getattr(exc, "stderr_tail", None):
            text, _, tail = text.partition("\n")
        lines = [self.style("error: ", "red", "bold") + clean(text)]
        lines += [f"  {clean(line)}" for line in tail.splitlines()]
        self.err.write("".join(line + "\n" for line in lines))
        self.err.flush()
        if self.json is not None:
            code = exc.code if isinstance(exc, AcpProtocolException) else None
            data = exc.data if isinstance(exc, AcpProtocolException) else None
            message = exc.message if isinstance(exc, AcpProtocolException) else text
            self.json.error(code, message, data)


def run(
    args: argparse.Namespace,
    *,
    out: IO[str],
    err: IO[str],
    stdin: IO[str] | None,
) -> int:
    """Run ``rxacp prompt`` with parsed ``args``; returns the exit code."""
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        err.write(f"rxacp prompt: --cwd {cwd} is not a directory\n")
        return EXIT_USAGE
    if args.terminal_shell and not args.terminals:
        err.write("rxacp prompt: --terminal-shell needs --terminals\n")
        return EXIT_USAGE
    show = _Output(args, out, err)
    style = show.style

    def stderr_line(line: str) -> None:
        show.side.side_line(style("agent stderr: ", "dim") + clean(line))

    transport = make_transport(
        args.agent,
        err,
        "rxacp prompt",
        token=args.token,
        on_stderr_line=stderr_line if args.show_stderr else None,
    )
    if isinstance(transport, int):
        return transport
    if args.show_stderr and is_url(args.agent):
        show.say(style("--show-stderr: a ws:// agent's stderr is not visible here", "yellow"))
    waiter = Waiter(show.say, style, progress_every=args.progress_every)
    junk = _StdoutJunk(show, waiter.activity)
    transport = WireTapTransport(transport, args.log_wire, on_frame=junk)
    interactive = not args.text
    stdin_tty = is_terminal(stdin)
    fs = WorkspaceFileSystem(
        cwd, on_access=lambda action, path: show.say(style(f"· {action} {clean(path)}", "dim"))
    )
    mode = "yes" if args.yes else "no" if args.no else "ask"
    policy = PermissionPolicy(mode, show.say, style, stdin, can_ask=not interactive or stdin_tty)

    async def ask(request: RequestPermissionRequest) -> PermissionResponse:
        return await asyncio.to_thread(policy, request)  # it may block reading stdin

    # the async client: consumers run on the connection's loop, in order, before each answer
    builder = (
        AcpClient.async_(transport)
        .session_update_consumer(waiter.activity)
        .session_update_consumer(show.consumer)
        .read_text_file_handler(fs.read_text_file_async)
        .write_text_file_handler(fs.write_text_file_async)
        .request_permission_handler(ask)
    )
    startup = args.startup_timeout if args.startup_timeout is not None else args.timeout
    if startup is not None:
        builder.request_timeout(startup)
    if args.timeout is not None:
        builder.prompt_timeout(args.timeout)
    if args.protocol_version == 2:
        builder.protocol_v2()
    terminals: LocalTerminals | None = None
    if args.terminals:
        terminals = LocalTerminals(
            cwd,
            shell=args.terminal_shell,
            on_spawn=lambda argv, where: show.say(
                style(f"· terminal: {clean(shlex.join(argv))} (in {clean(where)})", "dim")
            ),
        )
        terminals.install(builder)
    client = builder.build()
    session = _Session(client, waiter, show, args, cwd)
    try:
        session.start()
        if not interactive:
            return session.turn(" ".join(args.text))
        return session.interact(stdin, stdin_tty)
    except Aborted as exc:
        show.text.end()
        show.say(style(f"aborted while waiting for {exc}: disposed ($/cancel_request sent)", "red"))
        return EXIT_INTERRUPTED
    except _AuthRequired as exc:
        show.error(f"{exc.headline}: {exc.cause}", exc.cause)
        for line in auth_help(exc.methods):
            err.write(line + "\n")
        return EXIT_ERROR
    except AcpProtocolException as exc:
        show.error(_protocol_error_text(exc), exc)
        return EXIT_ERROR
    except AcpException as exc:
        head, newline, tail = str(exc).partition("\n")
        if isinstance(exc, AcpTimeoutException):  # the CLI's flag, not the builder option
            flag = "--timeout" if exc.method == "session/prompt" else "--startup-timeout"
            head = f"{exc.method} timed out after {exc.timeout_seconds:g} s (raise it with {flag})"
        show.error(head + junk.summary() + newline + tail, exc)
        return EXIT_ERROR
    finally:
        client.close_gracefully(2.0)
        if terminals is not None:
            terminals.close()


def _protocol_error_text(exc: AcpProtocolException) -> str:
    """An error answer is the agent's (with its code); any other protocol error is rxacp
    refusing what the agent sent (an invalid result names the field), without rxacp's code."""
    if isinstance(exc, AcpRemoteException):
        return f"the agent answered with an error: {exc}"
    return exc.message


def _auth_method_id(method: Any) -> Any:
    """An advertised auth method's id: ``id`` in v1, ``methodId`` in v2."""
    wire = method.to_wire()
    return wire.get("id") or wire.get("methodId")


class _AuthRequired(Exception):
    def __init__(
        self,
        cause: AcpProtocolException,
        methods: list[Any] | None,
        headline: str = "the agent requires authentication",
    ) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.methods = methods
        self.headline = headline


class _Session:
    """One connection: start-up, then turns."""

    def __init__(
        self,
        client: AcpAsyncClient,
        waiter: Waiter,
        show: _Output,
        args: argparse.Namespace,
        cwd: str,
    ) -> None:
        self.client = client
        self.calls = client
        self.waiter = waiter
        self.show = show
        self.args = args
        self.cwd = cwd
        self.session_id = ""
        self.auth_methods: list[Any] | None = None

    def start(self) -> None:
        style = self.show.style
        init = self.waiter.wait(self.calls.initialize(), "the agent to answer initialize")
        info = getattr(init, "agent_info", None) or getattr(init, "info", None)  # v1 | v2
        name = f"{clean(info.name)} {clean(info.version)}" if info is not None else "agent"
        asked = getattr(self.args, "protocol_version", 1)
        fell_back = f" (asked for {asked})" if asked != init.protocol_version else ""
        self.show.say(
            style(f"connected to {name} · protocol {init.protocol_version}{fell_back}", "dim")
        )
        if self.show.json is not None and asked != 1:  # v1 --json output stays as it was
            self.show.json.emit({"type": "initialized", "protocolVersion": init.protocol_version})
        self.auth_methods = list(init.auth_methods or [])
        if self.args.auth:
            known = [_auth_method_id(m) for m in self.auth_methods]
            if self.args.auth not in known:
                raise _AuthRequired(
                    AcpProtocolException(
                        AcpErrorCodes.INVALID_PARAMS,
                        f"--auth {self.args.auth!r} is not one of the agent's auth methods",
                    ),
                    self.auth_methods,
                    "cannot authenticate",
                )
            self._call(self.calls.authenticate({"methodId": self.args.auth}), "authenticate")
            self.show.say(style(f"authenticated with {clean(self.args.auth)}", "dim"))
        new_session = {"cwd": self.cwd, "mcpServers": []}  # the same wire in v1 and v2
        new = self._call(self.calls.new_session(new_session), "session/new")
        self.session_id = new.session_id

    def _call(self, source: Any, what: str) -> Any:
        try:
            return self.waiter.wait(source, f"the agent to answer {what}")
        except AcpProtocolException as exc:
            if exc.code == AcpErrorCodes.AUTH_REQUIRED:
                raise _AuthRequired(exc, self.auth_methods) from exc
            raise

    def turn(self, text: str) -> int:
        """One prompt turn; returns the exit code."""
        style = self.show.style
        stop = CancellationSignal()
        request = PromptRequest.text(self.session_id, text).to_wire()  # v1 and v2 alike
        try:
            response = self.waiter.wait(
                self.calls.prompt(request, stop), "the agent's answer", stop=stop
            )
        except AcpProtocolException as exc:
            if exc.code == AcpErrorCodes.AUTH_REQUIRED:
                raise _AuthRequired(exc, self.auth_methods) from exc
            raise
        finally:
            self.show.text.end()
        reason = clean(getattr(response, "stop_reason", "unknown"))
        detail = ""
        if self.waiter.cancelled_at is not None:
            elapsed = (time.monotonic() - self.waiter.cancelled_at) * 1000
            detail = f" ({elapsed:.0f} ms after session/cancel)"
        color = "green" if reason == "end_turn" else "yellow"
        self.show.say(style(f"■ {reason}", color, "bold") + style(detail, "dim"))
        if self.show.json is not None:
            self.show.json.response(self.session_id, response)
        return EXIT_OK

    def interact(self, stdin: IO[str] | None, tty: bool) -> int:
        """Turns from stdin lines until end of input; an agent error ends only its turn."""
        if stdin is None:
            return EXIT_OK
        style = self.show.style
        if tty:
            self.show.say(style("one turn per line · Ctrl-C cancels a turn · Ctrl-D ends", "dim"))
        code = EXIT_OK
        while True:
            if tty:
                self.show.err.write(style("> ", "bold"))
                self.show.err.flush()
            try:
                line = stdin.readline()
            except KeyboardInterrupt:
                self.show.err.write("\n")
                return EXIT_INTERRUPTED
            if not line:
                return code
            text = line.strip()
            if not text:
                continue
            try:
                self.turn(text)
            except AcpProtocolException as exc:
                self.show.error(_protocol_error_text(exc), exc)
                code = EXIT_ERROR
            except Aborted:
                self.show.say(
                    style("aborted: the turn was disposed ($/cancel_request sent)", "red")
                )
