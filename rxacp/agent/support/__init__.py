"""Decorator-based agents: the Java SDK's annotations (``@AcpAgent``, ``@Prompt``...) as Python
decorators, with real interceptors and exception handlers::

    @acp_agent(name="hello", version="1.0.0")
    class HelloAgent:
        @prompt
        def prompt(self, req: PromptRequest, ctx: SyncPromptContext) -> str:
            return "Hello!"

    AcpAgentSupport.create(HelloAgent()).transport(StdioAcpAgentTransport()).run()

This package is *not* responsible for the protocol or the prompt-turn rules; it sits on
``rxacp.agent`` (an ``AcpAsyncAgent`` underneath; see ``support.py`` for why).
"""

from __future__ import annotations

from .decorators import (
    AgentInfo,
    MethodDecorator,
    SessionId,
    acp_agent,
    authenticate,
    cancel,
    close_session,
    delete_session,
    disable_provider,
    exception_handler,
    ext_method,
    ext_notification,
    fork_session,
    initialize,
    list_providers,
    list_sessions,
    load_session,
    logout,
    new_session,
    prompt,
    resume_session,
    set_provider,
    set_session_config_option,
    set_session_mode,
)
from .invocation import (
    AcpInterceptor,
    ArgumentResolver,
    HandlerParameter,
    InvocationContext,
    ReturnValueHandler,
)
from .support import AcpAgentSupport, AcpAgentSupportBuilder

__all__ = [
    "AcpAgentSupport",
    "AcpAgentSupportBuilder",
    "AcpInterceptor",
    "AgentInfo",
    "ArgumentResolver",
    "HandlerParameter",
    "InvocationContext",
    "MethodDecorator",
    "ReturnValueHandler",
    "SessionId",
    "acp_agent",
    "authenticate",
    "cancel",
    "close_session",
    "delete_session",
    "disable_provider",
    "exception_handler",
    "ext_method",
    "ext_notification",
    "fork_session",
    "initialize",
    "list_providers",
    "list_sessions",
    "load_session",
    "logout",
    "new_session",
    "prompt",
    "resume_session",
    "set_provider",
    "set_session_config_option",
    "set_session_mode",
]
