"""The verdicts of ``rxacp check``: every check's rule (:data:`RULES`), one verdict
(:class:`CheckResult`) and the two reports (text, and ``--json`` in format
:data:`REPORT_FORMAT`, documented in ``docs/check.md``).

This module is *not* responsible for running the checks (:mod:`.check`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .render import clean

__all__ = ["GROUPS", "REPORT_FORMAT", "RULES", "CheckResult", "report_json", "report_text"]

EXIT_OK, EXIT_FAILED = 0, 1
GROUPS = ("mandatory", "capability", "advisory")
REPORT_FORMAT = "rxacp-check/1"
"""The ``format`` of the ``--json`` report; its shape is documented in docs/check.md and only
changes compatibly (new checks, new keys) while this stays the same."""
CANCEL_LATENCY_S = 2.0
"""Advisory bound between ``session/cancel`` and the ``cancelled`` answer."""


@dataclass
class CheckResult:
    """One verdict: ``status`` is PASS, FAIL or SKIP."""

    id: str
    group: str
    status: str
    rule: str
    detail: str = ""


RULES: dict[str, tuple[str, str, str]] = {
    # id: (group, rule, what is checked)
    "initialize": (
        "mandatory",
        "initialization.mdx §Initialization",
        "initialize is answered with a protocolVersion",
    ),
    "initialize.version": (
        "mandatory",
        "initialization.mdx §Version Negotiation",
        "requested version 1 → answered version 1",
    ),
    "initialize.negotiation": (
        "mandatory",
        "initialization.mdx §Version Negotiation",
        "requested an unknown version (999) → the latest it supports",
    ),
    "jsonrpc.id_echo": (
        "mandatory",
        "JSON-RPC 2.0 §5 (Response object: id)",
        "string and integer ids (incl. 0) are echoed exactly",
    ),
    "session.new": (
        "mandatory",
        "session-setup.mdx §Creating a Session, §Session ID",
        "session/new answers unique session ids",
    ),
    "prompt.stop_reason": (
        "mandatory",
        "prompt-turn.mdx §Stop Reasons",
        "--prompt ends with a valid stopReason",
    ),
    "update.schema": (
        "mandatory",
        "schema.json SessionNotification",
        "every session/update validates against the schema",
    ),
    "update.session_id": (
        "mandatory",
        "prompt-turn.mdx §3. Agent Reports Output; session-setup.mdx §Session ID",
        "every session/update names a session the agent gave this client",
    ),
    "cancel.cancelled": (
        "mandatory",
        "prompt-turn.mdx §Cancellation",
        "session/cancel during a prompt → result stopReason cancelled",
    ),
    "cancel.no_update_after_answer": (
        "mandatory",
        "prompt-turn.mdx §Cancellation",
        "no session/update after the cancelled prompt's answer",
    ),
    "cancel.bare_no_answer": (
        "mandatory",
        "prompt-turn.mdx §Cancellation; JSON-RPC 2.0 §4.1",
        "a session/cancel notification is never answered",
    ),
    "jsonrpc.method_not_found": (
        "mandatory",
        "JSON-RPC 2.0 §5.1; schema.json ErrorCode",
        "an unknown method → error -32601",
    ),
    "jsonrpc.parse_error": (
        "mandatory",
        "JSON-RPC 2.0 §5.1",
        "a malformed line → error -32700 with id null",
    ),
    "jsonrpc.no_stray_answers": (
        "mandatory",
        "JSON-RPC 2.0 §4.1 (notifications), §5 (Response object: id)",
        "only requests are answered, each answer with its request's id",
    ),
    "stdio.keeps_serving": (
        "mandatory",
        "JSON-RPC 2.0 §5.1; transports.mdx §stdio",
        "the agent keeps serving after a malformed line",
    ),
    "stdio.stdout_clean": (
        "mandatory",
        "transports.mdx §stdio",
        "nothing but JSON-RPC messages on stdout",
    ),
    "authenticate": (
        "capability",
        "authentication.mdx",
        "authenticate with --auth METHOD_ID answers a result (then session/new works)",
    ),
    "session.close_cancels": (
        "capability",
        "session-setup.mdx §Closing Active Sessions",
        "session/close cancels an active prompt (sessionCapabilities.close)",
    ),
    "cancel_request.prompt": (
        "capability",
        "cancellation.mdx §$/cancel_request Notification",
        "$/cancel_request for a prompt → -32800 or a valid response",
    ),
    "initialize.agent_info": (
        "advisory",
        "initialization.mdx §Implementation Information",
        "agentInfo names the implementation (SHOULD)",
    ),
    "cancel.latency": (
        "advisory",
        "prompt-turn.mdx §Cancellation (SHOULD stop promptly)",
        f"cancelled answer within {CANCEL_LATENCY_S:g} s of session/cancel",
    ),
    "stdio.exit_on_eof": (
        "advisory",
        "transports.mdx §stdio; SDK policy",
        "the agent exits by itself when its stdin closes",
    ),
}


def report_json(
    command: str,
    results: list[CheckResult],
    rules: dict[str, tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """The machine-readable report (``--json``); ``rules``: the checks' table (default
    :data:`RULES`; ``rxacp check --protocol-version 2`` passes its own)."""
    rules = RULES if rules is None else rules
    failed = [r.id for r in results if r.group == "mandatory" and r.status == "FAIL"]
    counts = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "SKIP")}
    return {
        "format": REPORT_FORMAT,
        "agent": command,
        "checks": [asdict(r) | {"what": rules[r.id][2]} for r in results],
        "summary": counts | {"mandatoryFailed": failed},
        "exitCode": EXIT_FAILED if failed else EXIT_OK,
    }


def report_text(
    command: str,
    results: list[CheckResult],
    rules: dict[str, tuple[str, str, str]] | None = None,
) -> list[str]:
    """The human-readable report, one line per check (details indented below)."""
    lines = [f"rxacp check: {command}"]
    width = max(len(r.id) for r in results)
    for group in GROUPS:
        lines.append("")
        lines.append(group.upper())
        for r in (r for r in results if r.group == group):
            lines.append(f"  {r.status:<4}  {r.id:<{width}}  {r.rule}")
            if (r.detail and r.status != "PASS") or (
                r.detail and r.id in ("initialize.agent_info",)
            ):
                lines.append(f"        {' ' * width}  {clean(r.detail)}")
    data = report_json(command, results, rules)
    summary = data["summary"]
    lines.append("")
    verdict = (
        "mandatory checks all pass"
        if not summary["mandatoryFailed"]
        else f"mandatory FAILED: {', '.join(summary['mandatoryFailed'])}"
    )
    lines.append(
        f"{summary['PASS']} PASS, {summary['FAIL']} FAIL, {summary['SKIP']} SKIP; {verdict}"
    )
    return lines
