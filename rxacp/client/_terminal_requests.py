"""A ``terminal/create`` request of :class:`~rxacp.client.LocalTerminals` checked and started:
its argv, working directory (inside the workspace roots), environment and output limit, each
refused ``-32602`` naming the problem, and the spawn.

This module is *not* responsible for ids, sessions, limits on terminals or the running command
(``terminals.py``, ``_terminal_process.py``).
"""

from __future__ import annotations

import os
import shlex
import subprocess

from ..errors import AcpProtocolException, peer_echo
from ..schema import CreateTerminalRequest
from .fs import WorkspaceFileSystem

__all__ = ["argv_of", "cwd_of", "env_of", "limit_of", "spawn"]


def argv_of(request: CreateTerminalRequest, shell: bool) -> list[str]:
    """The argv of a ``terminal/create`` (through ``/bin/sh -c`` with ``shell``)."""
    command = request.command
    args = list(request.args or [])
    if not isinstance(command, str) or not command or "\x00" in command:
        raise AcpProtocolException.invalid_params("command must be a non-empty string")
    if any("\x00" in arg for arg in args):
        raise AcpProtocolException.invalid_params("args must not contain NUL bytes")
    if shell:
        line = " ".join([command, *(shlex.quote(arg) for arg in args)])
        return ["/bin/sh", "-c", line]
    return [command, *args]


def cwd_of(workspace: WorkspaceFileSystem, cwd: str | None) -> str:
    """The real working directory: ``cwd`` inside the roots, by default the first root."""
    if cwd is None:
        return workspace.roots[0]
    try:
        real = workspace.resolve(cwd)
    except AcpProtocolException as exc:
        raise AcpProtocolException.invalid_params(f"cwd: {exc.message}") from None
    if not os.path.isdir(real):
        raise AcpProtocolException.invalid_params(
            f"cwd {peer_echo(cwd)} is not an existing directory"
        )
    return real


def env_of(request: CreateTerminalRequest, inherit_env: bool) -> dict[str, str]:
    """The command's environment: the request's variables on this process's (or none)."""
    env = dict(os.environ) if inherit_env else {}
    for var in request.env or []:
        name, value = var.name, var.value
        if not name or "=" in name or "\x00" in name or "\x00" in value:
            raise AcpProtocolException.invalid_params(
                f"invalid environment variable name {peer_echo(name)} (or a NUL byte in its value)"
            )
        env[name] = value
    return env


def limit_of(request: CreateTerminalRequest, max_output_bytes: int) -> int:
    """The output bytes the terminal retains: the request's ``outputByteLimit``, capped."""
    limit = request.output_byte_limit
    if limit is None:
        return max_output_bytes
    if limit < 0:
        raise AcpProtocolException.invalid_params(
            f"outputByteLimit must not be negative, got {limit}"
        )
    return min(limit, max_output_bytes)


def spawn(argv: list[str], cwd: str, env: dict[str, str], shell: bool) -> subprocess.Popen[bytes]:
    """Start the command in its own session, output captured; ``-32602`` if it cannot."""
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    except FileNotFoundError:
        hint = (
            " (this client runs commands without a shell: send the program in command "
            "and its arguments in args)"
            if not shell and any(c in argv[0] for c in " |&;<>$")
            else ""
        )
        raise AcpProtocolException.invalid_params(
            f"command not found: {peer_echo(argv[0])}{hint}"
        ) from None
    except PermissionError:
        raise AcpProtocolException.invalid_params(
            f"command is not executable: {peer_echo(argv[0])}"
        ) from None
    except OSError as exc:
        raise AcpProtocolException.invalid_params(
            f"cannot start {peer_echo(argv[0])}: {os.strerror(exc.errno or 0)}"
        ) from None
