"""The rxacp reference agent: a real ACP agent over stdio, for demos, interop and client tests.

Run it with ``python -m rxacp.testing.reference_agent [--api sync|async|decorators]
[--cancel-grace SECONDS] [--max-prompt-duration SECONDS] [--hold-prompt-while-cancelling]
[--protocol-versions 1|1,2|2] [--log-wire FILE]``. With ``--protocol-versions 1,2`` it also
serves ACP v2 (Draft) clients (``_reference_v2.py``); without it, v1 only. The prompt's text
selects a behaviour (see :data:`~rxacp.testing._reference_script.BEHAVIOURS`):

==========================  ====================================================================
``echo <text>``             one ``agent_message_chunk`` with the text, ``end_turn``
``stream <N>``              N chunks, ``end_turn``
``slow <seconds>``          a chunk every 0.1 s; stops as soon as the turn is cancelled
``stubborn <seconds>``      a chunk every 0.1 s, ignoring cancellation (exercises the grace period)
``read <abs path>``         ``fs/read_text_file``, echoes the content
``write <abs path> <text>`` ``fs/write_text_file``
``permission [title]``      asks allow/reject, echoes the chosen option id or ``cancelled``
``terminal <command...>``   runs it in a client terminal, echoes its output
``plan`` / ``tool``         plan updates / a tool call with its updates
``fail``                    raises, so the prompt is answered ``-32603``
anything else               echoed
==========================  ====================================================================

``--listen http://HOST:PORT`` serves it remotely instead (Streamable HTTP and WebSocket at
``/acp``, one agent per connection; needs ``rxacp[http]``; ``--token``/``$RXACP_AGENT_TOKEN``
requires a bearer token, ``--allow-origin`` lets a web page in). :func:`asgi_app` is the same
app as a factory for any ASGI server: ``uvicorn --factory
rxacp.testing.reference_agent:asgi_app`` (options from ``$RXACP_REFERENCE_API`` and
``$RXACP_AGENT_TOKEN``).

``--help`` prints this vocabulary (:data:`~rxacp.testing._reference_script.VOCABULARY`).
It also serves ``session/new`` (process-unique ids ``ref-<uuid>``), ``session/load`` (replays
the history), ``session/list``, ``session/close`` and ``session/set_mode`` (modes ``default``
and ``fast``), and exits when its stdin closes. The same behaviour scripts drive all three APIs.

This module is *not* responsible for the behaviours themselves (``_reference_script.py``) nor
for any client-side logic.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent import (
    AcpAgent,
    AcpAsyncAgent,
    AcpSyncAgent,
    PromptContext,
    SyncAgentBuilder,
    SyncPromptContext,
)
from ..errors import AcpProtocolException, peer_echo
from ..schema import (
    AgentMessageChunk,
    CloseSessionRequest,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    SessionInfo,
    SessionMode,
    SessionModeState,
    SessionNotification,
    SetSessionModeRequest,
    TextContent,
    UserMessageChunk,
)
from ..transport import AcpTransport, StdioAcpAgentTransport
from ._reference_run import run_blocking, run_reactive
from ._reference_script import VOCABULARY, Script, recorded, script_for

__all__ = [
    "AGENT_NAME",
    "MODES",
    "ReferenceOptions",
    "ReferenceSessions",
    "asgi_app",
    "build_agent",
    "main",
    "package_version",
]

AGENT_NAME = "rxacp-reference"
"""The ``agentInfo.name`` of the reference agent."""

MODES = (("default", "Default"), ("fast", "Fast"))
"""The session modes the reference agent offers (id, name)."""

APIS = ("sync", "async", "decorators")


def package_version() -> str:
    """The installed rxacp version (\"0\" in an uninstalled source checkout)."""
    try:
        return importlib.metadata.version("rxacp")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "0"


@dataclass
class _Exchange:
    """One prompt of a session's history: the user's text and the agent's chunks so far.

    The chunks are kept as a list and joined only when the history is read
    (``session/load``), so recording a streamed answer costs O(1) per chunk, not a rebuild of
    the whole answer per chunk (``stream 100000`` was quadratic: 28.9 s).
    """

    user: str
    agent: list[str] = field(default_factory=list)


@dataclass
class _Session:
    cwd: str
    mode: str = "default"
    history: list[_Exchange] = field(default_factory=list)


class ReferenceSessions:
    """The reference agent's sessions (thread-safe): creation, history, modes, listing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}

    def _modes(self, current: str) -> SessionModeState:
        return SessionModeState(
            current_mode_id=current,
            available_modes=[SessionMode(id=mid, name=name) for mid, name in MODES],
        )

    def _get(self, session_id: str) -> _Session:
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise AcpProtocolException.resource_not_found(
                f"unknown session {peer_echo(session_id)}; create one with session/new"
            )
        return session

    def new_session(self, request: NewSessionRequest) -> NewSessionResponse:
        """``session/new``: a fresh session in mode ``default``."""
        with self._lock:
            # Process-unique: clients persist session ids across runs (a counter would make
            # every run's first session "ref-1" and collide with the last run's).
            session_id = f"ref-{uuid.uuid4()}"
            self._sessions[session_id] = _Session(cwd=request.cwd)
        return NewSessionResponse(session_id=session_id, modes=self._modes("default"))

    def load_session(
        self, request: LoadSessionRequest, send: Callable[[SessionNotification], None]
    ) -> LoadSessionResponse:
        """``session/load``: replay the history as ``session/update``\\ s, then answer."""
        session = self._get(request.session_id)
        for user, agent in self.history(request.session_id):
            for update in (
                UserMessageChunk(content=TextContent(text=user)),
                AgentMessageChunk(content=TextContent(text=agent)),
            ):
                send(SessionNotification(session_id=request.session_id, update=update))
        return LoadSessionResponse(modes=self._modes(session.mode))

    def history(self, session_id: str) -> list[tuple[str, str]]:
        """A session's exchanges as ``(user text, agent text)`` (resource-not-found if none)."""
        session = self._get(session_id)
        with self._lock:
            return [(e.user, "".join(e.agent)) for e in session.history]

    def mode(self, session_id: str) -> str:
        """A session's mode id (``default`` or ``fast``)."""
        return self._get(session_id).mode

    def list_sessions(self, request: ListSessionsRequest) -> ListSessionsResponse:
        """``session/list``: every open session (of ``cwd``, if given)."""
        with self._lock:
            items = list(self._sessions.items())
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=sid,
                    cwd=s.cwd,
                    title=s.history[0].user[:40] if s.history else None,
                )
                for sid, s in items
                if request.cwd is None or request.cwd == s.cwd
            ]
        )

    def close_session(self, request: CloseSessionRequest) -> None:
        """``session/close``: forget the session (the SDK already cancelled its turn)."""
        with self._lock:
            self._sessions.pop(request.session_id, None)

    def set_mode(self, request: SetSessionModeRequest) -> None:
        """``session/set_mode``: ``default`` or ``fast``."""
        self.set_mode_id(request.session_id, request.mode_id)

    def set_mode_id(self, session_id: str, mode_id: str) -> None:
        """Set a session's mode (``default`` or ``fast``; else invalid params)."""
        if mode_id not in dict(MODES):
            raise AcpProtocolException.invalid_params(
                f"unknown mode {peer_echo(mode_id)}; available: {', '.join(dict(MODES))}"
            )
        self._get(session_id).mode = mode_id

    def script(self, request: PromptRequest) -> Script:
        """The behaviour script of a prompt, recording the exchange in the session's history."""
        session = self._get(request.session_id)
        text = request.prompt_text()
        exchange = _Exchange(text)
        with self._lock:
            session.history.append(exchange)
        chunks = exchange.agent
        lock = self._lock

        def sink(chunk: str) -> None:
            with lock:
                chunks.append(chunk)

        return recorded(script_for(text, request.session_id), sink)


