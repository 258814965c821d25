"""Launch parameters of an agent process for :class:`~rxacp.transport.StdioAcpClientTransport`.

:class:`AgentParameters` (and its Java-style builder) say what to run and how to stop it.
This module is *not* responsible for spawning or talking to the process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from rxacp._durations import Duration, to_seconds
from rxacp.transport.base import DEFAULT_MAX_FRAME_BYTES

__all__ = ["AgentParameters", "AgentParametersBuilder"]


class AgentParameters:
    """How to launch an agent process: command, arguments, environment, directory, timings.

    Build directly or with the builder::

        params = AgentParameters.builder("my-agent").args("--acp").env("LOG", "debug").build()
        params = AgentParameters("my-agent", args=["--acp"], cwd="/project")

    ``env`` entries are added to (and override) the parent's environment unless
    ``inherit_env=False``. Closing: stdin is closed, then after ``close_timeout`` the process
    group gets SIGTERM, then after ``terminate_timeout`` SIGKILL (each a ``timedelta`` or
    seconds).
    ``on_stderr_line`` receives every decoded stderr line (default: logged at DEBUG on the
    ``rxacp.transport.stderr`` logger); it runs on the event loop, so it must be quick.
    """

    __slots__ = (
        "args",
        "close_timeout",
        "command",
        "cwd",
        "env",
        "inherit_env",
        "max_frame_bytes",
        "on_stderr_line",
        "terminate_timeout",
    )

    def __init__(
        self,
        command: str | os.PathLike[str],
        args: list[str] | tuple[str, ...] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        inherit_env: bool = True,
        close_timeout: Duration = 2.0,
        terminate_timeout: Duration = 2.0,
        on_stderr_line: Callable[[str], None] | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        command = os.fspath(command)
        if not isinstance(command, str) or not command:
            raise ValueError(f"command must be a non-empty string, got {command!r}")
        if isinstance(args, str):
            raise TypeError("args must be a list of strings, not one string")
        close_seconds = to_seconds(close_timeout, name="close_timeout") or 0.0
        terminate_seconds = to_seconds(terminate_timeout, name="terminate_timeout") or 0.0
        if max_frame_bytes < 1:
            raise ValueError(f"max_frame_bytes must be positive, got {max_frame_bytes}")
        self.command = command
        self.args = [str(a) for a in args]
        self.env = dict(env) if env else {}
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.inherit_env = inherit_env
        self.close_timeout = close_seconds
        self.terminate_timeout = terminate_seconds
        self.on_stderr_line = on_stderr_line
        self.max_frame_bytes = max_frame_bytes

    @staticmethod
    def builder(command: str | os.PathLike[str]) -> AgentParametersBuilder:
        """Start a builder for launching ``command``."""
        return AgentParametersBuilder(command)

    def child_env(self) -> dict[str, str] | None:
        """The environment for the child (None means: inherit unchanged)."""
        if self.inherit_env and not self.env:
            return None
        base = dict(os.environ) if self.inherit_env else {}
        base.update(self.env)
        return base

    def __repr__(self) -> str:
        return f"AgentParameters(command={self.command!r}, args={self.args!r}, cwd={self.cwd!r})"


class AgentParametersBuilder:
    """Fluent builder of :class:`AgentParameters` (Java ``AgentParameters.builder``)."""

    def __init__(self, command: str | os.PathLike[str]) -> None:
        self._command = command
        self._args: list[str] = []
        self._env: dict[str, str] = {}
        self._options: dict[str, Any] = {}
        self._cwd: str | os.PathLike[str] | None = None

    def args(self, *args: str) -> AgentParametersBuilder:
        """Append arguments."""
        self._args.extend(args)
        return self

    def arg(self, arg: str) -> AgentParametersBuilder:
        """Append one argument."""
        self._args.append(arg)
        return self

    def env(
        self, key_or_map: str | Mapping[str, str], value: str | None = None
    ) -> AgentParametersBuilder:
        """Add environment variables: ``env("K", "v")`` or ``env({"K": "v"})``."""
        if isinstance(key_or_map, str):
            if value is None:
                raise ValueError(f"env({key_or_map!r}) needs a value")
            self._env[key_or_map] = value
        else:
            self._env.update(key_or_map)
        return self

    def cwd(self, path: str | os.PathLike[str]) -> AgentParametersBuilder:
        """Working directory of the agent."""
        self._cwd = path
        return self

    def inherit_env(self, inherit: bool) -> AgentParametersBuilder:
        """Whether the parent's environment is passed on (default True)."""
        self._options["inherit_env"] = inherit
        return self

    def close_timeout(self, seconds: Duration) -> AgentParametersBuilder:
        """How long to wait after closing stdin before SIGTERM (``timedelta`` or seconds;
        default 2)."""
        self._options["close_timeout"] = seconds
        return self

    def terminate_timeout(self, seconds: Duration) -> AgentParametersBuilder:
        """How long to wait after SIGTERM before SIGKILL (``timedelta`` or seconds; default
        2)."""
        self._options["terminate_timeout"] = seconds
        return self

    def on_stderr_line(self, callback: Callable[[str], None]) -> AgentParametersBuilder:
        """Receive each stderr line of the agent (on the event loop)."""
        self._options["on_stderr_line"] = callback
        return self

    def max_frame_bytes(self, size: int) -> AgentParametersBuilder:
        """Cap on one incoming line (default 64 MiB)."""
        self._options["max_frame_bytes"] = size
        return self

    def build(self) -> AgentParameters:
        """Create the :class:`AgentParameters`."""
        return AgentParameters(self._command, self._args, self._env, self._cwd, **self._options)
