"""The ``rxacp`` command line: ``rxacp demo``, ``rxacp prompt`` and ``rxacp check``.

:func:`main` parses the arguments (argparse) and runs a subcommand module (``demo.py``,
``prompt.py``, ``check.py``); ``rxacp --version`` prints the package and ACP schema versions.

This package is *not* responsible for protocol logic: it only uses the public client API.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO

from . import check, demo, prompt

__all__ = ["build_parser", "main", "version_text"]


def version_text() -> str:
    """``rxacp 1.2.3 (ACP protocol version 1, schema @agentclientprotocol/sdk 2.4.0)``."""
    import json
    from importlib import resources

    from .. import __version__
    from ..client import SUPPORTED_PROTOCOL_VERSIONS

    protocol = max(SUPPORTED_PROTOCOL_VERSIONS)
    try:
        source = json.loads(
            resources.files("rxacp.schema").joinpath("spec/SOURCE.json").read_text("utf-8")
        )
        schema = f"schema {source['package']} {source['version']}"
    except (OSError, ValueError, KeyError):
        schema = "schema bundled"
    return f"rxacp {__version__} (ACP protocol version {protocol}, {schema})"


class _Version(argparse.Action):
    """``--version`` without argparse's line wrapping."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(version_text() + "\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The ``rxacp`` argument parser with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="rxacp",
        description="rxacp: a ReactiveX SDK for the Agent Client Protocol (ACP).",
    )
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="print the rxacp and ACP schema versions"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo.add_arguments(
        commands.add_parser(
            "demo",
            help="a 5-second tour: streaming, cancellation and the grace period",
            description="Run the reference agent over stdio and show streaming and cancellation.",
        )
    )
    prompt.add_arguments(
        commands.add_parser(
            "prompt",
            help="talk to any ACP agent: one prompt, or an interactive session",
            description="Send a prompt to an ACP agent and stream its answer; with no prompt "
            "text, one turn per line of stdin. Ctrl-C once cancels the turn (session/cancel); "
            "twice aborts it.",
        )
    )
    check.add_arguments(
        commands.add_parser(
            "check",
            help="check any ACP agent over stdio for protocol conformance",
            description="Run conformance checks against an ACP agent over stdio; each check "
            "reports PASS / FAIL / SKIP with its rule. Exit code 1 if a mandatory check fails.",
        )
    )
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
    """Run the ``rxacp`` command line; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    for stream in (out, err):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return demo.run(args, out=out, err=err)
        if args.command == "prompt":
            return prompt.run(args, out=out, err=err, stdin=stdin or sys.stdin)
        if args.command == "check":
            return check.run(args, out=out, err=err)
    except BrokenPipeError:  # e.g. `rxacp prompt ... | head`: the reader went away
        _silence_stdout()
        return 0
    parser.print_help(out)
    return 2


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
