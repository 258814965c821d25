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

from ...schema.v2 import AgentCapabilities, AuthMethod, Implementation

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

    # -- handlers ------------------------------------------------------------------------------
    def _on(self, method: str, fn: Callable[..., Any]) -> Self:
        if not callable(fn):
            raise TypeError(f"the handler for {method} must be callable")
        self.handlers[method] = fn
        return self

    def initialize_handler(self, fn: Callable[..., Any]) -> Self:
        """``initialize`` (v2 models; default: version 2, :meth:`agent_info`, capabilities)."""
        return self._on("initialize", fn)

    def login_handler(self, fn: Callable[..., Any]) -> Self:
        """``auth/login`` (v1 ``authenticate``)."""
        return self._on("auth/login", fn)

    def logout_handler(self, fn: Callable[..., Any]) -> Self:
        """``auth/logout`` (v1 ``logout``; no capability marker in v2)."""
        return self._on("auth/logout", fn)

    def new_session_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/new`` (baseline)."""
        return self._on("session/new", fn)

    def list_sessions_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/list`` (baseline in v2: no capability)."""
        return self._on("session/list", fn)

    def resume_session_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/resume`` (baseline; with ``replayFrom`` it replaces v1 ``session/load``:
        send the history as ``session/update``\\ s before answering)."""
        return self._on("session/resume", fn)

    def close_session_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/close`` (baseline); the SDK cancels the session's active turn first."""
        return self._on("session/close", fn)

    def delete_session_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/delete`` (advertises ``session.delete``)."""
        return self._on("session/delete", fn)

    def set_session_config_option_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/set_config_option`` (v2's replacement of ``session/set_mode``)."""
        return self._on("session/set_config_option", fn)

    def prompt_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/prompt``: ``fn(request, context)``, the same shape as v1.

        The SDK accepts the prompt at once (answer ``{"messageId"}``), reports the user
        message and ``running``, and ends the turn with an ``idle`` ``state_update`` from what
        the handler returns: ``None`` → ``end_turn``; a stop-reason string (``"refusal"``...);
        a v1 ``PromptResponse`` (its ``stopReason`` and ``_meta``). After ``session/cancel`` it
        is ``cancelled`` whatever the handler does; an error becomes stop reason ``error``."""
        return self._on("session/prompt", fn)

    def cancel_handler(self, fn: Callable[..., Any]) -> Self:
        """``session/cancel``: called after the SDK marked the turn cancelled."""
        return self._on("session/cancel", fn)

    def cancel_tool_call_handler(self, fn: Callable[..., Any]) -> Self:
        """``tool_call/cancel`` (advertised per tool call by its ``capabilities.cancel``)."""
        return self._on("tool_call/cancel", fn)

    def cancel_terminal_handler(self, fn: Callable[..., Any]) -> Self:
        """``terminal/cancel`` (advertised per display terminal)."""
        return self._on("terminal/cancel", fn)


def _auth_method(wire: Mapping[str, Any]) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(AuthMethod).validate_python(dict(wire), by_alias=True, by_name=False)
