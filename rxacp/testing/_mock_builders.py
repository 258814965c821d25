"""The Java kit's builders for the mocks: ``MockAcpAgent.builder()``, ``MockAcpClient.builder()``.

Java's ``MockAcpAgent.builder(transport)`` and ``MockAcpClient.builder(transport)`` with their
methods in snake_case, plus the constructors' other options. Every answer a builder sets can
also be scripted later on the built mock (``mock.on(...)``, ``on_prompt``, ``file``...).

This module is *not* responsible for what the mocks do (``_mock_agent.py``, ``_mock_client.py``);
the options and the close-on-failure of :meth:`build` they share are in ``_mock_peer.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Self

from rxacp._durations import Duration
from rxacp.schema import (
    AcpModel,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    WriteTextFileRequest,
)
from rxacp.transport.base import AcpTransport

from ._mock_agent import MockAcpAgent
from ._mock_client import MockAcpClient
from ._mock_peer import MockBuilder

__all__ = ["MockAcpAgentBuilder", "MockAcpClientBuilder"]


def _callable(fn: Any, error: str) -> Any:
    if not callable(fn):
        raise TypeError(error)
    return fn


class MockAcpAgentBuilder(MockBuilder[MockAcpAgent]):
    """Builds a :class:`MockAcpAgent` the Java kit's way (``MockAcpAgent.builder()``).

    Java's ``initializeResponse``, ``newSessionResponse``, ``promptResponse`` and
    ``requestTimeout`` in snake_case, plus the constructor's other options; ``build()`` starts
    the mock. Each answer can also be scripted later with ``mock.on(...)``/``on_prompt``.
    """

    def __init__(self, transport: AcpTransport | None = None) -> None:
        super().__init__(transport)
        self._scripts: dict[str, Any] = {}
        self._prompt: Callable[[PromptRequest], Any] | None = None

    def initialize_response(self, response: InitializeResponse | Mapping[str, Any]) -> Self:
        """The answer to every ``initialize`` (default: what the scripts imply)."""
        self._scripts["initialize"] = response
        return self

    def new_session_response(self, response: NewSessionResponse | Mapping[str, Any]) -> Self:
        """The answer to every ``session/new`` (default: a fresh ``mock-session-N``)."""
        self._scripts["session/new"] = response
        return self

    def prompt_response(self, provider: Callable[[PromptRequest], Any]) -> Self:
        """``provider(request)`` answers each prompt (a ``PromptResponse``, a stop reason or
        ``None``); for updates during the turn use ``mock.on_prompt(script)``."""
        self._prompt = _callable(provider, "prompt_response takes a callable provider(request)")
        return self

    def cancel_grace_period(self, period: Duration | None) -> Self:
        """The mock agent's cancel grace period (default 5 s)."""
        return self._option("cancel_grace_period", period)

    def agent_capabilities(self, capabilities: AcpModel | Mapping[str, Any]) -> Self:
        """Advertise exactly these capabilities."""
        return self._option("agent_capabilities", capabilities)

    def agent_info(self, info: Implementation | Mapping[str, Any]) -> Self:
        """The ``agentInfo`` to advertise."""
        return self._option("agent_info", info)

    def _create(self) -> MockAcpAgent:
        return MockAcpAgent(self._transport, **self._options)

    def _script(self, mock: MockAcpAgent) -> None:
        for method, answer in self._scripts.items():
            if method == "initialize":  # not scriptable with on(): it is answered specially
                mock._set_script(method, answer)
            else:
                mock.on(method, answer)
        provider = self._prompt
        if provider is not None:
            mock.on_prompt(lambda request, _ctx: provider(request))


class MockAcpClientBuilder(MockBuilder[MockAcpClient]):
    """Builds a :class:`MockAcpClient` the Java kit's way (``MockAcpClient.builder()``).

    Java's ``permissionResponse``, ``readFileResponse``, ``fileContent``,
    ``writeFileResponse`` and ``requestTimeout`` in snake_case, plus the constructor's other
    options. Java's kit allows every permission by default; this one, like rxacp, never
    auto-approves (default ``"reject"``): pass ``permission_response`` to allow.
    """

    def __init__(self, transport: AcpTransport | None = None) -> None:
        super().__init__(transport)
        self._files: dict[str, str] = {}
        self._permission: Any = None
        self._read: Callable[[ReadTextFileRequest], Any] | None = None
        self._write: Callable[[WriteTextFileRequest], Any] | None = None

    def permission_response(self, handler: Callable[[RequestPermissionRequest], Any]) -> Self:
        """``handler(request)`` answers each permission request (a response, an option id,
        ``"allow"``/``"reject"``/``"cancel"``)."""
        self._permission = _callable(
            handler, "permission_response takes a callable handler(request)"
        )
        return self

    def read_file_response(self, handler: Callable[[ReadTextFileRequest], Any]) -> Self:
        """``handler(request)`` answers ``fs/read_text_file`` for paths without
        :meth:`file_content`."""
        self._read = _callable(handler, "read_file_response takes a callable handler(request)")
        return self

    def file_content(self, path: str, content: str) -> Self:
        """Serve ``content`` for ``path`` (checked before ``read_file_response``)."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"ACP file paths are absolute; got {path!r}")
        self._files[path] = content
        return self

    def write_file_response(self, handler: Callable[[WriteTextFileRequest], Any]) -> Self:
        """``handler(request)`` answers ``fs/write_text_file`` (default: record the file)."""
        self._write = _callable(handler, "write_file_response takes a callable handler(request)")
        return self

    def client_capabilities(self, capabilities: ClientCapabilities | Mapping[str, Any]) -> Self:
        """What ``initialize`` advertises (default :data:`DEFAULT_CLIENT_CAPABILITIES`)."""
        return self._option("client_capabilities", capabilities)

    def cwd(self, cwd: str) -> Self:
        """Working directory of the sessions it creates (default ``/``)."""
        return self._option("cwd", cwd)

    def _create(self) -> MockAcpClient:
        return MockAcpClient(self._transport, **self._options)

    def _script(self, mock: MockAcpClient) -> None:
        for path, content in self._files.items():
            mock.file(path, content)
        if self._permission is not None:
            mock.permission(self._permission)
        read = self._read
        if read is not None:
            files = dict(self._files)

            def answer_read(request: ReadTextFileRequest) -> Any:
                if request.path in files:
                    return ReadTextFileResponse(content=files[request.path])
                return read(request)

            mock.on("fs/read_text_file", answer_read)
        if self._write is not None:
            mock.on("fs/write_text_file", self._write)
