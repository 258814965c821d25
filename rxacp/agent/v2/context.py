"""The ACP v2 prompt handler's view of its turn: ``PromptContext`` (Observables) and
``SyncPromptContext`` (blocking), the same shape as the v1 contexts.

What stays: ``session_id``, ``request``, ``is_cancelled()``, ``on_cancel()``, ``cancel_reason``,
``when_cancelled()`` (async), ``send_update``, ``send_message``, ``send_thought``,
``send_plan``, ``start_tool_call``/``update_tool_call``, ``request_permission``,
``ask_permission``, ``ask_choice``. What v2 removed is not here (``read_file``, terminals: the
client's file system and terminals are gone in v2). Message chunks get the turn's message id
when none is given (v2 requires one). Every update is written in v2 form
(``tool_call_update`` upserts, ``plan_update``...).

A permission request of the turn reports ``requires_action`` while it is pending and
``running`` after it (SDK-emitted, *spec* SHOULD). Every client request of the turn is disposed
when the turn is cancelled (``$/cancel_request`` for it), as in v1.

Not responsible for when the turn ends (``turn.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import reactivex
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable

from ...roles.twins import Blocking
from ...schema.v2 import (
    PlanEntry,
    RequestPermissionRequest,
    RequestPermissionResponse,
    ToolCallUpdateNotification,
    UpdateSessionNotification,
)
from ...session import AcpObservable
from ..calls import SyncClientCalls
from ..turn_view import TurnView, WhenCancelled, allowed, chosen
from .turn import PromptTurnV2

if TYPE_CHECKING:
    from ..core import AgentCore

__all__ = ["PromptContext", "SyncPromptContext", "v1_permission_to_v2", "v1_update_to_v2"]


def _is_v1(value: Any) -> bool:
    module = type(value).__module__
    return module.startswith("rxacp.schema.") and not module.startswith("rxacp.schema.v2")


def v1_update_to_v2(update: dict[str, Any], message_ids: Mapping[str, str]) -> dict[str, Any]:
    """A v1 ``SessionUpdate`` (wire) in its v2 form, for agents that run v1 code on v2:

    - message chunks get ``messageId`` (``message_ids[kind]``) when they have none;
    - ``tool_call`` becomes the ``tool_call_update`` upsert (its first report creates it);
    - ``plan`` becomes ``plan_update`` of plan ``"plan"`` (type ``items``);
    - a v1 ``diff`` content (``path``/``oldText``/``newText``) becomes a v2 diff with one
      ``modify`` (or ``add``, without ``oldText``) change and no patch text;
    - everything else is sent unchanged (``current_mode_update`` has no v2 form: send a
      ``config_option_update`` instead).
    """
    out = dict(update)
    kind = out.get("sessionUpdate")
    if kind in message_ids and not out.get("messageId"):
        out["messageId"] = message_ids[str(kind)]
    if kind == "tool_call":
        out["sessionUpdate"] = "tool_call_update"
    if kind == "plan":
        entries = out.pop("entries", [])
        plan = {"type": "items", "planId": "plan", "entries": entries}
        out = {"sessionUpdate": "plan_update", "plan": plan}
    if isinstance(out.get("content"), list) and out.get("sessionUpdate") == "tool_call_update":
        out["content"] = [_diff_to_v2(c) for c in out["content"]]
    return out


def _diff_to_v2(content: Any) -> Any:
    if not isinstance(content, dict) or content.get("type") != "diff" or "changes" in content:
        return content
    operation = "modify" if content.get("oldText") is not None else "add"
    return {"type": "diff", "changes": [{"operation": operation, "path": content.get("path")}]}


def v1_permission_to_v2(request: dict[str, Any]) -> dict[str, Any]:
    """A v1 ``session/request_permission`` (wire) in its v2 form: the tool call's title is the
    prompt ``title`` and the tool call the ``subject``."""
    tool_call = request.get("toolCall") or {}
    out: dict[str, Any] = {
        "sessionId": request.get("sessionId"),
        "title": tool_call.get("title") or "Permission requested",
        "options": request.get("options", []),
    }
    if tool_call:
        out["subject"] = {"type": "tool_call", "toolCall": tool_call}
    return out


class _ContextBase(TurnView[Any]):
    _protocol_version = 2
    _turn: PromptTurnV2

    @property
    def message_id(self) -> str:
        """The id of the user message this prompt inserted (the ``session/prompt`` answer)."""
        return self._turn.message_id

    # -- updates (never block) ------------------------------------------------------------------
    def send_update(self, update: Any) -> None:
        """Send one v2 ``session/update``: a v2 ``SessionUpdate`` variant, an
        ``UpdateSessionNotification`` or the update's wire dict (validated first)."""
        if isinstance(update, UpdateSessionNotification):
            wire = update.to_wire()["update"]
        elif _is_v1(update):  # a v1 update model: sent in its v2 form (see v1_update_to_v2)
            wire = self._from_v1(update.to_wire())
        elif isinstance(update, Mapping):
            note = {"sessionId": self.session_id, "update": dict(update)}
            wire = UpdateSessionNotification.from_wire(note).to_wire()["update"]
        else:
            wire = update.to_wire()
        self._turn.send_wire_update(wire)

    def _from_v1(self, wire: dict[str, Any]) -> dict[str, Any]:
        if "update" in wire and "sessionId" in wire:  # a v1 SessionNotification
            wire = wire["update"]
        ids = {
            "agent_message_chunk": self._turn.agent_message_id,
            "agent_thought_chunk": self._turn.thought_id,
            "user_message_chunk": self._turn.message_id,
        }
        return v1_update_to_v2(wire, ids)

    def send_message(self, text: str, message_id: str | None = None) -> None:
        """Stream a chunk of the agent's answer (``agent_message_chunk``; the turn's agent
        message id unless ``message_id`` is given)."""
        self._chunk("agent_message_chunk", text, message_id or self._turn.agent_message_id)

    def send_thought(self, text: str, message_id: str | None = None) -> None:
        """Stream a chunk of the agent's reasoning (``agent_thought_chunk``)."""
        self._chunk("agent_thought_chunk", text, message_id or self._turn.thought_id)

    def _chunk(self, kind: str, text: str, message_id: str) -> None:
        if type(text) is not str or type(message_id) is not str:
            raise TypeError("send_message/send_thought take str text and message_id")
        self._turn.send_wire_update(
            {
                "sessionUpdate": kind,
                "messageId": message_id,
                "content": {"type": "text", "text": text},
            }
        )

    def send_plan(
        self, entries: Iterable[PlanEntry | str | Mapping[str, Any]], plan_id: str = "plan"
    ) -> None:
        """Send the whole plan ``plan_id`` (``plan_update``, type ``items``: it replaces that
        plan's entries); strings become pending, medium-priority entries."""
        items = [
            e.to_wire()
            if isinstance(e, PlanEntry)
            else {"content": e, "priority": "medium", "status": "pending"}
            if isinstance(e, str)
            else PlanEntry.from_wire(dict(e)).to_wire()
            for e in entries
        ]
        self._turn.send_wire_update(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": plan_id, "entries": items},
            }
        )

    def _announce_tool_call(
        self, call_id: str, title: str, kind: str | None, status: str, fields: dict[str, Any]
    ) -> None:
        if kind is not None:
            fields["kind"] = kind
        self.update_tool_call(call_id, title=title, status=status, **fields)

    def update_tool_call(self, tool_call_id: str, **fields: Any) -> None:
        """Patch a tool call (``tool_call_update``): a field given is replaced, ``None``
        clears it, a field not given stays unchanged."""
        update = ToolCallUpdateNotification(tool_call_id=tool_call_id, **fields)
        self._turn.send_wire_update(update.to_wire())

    # -- permission ------------------------------------------------------------------------
    def _permission(self, request: RequestPermissionRequest | Mapping[str, Any]) -> Any:
        if _is_v1(request):  # a v1 request (tool call as its subject)
            request = v1_permission_to_v2(cast(Any, request).to_wire())
        params = (
            request
            if isinstance(request, RequestPermissionRequest)
            else RequestPermissionRequest.from_wire({"sessionId": self.session_id, **dict(request)})
        )
        turn = self._turn
        source = turn.track(self._core.call("session/request_permission", params))

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            turn.blocked()
            lock = threading.Lock()
            released = [False]

            def release() -> None:  # `running` again before the handler sees the answer
                with lock:
                    if released[0]:
                        return
                    released[0] = True
                turn.unblocked()

            def on_next(value: Any) -> None:
                release()
                observer.on_next(value)

            def on_error(error: Exception) -> None:
                release()
                observer.on_error(error)

            sub = source.subscribe(on_next, on_error, observer.on_completed, scheduler=scheduler)

            def dispose() -> None:
                release()
                sub.dispose()

            return Disposable(dispose)

        return AcpObservable(subscribe)

    @staticmethod
    def _options(pairs: Sequence[tuple[str, str, str]]) -> list[dict[str, str]]:
        return [{"optionId": o, "name": n, "kind": k} for o, n, k in pairs]