@dataclass(frozen=True)
class ReferenceOptions:
    """The reference agent's timing options (seconds; ``None``: the SDK default)."""

    cancel_grace: float | None = None
    max_prompt_duration: float | None = None
    hold_prompt_while_cancelling: bool = False
    """Hold a prompt that arrives while its session's turn is cancelling (default: -32600)."""
    protocol_versions: tuple[int, ...] = (1,)
    """The ACP versions served: ``(1,)`` (default), ``(1, 2)`` or ``(2,)`` (v2 is a Draft)."""

    def apply(self, builder: Any) -> None:
        """Set these options on an agent builder (any of the three APIs')."""
        if self.cancel_grace is not None:
            builder.cancel_grace_period(self.cancel_grace)
        if self.max_prompt_duration is not None:
            builder.max_prompt_duration(self.max_prompt_duration)
        if self.hold_prompt_while_cancelling:
            builder.hold_prompt_while_cancelling()


Runnable = AcpSyncAgent | AcpAsyncAgent | Any


def build_agent(api: str, transport: AcpTransport, options: ReferenceOptions) -> Runnable:
    """Build the reference agent with the given API over ``transport`` (not started).

    ``api`` is ``"sync"``, ``"async"`` or ``"decorators"``; the last needs
    ``rxacp.agent.support`` and raises :class:`RuntimeError` naming it when it is missing.
    """
    sessions = ReferenceSessions()
    if api == "decorators" and 2 in options.protocol_versions:
        raise RuntimeError("ACP v2 (--protocol-versions with 2) needs --api sync or --api async")
    if api == "decorators":
        return _build_decorated(transport, options, sessions)
    if api not in ("sync", "async"):
        raise ValueError(f"api must be one of {', '.join(APIS)}, got {api!r}")
    builder = AcpAgent.sync(transport) if api == "sync" else AcpAgent.async_(transport)
    holder: list[Any] = []

    def send(note: SessionNotification) -> None:
        holder[0].send_session_update(note)

    def prompt_sync(request: PromptRequest, ctx: SyncPromptContext) -> Any:
        return run_blocking(sessions.script(request), ctx)

    def client_behind() -> bool:
        return bool(holder[0].session.outbound_paused)

    def prompt_async(request: PromptRequest, ctx: PromptContext) -> Any:
        return run_reactive(sessions.script(request), ctx, client_behind)

    builder.agent_info(name=AGENT_NAME, version=package_version(), title="rxacp reference agent")
    options.apply(builder)
    builder.new_session_handler(sessions.new_session)
    builder.load_session_handler(lambda req: sessions.load_session(req, send))
    builder.list_sessions_handler(sessions.list_sessions)
    builder.close_session_handler(sessions.close_session)
    builder.set_session_mode_handler(sessions.set_mode)
    if isinstance(builder, SyncAgentBuilder):
        builder.prompt_handler(prompt_sync)
    else:
        builder.prompt_handler(prompt_async)
    if 2 in options.protocol_versions:
        from ._reference_v2 import v2_handlers

        def send_v2(note: dict[str, Any]) -> None:
            holder[0].session.send_notification("session/update", note)

        info = {"name": AGENT_NAME, "version": package_version(), "title": "rxacp reference agent"}
        builder.protocol_v2(v2_handlers(api, sessions, info, send_v2, client_behind))
        builder.protocol_versions(*options.protocol_versions)
    agent = builder.build()
    holder.append(agent)
    return agent


