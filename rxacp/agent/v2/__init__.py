"""ACP v2 (a **Draft**, experimental) on the agent side, opt-in.

``AcpAgent.async_(transport)....protocol_v2(AgentHandlers()...)`` serves v1 and v2 clients on
the same transport: each connection speaks the version its ``initialize`` chose (``router.py``).
A v2 prompt handler has the v1 shape, ``fn(request, context)`` with the v2
:class:`PromptContext` / :class:`SyncPromptContext`; the SDK accepts the prompt at once and
reports the turn with ``state_update`` (``turn.py``). See ``docs/v2.md``.

Importing this package loads the v2 models; a v1-only agent never does.
"""

from .context import PromptContext, SyncPromptContext
from .handlers import AgentHandlers
from .turn import PromptTurnV2

__all__ = ["AgentHandlers", "PromptContext", "PromptTurnV2", "SyncPromptContext"]
