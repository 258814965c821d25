"""``PromptTurnV2``: one ACP v2 prompt turn, reported by ``state_update`` (SDK-emitted lifecycle).

The v1 :class:`~rxacp.agent.turn.PromptTurn` rules hold unchanged; what v2 changes is how the
turn is reported (``docs/v2.md``, ``docs/cancellation.md`` §ACP v2): ``session/prompt`` is
answered at once with ``{"messageId"}`` (*schema*: required; the prose's ``{}`` is not what the
shipped schema or either official SDK accepts), then ``user_message`` and ``running``;
``requires_action`` while a permission request waits; one ``idle`` ``state_update`` ends it.
``$/cancel_request`` for the prompt's id finds it answered already: on v2 a turn is cancelled
by ``session/cancel``.

Not responsible for the handler API (``context.py``) or routing (``router.py``).
"""

from __future__ import annotations

import itertools
import uuid
from typing import TYPE_CHECKING, Any

from ...errors import exception_to_error
from ...session import IncomingRequest
from ..turn import ANSWERED, PromptTurn

if TYPE_CHECKING:
    from ..core import AgentCore

__all__ = ["PromptTurnV2"]

_ids = itertools.count(1)
_RUN = uuid.uuid4().hex[:8]


def new_message_id(kind: str) -> str:
    """A message id unique in this process (``msg_user_<run>_<n>``): agents own message ids."""
    return f"msg_{kind}_{_RUN}_{next(_ids)}"


class PromptTurnV2(PromptTurn):
    """A v2 turn: accepted at once, ended by ``idle`` (see the module docstring)."""

    def __init__(
        self, core: AgentCore, incoming: IncomingRequest, session_id: str, request: Any
    ) -> None:
        super().__init__(core, incoming, session_id, request)
        self.message_id = new_message_id("user")
        """The id of the user message this prompt inserted (the ``session/prompt`` answer)."""
        self.agent_message_id = new_message_id("agent")
        """The default id of this turn's agent message chunks (``send_message``)."""
        self.thought_id = new_message_id("thought")
        self._blocked = 0
        incoming.respond({"messageId": self.message_id})
        content = request.to_wire().get("prompt", [])
        message = {
            "sessionUpdate": "user_message",
            "messageId": self.message_id,
            "content": content,
        }
        self._write_update(self._note(message))
        self._write_state("running")

    def _note(self, update: dict[str, Any]) -> dict[str, Any]:
        return {"sessionId": self.session_id, "update": update}

    def _write_state(self, state: str) -> None:
        self._write_update(self._note({"sessionUpdate": "state_update", "state": state}))

    # ------------------------------------------------------------------ requires_action
    def blocked(self) -> None:
        """A permission request of this turn started (any thread): ``requires_action`` on the
        first one."""
        self._on_loop_in_order(self._on_blocked)

    def unblocked(self) -> None:
        """A permission request of this turn settled: ``running`` when none is left."""
        self._on_loop_in_order(self._on_unblocked)

    def _on_blocked(self) -> None:
        self._blocked += 1
        if self._blocked == 1:
            self._write_state("requires_action")

    def _on_unblocked(self) -> None:
        self._blocked -= 1
        if self._blocked == 0 and self.state != ANSWERED:
            self._write_state("running")

    # ------------------------------------------------------------------ the one end
    def _respond(self, result: Any, error: BaseException | None) -> None:
        update: dict[str, Any] = {"sessionUpdate": "state_update", "state": "idle"}
        meta = getattr(result, "meta", None)
        if self.session_cancelled:
            update["stopReason"] = "cancelled"
        elif error is not None:
            update["stopReason"] = "error"
            update["error"] = exception_to_error(error, "session/prompt")
            meta = None
        elif result is None:
            update["stopReason"] = "end_turn"
        elif isinstance(result, str):
            update["stopReason"] = str(result)
        elif hasattr(result, "stop_reason"):  # a v1 or v2 PromptResponse
            update["stopReason"] = str(result.stop_reason or "end_turn")
        else:
            update["stopReason"] = "error"
            update["error"] = exception_to_error(
                TypeError(f"a v2 prompt handler returned {type(result).__name__}"),
                "session/prompt",
            )
        if isinstance(meta, dict):
            update["_meta"] = meta
        # the turn is already answered (state ANSWERED): written directly, not via the gate
        self._core.session.send_notification("session/update", self._note(update))