class PromptContext(_ContextBase, WhenCancelled):
    """The async v2 handler's context: client calls are cold :class:`AcpObservable`\\ s."""

    def to_sync(self) -> SyncPromptContext:
        """The blocking view of the same turn."""
        return SyncPromptContext(self._core, self._turn)

    def request_permission(
        self, request: RequestPermissionRequest | Mapping[str, Any]
    ) -> AcpObservable[RequestPermissionResponse]:
        """``session/request_permission`` (v2: ``title`` required, optional ``subject``);
        ``requires_action`` while pending. ``--R|``; cancelled turn: ``--X`` (-32800)."""
        return cast(AcpObservable[RequestPermissionResponse], self._permission(request))

    def ask_permission(self, action: str) -> AcpObservable[bool]:
        """Ask allow/reject for ``action`` (the permission ``title``): True only if the user
        chose *allow* (an unknown outcome is never an approval). ``--b|``"""
        options = self._options(
            [("allow", "Allow", "allow_once"), ("reject", "Reject", "reject_once")]
        )
        source = self.request_permission({"title": action, "options": options})
        return cast(AcpObservable[bool], source.pipe(ops.map(allowed)))

    def ask_choice(self, question: str, options: Sequence[str]) -> AcpObservable[str | None]:
        """Ask the user to pick one of ``options``: ``--text|``, or ``--None|`` if cancelled."""
        perm = self._options([(str(i), text, "allow_once") for i, text in enumerate(options)])

        source = self.request_permission({"title": question, "options": perm})
        return cast(AcpObservable[str | None], source.pipe(ops.map(chosen(options))))


class SyncPromptContext(_ContextBase):
    """The blocking v2 handler's context: the same calls, returning values.

    Calls wait at most the agent's request timeout; a cancelled turn makes a waiting call raise
    ``AcpProtocolException`` (-32800) at once.
    """

    def __init__(self, core: AgentCore, turn: PromptTurnV2) -> None:
        super().__init__(core, turn)
        self._async = PromptContext(core, turn)

    def to_async(self) -> PromptContext:
        """The Observable view of the same turn (``when_cancelled()`` lives there)."""
        return self._async

    def _block(self, source: reactivex.Observable[Any], what: str) -> Any:
        return SyncClientCalls._block(cast(Any, self), source, what)

    request_permission = Blocking(PromptContext.request_permission)
    ask_permission = Blocking(PromptContext.ask_permission)
    ask_choice = Blocking(PromptContext.ask_choice)