def _build_decorated(
    transport: AcpTransport, options: ReferenceOptions, sessions: ReferenceSessions
) -> Any:
    try:
        from ._reference_decorated import build_decorated
    except ImportError as exc:
        raise RuntimeError(
            "--api decorators needs rxacp.agent.support (decorator agents), which this rxacp "
            f"build does not provide ({exc}); use --api sync or --api async"
        ) from exc
    return build_decorated(transport, options, sessions)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def _versions(text: str) -> tuple[int, ...]:
    try:
        versions = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        versions = ()
    if not versions or not set(versions) <= {1, 2}:
        raise argparse.ArgumentTypeError(f"expected 1, 2 or 1,2, got {text!r}")
    return versions


def _parser() -> argparse.ArgumentParser:
    width = max(len(usage) for usage, _ in VOCABULARY)
    vocabulary = "\n".join(f"  {usage.ljust(width)}  {what}" for usage, what in VOCABULARY)
    parser = argparse.ArgumentParser(
        prog="python -m rxacp.testing.reference_agent",
        description="The rxacp reference ACP agent (speaks ACP on stdin/stdout).",
        epilog=(
            "prompt vocabulary (the prompt's first word selects the behaviour):\n"
            f"{vocabulary}\n\n"
            "sessions: session/new (process-unique ids, ref-<uuid>), load (replays the "
            "history), list, close, set_mode (default, fast)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--api", choices=APIS, default="sync", help="which rxacp API to use")
    parser.add_argument(
        "--cancel-grace",
        type=_seconds,
        metavar="SECONDS",
        help="cancel grace period (SDK default 60; 0 disables)",
    )
    parser.add_argument(
        "--max-prompt-duration",
        type=_seconds,
        metavar="SECONDS",
        help="maximum prompt turn duration (default off)",
    )
    parser.add_argument(
        "--hold-prompt-while-cancelling",
        action="store_true",
        help="hold a prompt that arrives while its session's turn is cancelling until that turn "
        "answered (default: answer it -32600); for clients that ask again right after "
        "session/cancel",
    )
    parser.add_argument(
        "--protocol-versions",
        type=_versions,
        default=(1,),
        metavar="1|1,2|2",
        help="ACP versions to serve (default 1; 2 is the v2 Draft, experimental): a client's "
        "initialize picks one per connection",
    )
    parser.add_argument("--log-wire", metavar="FILE", help="record JSON-RPC traffic as JSON lines")
    parser.add_argument(
        "--listen",
        metavar="http://HOST:PORT",
        help="serve remotely (Streamable HTTP and WebSocket at /acp, one agent per connection; "
        "needs rxacp[http]) instead of on stdin/stdout",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("RXACP_AGENT_TOKEN"),
        help="with --listen: require 'Authorization: Bearer TOKEN' (default $RXACP_AGENT_TOKEN)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --listen: a web page origin allowed in (browsers are refused); repeatable",
    )
    return parser


def asgi_app(
    api: str | None = None,
    options: ReferenceOptions | None = None,
    **app_options: Any,
) -> Any:
    """The reference agent as an ASGI app (``AcpAsgiApp``): one agent per connection, over
    Streamable HTTP and WebSocket at ``/acp``. With no arguments (``uvicorn --factory
    rxacp.testing.reference_agent:asgi_app``) the API comes from ``$RXACP_REFERENCE_API``
    (default ``sync``) and a bearer token from ``$RXACP_AGENT_TOKEN``; ``app_options`` go to
    ``AcpAsgiApp`` (``token=``, ``allowed_origins=``...)."""
    from ..transport.http import AcpAsgiApp

    chosen = api or os.environ.get("RXACP_REFERENCE_API", "sync")
    if chosen not in APIS:
        raise ValueError(f"api must be one of {', '.join(APIS)}, got {chosen!r}")
    opts = options or ReferenceOptions()
    app_options.setdefault("token", os.environ.get("RXACP_AGENT_TOKEN") or None)
    return AcpAsgiApp(lambda transport: build_agent(chosen, transport, opts), **app_options)


def _listen(args: argparse.Namespace, options: ReferenceOptions) -> int:
    split = urllib.parse.urlsplit(args.listen)
    if split.scheme != "http" or not split.hostname or split.path not in ("", "/", "/acp"):
        print(
            f"reference agent: --listen takes http://HOST:PORT, got {args.listen!r}",
            file=sys.stderr,
        )
        return 2
    try:
        from ..transport.http._serve import serve

        app = asgi_app(
            args.api, options, token=args.token or None, allowed_origins=args.allow_origin
        )
        port = split.port or 80
        print(f"reference agent: serving http://{split.hostname}:{port}/acp", file=sys.stderr)
        serve(app, split.hostname, port)
    except ImportError as exc:
        print(f"reference agent: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Serve ACP on stdin/stdout until stdin closes; returns the exit code."""
    args = _parser().parse_args(argv)
    options = ReferenceOptions(
        args.cancel_grace, args.max_prompt_duration, args.hold_prompt_while_cancelling
    )
    if args.listen:
        return _listen(args, options)
    transport: AcpTransport = StdioAcpAgentTransport()
    if args.log_wire:
        from ..transport.tap import WireTapTransport

        transport = WireTapTransport(transport, args.log_wire)
    options = ReferenceOptions(
        args.cancel_grace,
        args.max_prompt_duration,
        args.hold_prompt_while_cancelling,
        args.protocol_versions,
    )
    try:
        agent = build_agent(args.api, transport, options)
    except RuntimeError as exc:
        print(f"reference agent: {exc}", file=sys.stderr)
        return 2
    agent.start()
    try:
        while not agent.session.wait_closed(0.5):
            pass
    except KeyboardInterrupt:
        return 130
    finally:
        agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
