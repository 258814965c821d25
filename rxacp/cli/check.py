"""``rxacp check``: a conformance checker for any ACP agent over stdio (or a ``ws://`` URL).

Runs the agent (``--agent "CMD ARGS"``), drives it with raw JSON-RPC (:mod:`.check_driver`) and
reports every check as PASS / FAIL / SKIP with the rule it comes from (a spec file and section,
JSON-RPC 2.0, or "SDK policy"), grouped as *mandatory* (MUST rules), *capability* (rules for
optional features: SKIP when the agent does not offer them) and *advisory* (SHOULDs and good
practice). Exit code 1 when a mandatory check fails, 0 otherwise, 2 on bad arguments.

The checker needs two prompts the agent understands: ``--prompt`` (default ``echo hello``) must
end a turn normally, and ``--slow-prompt`` (default ``slow 5``) must keep the agent working long
enough to be cancelled (rxacp's reference agent understands both). Every wait is bounded by
``--timeout`` seconds (``initialize``: ``--startup-timeout``). The run and the attribution of
failures live in :mod:`.check_runner`, the steps in :mod:`.check_steps`, the rules and the
reports in :mod:`.check_report`.

This module is *not* responsible for running the checks, only for the command line around them;
nor for being an ACP client: the checker deliberately bypasses rxacp's client to see raw ids,
errors and bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import IO

from .agent_arg import add_agent_argument, parse_agent
from .check_report import (
    GROUPS,
    REPORT_FORMAT,
    RULES,
    CheckResult,
    report_json,
    report_text,
)
from .check_runner import STARTUP_S, Checker, CheckOptions

__all__ = [
    "GROUPS",
    "REPORT_FORMAT",
    "RULES",
    "CheckResult",
    "Checker",
    "add_arguments",
    "report_json",
    "report_text",
    "run",
    "run_checks",
]

EXIT_USAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rxacp check`` options."""
    add_agent_argument(parser, "npx my-agent --acp")
    parser.add_argument(
        "--auth", metavar="METHOD_ID", help="authenticate with this auth method before session/new"
    )
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=STARTUP_S,
        metavar="S",
        help=f"bound of initialize, which includes the agent's start-up (default {STARTUP_S:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="bound of every wait but initialize, in seconds (default 10)",
    )
    parser.add_argument(
        "--prompt",
        default="echo hello",
        metavar="TEXT",
        help="a prompt that ends a turn normally (default 'echo hello')",
    )
    parser.add_argument(
        "--slow-prompt",
        default="slow 5",
        metavar="TEXT",
        help="a prompt that keeps the agent busy long enough to cancel it "
        "(default 'slow 5', the reference agent's)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session directory (default: current)")
    parser.add_argument(
        "--protocol-version",
        type=int,
        choices=(1, 2),
        default=1,
        help="check the ACP v1 rules (default) or the v2 Draft's (experimental; docs/check.md)",
    )


def run_checks(options: CheckOptions) -> list[CheckResult]:
    """Run every check against ``options.command`` (blocking; own event loop)."""
    return asyncio.run(Checker(options).run())


def run(args: argparse.Namespace, *, out: IO[str], err: IO[str]) -> int:
    """Run ``rxacp check`` with parsed ``args``; returns the exit code."""
    command = parse_agent(args.agent, "rxacp check", err)
    if command is None:
        return EXIT_USAGE
    for name in ("timeout", "startup_timeout"):
        if not getattr(args, name) > 0:
            flag = "--" + name.replace("_", "-")
            err.write(f"rxacp check: {flag} must be > 0 seconds, got {getattr(args, name)}\n")
            return EXIT_USAGE
    options = CheckOptions(
        command,
        args.prompt,
        args.slow_prompt,
        args.timeout,
        os.path.abspath(args.cwd) if args.cwd else "",
        args.auth,
        args.startup_timeout,
    )
    rules = None
    if getattr(args, "protocol_version", 1) == 2:
        from .check_v2 import RULES_V2, run_checks_v2

        results, rules = run_checks_v2(options), RULES_V2
    else:
        results = run_checks(options)
    data = report_json(args.agent, results, rules)
    if args.json:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(report_text(args.agent, results, rules)) + "\n")
    out.flush()
    return int(data["exitCode"])
