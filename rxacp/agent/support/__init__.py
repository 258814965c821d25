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

from . import decorators as _decorators
from .decorators import *  # noqa: F403 (the decorators and markers: decorators.__all__)
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
    "ArgumentResolver",
    "HandlerParameter",
    "InvocationContext",
    "ReturnValueHandler",
]
__all__ += _decorators.__all__
