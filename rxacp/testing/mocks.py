"""Scriptable fakes for tests: :class:`MockAcpAgent` (to test clients) and
:class:`MockAcpClient` (to test agents).

Both are real rxacp peers over an in-memory transport pair by default, record every frame,
and offer bounded ``expect_*`` waits that fail with an ``AssertionError`` saying what was seen.
The implementations live in ``_mock_agent.py`` / ``_mock_client.py`` (what they share in
``_mock_peer.py``, the Java kit's builders in ``_mock_builders.py``); this module is the public
import point.

This module is *not* responsible for pytest integration (``pytest_plugin.py``) or for the
reference agent (``reference_agent.py``).
"""

from __future__ import annotations

from ._agents import start_agent
from ._client_answers import DEFAULT_CLIENT_CAPABILITIES, PermissionAnswer, ScriptedTerminal
from ._mock_agent import DEFAULT_PROMPT_CAPABILITIES, MockAcpAgent, PromptScript
from ._mock_builders import MockAcpAgentBuilder, MockAcpClientBuilder
from ._mock_client import MockAcpClient
from ._traffic import RecordingTransport, TrafficLog

__all__ = [
    "DEFAULT_CLIENT_CAPABILITIES",
    "DEFAULT_PROMPT_CAPABILITIES",
    "MockAcpAgent",
    "MockAcpAgentBuilder",
    "MockAcpClient",
    "MockAcpClientBuilder",
    "PermissionAnswer",
    "PromptScript",
    "RecordingTransport",
    "ScriptedTerminal",
    "TrafficLog",
    "start_agent",
]
