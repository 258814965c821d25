"""The reference agent's ACP v2 handler set (``--protocol-versions 1,2`` or ``2``).

The same behaviour scripts as v1 (``_reference_script.py``) run with the v2 prompt context,
which sends their updates in v2 form (``tool_call_update`` upserts, ``plan_update``, chunks with
message ids) and their permission requests with a ``title``; the SDK reports the turn with
``state_update``. Sessions: ``session/new`` (with a ``mode`` config option), ``session/list``,
``session/resume`` (``replayFrom: {"type": "start"}`` replays the history as ``user_message`` /
``agent_message`` upserts, then a current ``idle`` state snapshot), ``session/close``,
``session/set_config_option`` (``mode``: ``default``/``fast``, v2's replacement of modes).
``read``/``write``/``terminal`` need the client's file system and terminals, which v2 removed:
on v2 they end the turn with stop reason ``error``.

Not responsible for the v1 handlers or the command line (``reference_agent.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..agent.v2 import AgentHandlers, PromptContext, SyncPromptContext
from ..schema import NewSessionRequest
from ._reference_run import run_blocking, run_reactive

__all__ = ["v2_handlers"]


def _mode_option(current: str, modes: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return {
        "configId": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": [{"value": mid, "name": name} for mid, name in modes],
    }


def v2_handlers(
    api: str,
    sessions: Any,
    info: dict[str, Any],
    send: Callable[[dict[str, Any]], None],
    client_behind: Callable[[], bool],
) -> AgentHandlers:
    """The reference agent's :class:`~rxacp.agent.v2.AgentHandlers` for ``api`` (sync/async)."""
    from .reference_agent import MODES

    def new_session(request: Any) -> dict[str, Any]:
        created = sessions.new_session(NewSessionRequest(cwd=request.cwd, mcp_servers=[]))
        return {"sessionId": created.session_id, "configOptions": [_mode_option("default", MODES)]}

    def list_sessions(request: Any) -> dict[str, Any]:
        from ..schema import ListSessionsRequest

        listed = sessions.list_sessions(ListSessionsRequest(cwd=request.cwd))
        return {"sessions": [s.to_wire() for s in listed.sessions]}

    def resume_session(request: Any) -> dict[str, Any]:
        history = sessions.history(request.session_id)
        replay = request.replay_from is not None and getattr(request.replay_from, "type", None)
        if replay == "start":
            for user, agent in history:
                for kind, text in (("user_message", user), ("agent_message", agent)):
                    send(
                        {
                            "sessionId": request.session_id,
                            "update": {
                                "sessionUpdate": kind,
                                "messageId": f"replay_{uuid.uuid4().hex[:12]}",
                                "content": [{"type": "text", "text": text}],
                            },
                        }
                    )
        send(
            {
                "sessionId": request.session_id,
                "update": {"sessionUpdate": "state_update", "state": "idle"},
            }
        )
        mode = sessions.mode(request.session_id)
        return {"configOptions": [_mode_option(mode, MODES)]}

    def close_session(request: Any) -> dict[str, Any]:
        from ..schema import CloseSessionRequest

        sessions.close_session(CloseSessionRequest(session_id=request.session_id))
        return {}

    def set_config_option(request: Any) -> dict[str, Any]:
        from ..errors import AcpProtocolException

        if request.config_id != "mode":
            raise AcpProtocolException.invalid_params(
                f"unknown config option {request.config_id!r}"
            )
        sessions.set_mode_id(request.session_id, str(request.value))
        return {"configOptions": [_mode_option(str(request.value), MODES)]}

    def prompt_sync(request: Any, ctx: SyncPromptContext) -> Any:
        return run_blocking(sessions.script(request), ctx)  # type: ignore[arg-type]

    def prompt_async(request: Any, ctx: PromptContext) -> Any:
        return run_reactive(sessions.script(request), ctx, client_behind)  # type: ignore[arg-type]

    return (
        AgentHandlers()
        .agent_info(info)
        .new_session_handler(new_session)
        .list_sessions_handler(list_sessions)
        .resume_session_handler(resume_session)
        .close_session_handler(close_session)
        .set_session_config_option_handler(set_config_option)
        .prompt_handler(prompt_sync if api == "sync" else prompt_async)
    )
