"""``AgentHandlers``: the ACP v2 handler set an agent serves v2 clients with (opt-in).

Given to the agent builder's ``protocol_v2(handlers)``. The handler setters have the names of
the v1 builder's where the method exists in both versions (``new_session_handler``,
``prompt_handler``...); v2's own are ``login_handler`` (``auth/login``), ``logout_handler``
(``auth/logout``), ``cancel_tool_call_handler`` (``tool_call/cancel``) and
``cancel_terminal_handler`` (``terminal/cancel``). Handlers get and return the v2 models of
:mod:`rxacp.schema.v2`, and run like the agent's v1 handlers (Observables on an async agent,
values on worker threads on a sync one).

This module is *not* responsible for routing or for the prompt turn (``router.py``,
``turn.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self

from ...roles.builders import HandlerSetter
from ...schema import methods as m
from ...schema import v2
from ...schema.v2 import AgentCapabilities, AuthMethod, Implementation
from ...schema.v2.methods import AUTH_LOGIN, AUTH_LOGOUT, TERMINAL_CANCEL, TOOL_CALL_CANCEL
from ...schema.v2.methods import METHODS as V2

__all__ = ["AgentHandlers"]


class AgentHandlers:
    """The v2 handlers and v2 ``initialize`` options of one agent (a builder: setters chain)::

    v2 = (AgentHandlers()
          .agent_info(name="my-agent", version="1.0")
          .new_session_handler(new_session)
          .prompt_handler(prompt))          # fn(v2.PromptRequest, v2 PromptContext)
    agent = AcpAgent.async_(transport).prompt_handler(v1_prompt).protocol_v2(v2).build()
    """

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[..., Any]] = {}
        self.info: Implementation | None = None
        self.capabilities_: AgentCapabilities | None = None
        self.auth_methods_: list[AuthMethod] | None = None

    # -- initialize options ----------------------------------------------------------------
    def agent_info(
        self,
        info: Implementation | Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
        title: str | None = None,
    ) -> Self:
        """The ``info`` of the default v2 ``initialize`` answer (v2 requires it; default
        ``{"name": "rxacp-agent", "version": "0"}``)."""
        if info is None:
            if name is None or version is None:
                raise ValueError("agent_info needs an Implementation or name= and version=")
            fields = {"name": name, "version": version}
            if title is not None:  # on a v2 model an explicit None is written as null
                fields["title"] = title
            info = Implementation.from_wire(fields)
        self.info = info if isinstance(info, Implementation) else Implementation.from_wire(info)
        return self

    def capabilities(self, capabilities: AgentCapabilities | Mapping[str, Any]) -> Self:
        """Advertise exactly these v2 capabilities (default: ``session`` when the baseline
        handlers are set, ``session.delete`` with a delete handler)."""
        self.capabilities_ = (
            capabilities
            if isinstance(capabilities, AgentCapabilities)
            else AgentCapabilities.from_wire(dict(capabilities))
        )
        return self

    def auth_methods(self, methods: Sequence[AuthMethod | Mapping[str, Any]]) -> Self:
        """The ``authMethods`` of the default answer; non-empty commits the agent to
        ``auth/login`` and ``auth/logout`` (v2 MUST), so both handlers are required."""
        self.auth_methods_ = [m if not isinstance(m, Mapping) else _auth_method(m) for m in methods]
        return self

    def check(self) -> None:
        """Raise ``ValueError`` for a handler set v2 forbids: advertised ``authMethods``
        without both ``auth/login`` and ``auth/logout`` handlers (v2 MUST implement both)."""
        if self.auth_methods_ and not {"auth/login", "auth/logout"} <= set(self.handlers):
            raise ValueError(
                "ACP v2: an agent that advertises authMethods must handle auth/login and "
                "auth/logout (login_handler and logout_handler)"
            )

    # -- handlers (from the v2 method table: rxacp.roles.builders) -------------------------------
    def _set_handler(self, method: str, fn: Callable[..., Any]) -> None:
        self.handlers[method] = fn

    initialize_handler = HandlerSetter[v2.InitializeRequest, v2.InitializeResponse](
        m.INITIALIZE, "v2 models; default: version 2, :meth:`agent_info`, capabilities.", V2
    )
    login_handler = HandlerSetter[v2.LoginAuthRequest, v2.LoginAuthResponse](
        AUTH_LOGIN, "v1 ``authenticate``.", V2
    )
    logout_handler = HandlerSetter[v2.LogoutAuthRequest, v2.LogoutAuthResponse](
        AUTH_LOGOUT, "v1 ``logout``; no capability marker in v2.", V2
    )
    new_session_handler = HandlerSetter[v2.NewSessionRequest, v2.NewSessionResponse](
        m.SESSION_NEW, "Baseline.", V2
    )
    list_sessions_handler = HandlerSetter[v2.ListSessionsRequest, v2.ListSessionsResponse](
        m.SESSION_LIST, "Baseline in v2: no capability.", V2
    )
    resume_session_handler = HandlerSetter[v2.ResumeSessionRequest, v2.ResumeSessionResponse](
        m.SESSION_RESUME,
        "Baseline; with ``replayFrom`` it replaces v1 ``session/load``: send the history as "
        "``session/update``\\ s before answering.",
        V2,
    )
    close_session_handler = HandlerSetter[v2.CloseSessionRequest, v2.CloseSessionResponse](
        m.SESSION_CLOSE, "Baseline; the SDK cancels the session's active turn first.", V2
    )
    delete_session_handler = HandlerSetter[v2.DeleteSessionRequest, v2.DeleteSessionResponse](
        m.SESSION_DELETE, "", V2
    )
    set_session_config_option_handler = HandlerSetter[
        v2.SetSessionConfigOptionRequest, v2.SetSessionConfigOptionResponse
    ](m.SESSION_SET_CONFIG_OPTION, "v2's replacement of ``session/set_mode``.", V2)
    prompt_handler = HandlerSetter[v2.PromptRequest, v2.PromptResponse](
        m.SESSION_PROMPT,
        "``fn(request, context)``, the same shape as v1. The SDK accepts the prompt at once "
        '(answer ``{"messageId"}``), reports the user message and ``running``, and ends the '
        "turn with an ``idle`` ``state_update`` from what the handler returns: ``None`` → "
        '``end_turn``; a stop-reason string (``"refusal"``...); a v1 ``PromptResponse`` (its '
        "``stopReason`` and ``_meta``). After ``session/cancel`` it is ``cancelled`` whatever "
        "the handler does; an error becomes stop reason ``error``.",
        V2,
    )
    cancel_handler = HandlerSetter[v2.CancelSessionNotification, None](
        m.SESSION_CANCEL, "Called after the SDK marked the turn cancelled.", V2
    )
    cancel_tool_call_handler = HandlerSetter[v2.CancelToolCallRequest, v2.CancelToolCallResponse](
        TOOL_CALL_CANCEL, "Advertised per tool call by its ``capabilities.cancel``.", V2
    )
    cancel_terminal_handler = HandlerSetter[v2.CancelTerminalRequest, v2.CancelTerminalResponse](
        TERMINAL_CANCEL, "Advertised per display terminal.", V2
    )


def _auth_method(wire: Mapping[str, Any]) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(AuthMethod).validate_python(dict(wire), by_alias=True, by_name=False)
