"""Session updates the schema reserves for capable clients are not sent to other clients."""

from __future__ import annotations

from typing import Any

import pytest

from rxacp.agent import SyncPromptContext
from rxacp.errors import AcpCapabilityException
from rxacp.schema import Notice, NoticeSeverity, PromptRequest, PromptResponse

from .harness import AgentHarness


def _agent_sending_a_notice(errors: list[BaseException], caps: dict[str, Any]) -> AgentHarness:
    def prompt(req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        try:
            ctx.send_update(Notice(severity=NoticeSeverity.WARNING, title="Rate limited"))
        except AcpCapabilityException as exc:
            errors.append(exc)
        ctx.send_message("done")
        return PromptResponse.end_turn()

    return AgentHarness(
        "sync", configure=lambda b: b.prompt_handler(prompt), client_capabilities=caps
    )


@pytest.mark.parametrize(
    ("caps", "sent"),
    [({"session": {"notices": {}}}, True), ({}, False), ({"session": {}}, False)],
)
def test_a_notice_reaches_only_a_client_that_advertised_session_notices(
    caps: dict[str, Any], sent: bool
) -> None:
    errors: list[BaseException] = []
    h = _agent_sending_a_notice(errors, caps)
    try:
        h.prompt()
        updates, answer = h.next_answer()
        kinds = [u["params"]["update"]["sessionUpdate"] for u in updates]
        assert answer["result"] == {"stopReason": "end_turn"}
        assert ("notice" in kinds) is sent
        assert "agent_message_chunk" in kinds  # the turn went on either way
        if not sent:
            assert len(errors) == 1 and "session.notices" in str(errors[0])
    finally:
        h.close()
