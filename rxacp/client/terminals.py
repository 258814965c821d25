"""``LocalTerminals``: ready-made ``terminal/*`` handlers that run commands on this machine.

The counterpart of :class:`~rxacp.client.WorkspaceFileSystem` for the five terminal methods:

- ``terminal/create`` spawns ``command`` with ``args`` as an argv (never through a shell unless
  ``shell=True``), in its own session and process group, with ``cwd`` confined to the workspace
  roots (default: the first root) and the request's ``env`` on top of this process's
  environment (``inherit_env=False``: only the request's). stdin is ``/dev/null``; stdout and
  stderr are captured together. It answers at once with the terminal id;
- output is kept up to the request's ``outputByteLimit`` (and never more than
  ``max_output_bytes``): past it the *oldest* bytes are dropped, at a UTF-8 character boundary,
  and ``truncated`` is set, as the spec says;
- ``terminal/output`` answers what was captured so far (invalid UTF-8 is replaced, an
  incomplete trailing character is held back until more arrives) and the exit status once the
  command exited; ``terminal/wait_for_exit`` answers when it exits; ``terminal/kill`` kills the
  command's whole process group (``SIGKILL``) and keeps the terminal; ``terminal/release`` kills
  it if still running, reaps it and forgets the id;
- every terminal of a session is killed when the client closes that session
  (``session/close``), and every terminal when the client's connection ends;
- at most ``max_running`` commands run at once and at most ``max_terminals`` terminals exist
  (released or not): a ``terminal/create`` past either is answered ``-32600`` saying so.

Bad requests are answered ``-32602`` naming the problem (relative or outside-the-roots ``cwd``,
a command that does not exist, an invalid environment variable name); an unknown terminal id,
or one of another session, is ``-32002``.

Use it with either builder (one call registers all five handlers and the close hooks)::

    terminals = LocalTerminals(["/home/me/project"])
    terminals.install(AcpClient.sync(transport))      # or AcpClient.async_(transport)

Killing a command kills its process group and also the descendants that left it (``setsid``):
those found below the command while it runs, and whoever still holds its output pipe after it
exited (Linux ``/proc``; elsewhere only the group is killed).

This module is *not* responsible for a pseudo-terminal (commands see pipes, not a TTY) or for
sandboxing the command (it runs with this process's rights; ``cwd`` confinement is not a
jail; a descendant that left the group *and* closed the output pipe after the command
exited is out of reach).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

from .._durations import Duration, wait_seconds
from ..errors import AcpProtocolException, peer_echo
from ..schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
)
from ..schema import methods as m
from ._terminal_process import LocalTerminal
from ._terminal_requests import argv_of, cwd_of, env_of, limit_of, spawn
from .fs import WorkspaceFileSystem, threaded

__all__ = ["LocalTerminals"]

_B = TypeVar("_B")

DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024
"""Default cap on the output one terminal retains (whatever the request's limit): 8 MiB."""


class LocalTerminals:
    """Serves the ACP ``terminal/*`` requests by running commands locally (module docstring).

    Args:
        roots: the workspace root(s) a terminal's ``cwd`` must lie in (absolute, existing).
        shell: run ``command`` (plus its quoted ``args``) through ``/bin/sh -c`` instead of as
            an argv. Agents that send a whole command line in ``command`` need this.
        inherit_env: start from this process's environment (default) or from an empty one.
        max_running: commands that may run at once.
        max_terminals: terminals that may exist at once (running or exited, not released).
        max_output_bytes: the most output one terminal retains, whatever the request asks.
        reap_timeout: how long ``release`` and :meth:`close` wait for a killed command.
        on_spawn: called with ``(argv, cwd)`` after each command started (to show the user what
            the agent runs).
    """

    def __init__(
        self,
        roots: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        shell: bool = False,
        inherit_env: bool = True,
        max_running: int = 16,
        max_terminals: int = 64,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        reap_timeout: Duration = 5.0,
        on_spawn: Callable[[list[str], str], None] | None = None,
    ) -> None:
        self._workspace = WorkspaceFileSystem(roots)
        for name, value in (
            ("max_running", max_running),
            ("max_terminals", max_terminals),
            ("max_output_bytes", max_output_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.roots: tuple[str, ...] = self._workspace.roots
        """The real paths of the workspace roots."""
        self.shell = shell
        self.inherit_env = inherit_env
        self.max_running = max_running
        self.max_terminals = max_terminals
        self.max_output_bytes = max_output_bytes
        self.reap_timeout = wait_seconds(reap_timeout, default=5.0, name="reap_timeout")
        self._lock = threading.Lock()
        self._terminals: dict[str, LocalTerminal] = {}
        self._ids = itertools.count(1)
        self._prefix = os.urandom(4).hex()
        self._closed = False
        self._on_spawn = on_spawn
        self._reaping: set[LocalTerminal] = set()

    # ------------------------------------------------------------------ state
    @property
    def running_count(self) -> int:
        """Commands started here that have not exited yet (released ones included)."""
        with self._lock:
            return sum(1 for t in self._terminals.values() if not t.exited.is_set())

    @property
    def terminal_ids(self) -> list[str]:
        """The ids of the terminals not released yet."""
        with self._lock:
            return [t.id for t in self._terminals.values() if not t.released]

    def _get(self, session_id: str, terminal_id: str) -> LocalTerminal:
        with self._lock:
            term = self._terminals.get(terminal_id)
        if term is None or term.released or term.session_id != session_id:
            raise AcpProtocolException.resource_not_found(
                f"unknown terminal {peer_echo(terminal_id)} for this session "
                "(never created, or released)"
            )
        return term

    # ------------------------------------------------------------------ spawning
    def _admit(self) -> None:
        if self._closed:
            raise AcpProtocolException.invalid_request("the client's terminals are closed")
        live = [t for t in self._terminals.values() if not t.released]
        if len(live) >= self.max_terminals:
            raise AcpProtocolException.invalid_request(
                f"too many terminals: {len(live)} exist (limit {self.max_terminals}); "
                "release some with terminal/release"
            )
        running = sum(1 for t in self._terminals.values() if not t.exited.is_set())
        if running >= self.max_running:
            raise AcpProtocolException.invalid_request(
                f"too many running commands: {running} (limit {self.max_running}); "
                "wait for one to exit, or kill or release one"
            )

    # ------------------------------------------------------------------ handlers (blocking)
    def create_terminal(self, request: CreateTerminalRequest) -> CreateTerminalResponse:
        """``terminal/create``: start the command; answers its terminal id at once."""
        argv = argv_of(request, self.shell)
        cwd = cwd_of(self._workspace, request.cwd)
        env = env_of(request, self.inherit_env)
        limit = limit_of(request, self.max_output_bytes)
        with self._lock:
            self._admit()
            terminal_id = f"term_{self._prefix}_{next(self._ids)}"
            proc = spawn(argv, cwd, env, self.shell)
            self._terminals[terminal_id] = LocalTerminal(
                terminal_id, str(request.session_id), proc, limit
            )
        if self._on_spawn is not None:
            self._on_spawn(argv, cwd)
        return CreateTerminalResponse(terminal_id=terminal_id)

    def terminal_output(self, request: TerminalOutputRequest) -> TerminalOutputResponse:
        """``terminal/output``: the output so far, and the exit status once it exited."""
        return self._get(str(request.session_id), request.terminal_id).output()

    def wait_for_terminal_exit(
        self, request: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``: blocks until the command exits (or is killed)."""
        term = self._get(str(request.session_id), request.terminal_id)
        term.exited.wait()
        return self._exit_response(term)

    def kill_terminal(self, request: KillTerminalRequest) -> KillTerminalResponse:
        """``terminal/kill``: kill the command's process group; the terminal stays valid."""
        term = self._get(str(request.session_id), request.terminal_id)
        term.kill()
        term.exited.wait(self.reap_timeout)
        return KillTerminalResponse()

    def release_terminal(self, request: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        """``terminal/release``: kill the command if still running, reap it, forget the id."""
        term = self._get(str(request.session_id), request.terminal_id)
        self._release([term], wait=True)
        return ReleaseTerminalResponse()

    @staticmethod
    def _exit_response(term: LocalTerminal) -> WaitForTerminalExitResponse:
        status = term.exit_status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    # ------------------------------------------------------------------ handlers (asyncio)
    create_terminal_async = threaded(create_terminal)

    terminal_output_async = threaded(terminal_output)

    async def wait_for_terminal_exit_async(
        self, request: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        """:meth:`wait_for_terminal_exit` without holding a thread; cancelling the request
        (``$/cancel_request``) stops the wait, not the command."""
        term = self._get(str(request.session_id), request.terminal_id)
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not exited.done():
                exited.set_result(None)

        def notify() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(resolve)

        term.on_exit(notify)
        try:
            await exited
        finally:
            term.remove_on_exit(notify)
        return self._exit_response(term)

    kill_terminal_async = threaded(kill_terminal)

    release_terminal_async = threaded(release_terminal)

    # ------------------------------------------------------------------ lifecycle
    def _release(self, terms: list[LocalTerminal], *, wait: bool) -> bool:
        with self._lock:
            for term in terms:
                term.released = True
                self._terminals.pop(term.id, None)
                self._reaping.add(term)
        for term in terms:
            term.kill()
        reaped = True
        if wait:
            for term in terms:
                if not term.join(self.reap_timeout):
                    term.stop_reading()
                    reaped = term.join(self.reap_timeout) and reaped
        for term in terms:
            if term.exited.is_set():
                with self._lock:
                    self._reaping.discard(term)
            else:
                term.on_exit(functools.partial(self._reaped, term))
        return reaped

    def _reaped(self, term: LocalTerminal) -> None:
        with self._lock:
            self._reaping.discard(term)

    def release_session(self, session_id: str, *, wait: bool = True) -> int:
        """Kill and release every terminal of ``session_id`` (the client closed it); returns
        how many. ``wait=False`` only sends the kills (reaping finishes on its own)."""
        with self._lock:
            terms = [t for t in self._terminals.values() if t.session_id == session_id]
        self._release(terms, wait=wait)
        return len(terms)

    def close(self, *, wait: bool = True) -> bool:
        """Kill and release every terminal and refuse new ones; True when all were reaped
        (``wait=False`` only sends the kills). Idempotent."""
        with self._lock:
            self._closed = True
            terms = list(self._terminals.values())
        return self._release(terms, wait=wait)

    def kill_all(self) -> int:
        """Kill and release every terminal without waiting (the connection ended); new ones
        may still be created. Returns how many were released."""
        with self._lock:
            terms = list(self._terminals.values())
        self._release(terms, wait=False)
        return len(terms)

    def join(self, timeout: Duration) -> bool:
        """Wait until every command started here was reaped; False if ``timeout`` (a
        ``timedelta`` or seconds, per command) passed."""
        seconds = wait_seconds(timeout, default=0.0)
        with self._lock:
            terms = [*self._terminals.values(), *self._reaping]
        return all(term.exited.wait(seconds) for term in terms)

    def __enter__(self) -> LocalTerminals:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ registration
    def install(self, builder: _B) -> _B:
        """Register all five ``terminal/*`` handlers on a sync or async client builder (so the
        client advertises ``terminal``), and kill this session's terminals on ``session/close``
        and every terminal when the connection ends. Returns the builder."""
        from ._builder_base import install_handlers

        handlers = install_handlers(
            builder,
            {
                m.TERMINAL_CREATE: (self.create_terminal, self.create_terminal_async),
                m.TERMINAL_OUTPUT: (self.terminal_output, self.terminal_output_async),
                m.TERMINAL_WAIT_FOR_EXIT: (
                    self.wait_for_terminal_exit,
                    self.wait_for_terminal_exit_async,
                ),
                m.TERMINAL_KILL: (self.kill_terminal, self.kill_terminal_async),
                m.TERMINAL_RELEASE: (self.release_terminal, self.release_terminal_async),
            },
        )
        handlers.session_closed_listeners.append(lambda sid: self.release_session(sid, wait=False))
        handlers.close_listeners.append(self.kill_all)
        return builder

    def __repr__(self) -> str:
        return f"LocalTerminals(roots={list(self.roots)!r}, running={self.running_count})"
