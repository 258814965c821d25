"""Factory mixins (Java-SDK-style constructors) mixed into generated schema models.

The generator adds these mixins as extra bases of a few generated classes (both the stable and
the unstable module), so ``InitializeResponse.ok()``, ``PromptResponse.end_turn()``,
``PromptRequest.text(...)`` and friends exist without editing generated code.

The factories build the wire form and validate it with ``from_wire``; nested model arguments are
converted with ``to_wire()`` first, so a stable model can be passed to an unstable factory and
vice versa.

This module is NOT responsible for the model definitions themselves, nor for the Java-style
aliases (see ``helpers.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from rxacp.schema._base import AcpModel

if TYPE_CHECKING:
    _Mixin = AcpModel
else:
    # At run time a mixin is a plain class: the generated model it is mixed into is the pydantic
    # model. As AcpModel subclasses they were 11 more model classes built at import (cold start);
    # for the type checker they are AcpModel, so ``cls.from_wire`` returns ``Self``.
    class _Mixin:
        __slots__ = ()


__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "ClientCapabilitiesFactories",
    "CreateElicitationRequestFactories",
    "CreateElicitationResponseFactories",
    "InitializeRequestFactories",
    "InitializeResponseFactories",
    "NewSessionRequestFactories",
    "PromptRequestFactories",
    "PromptResponseFactories",
    "RequestPermissionResponseFactories",
    "SessionNotificationFactories",
    "SetSessionConfigOptionRequestFactories",
]

LATEST_PROTOCOL_VERSION = 1
"""The ACP protocol version this SDK speaks."""

WireLike = AcpModel | Mapping[str, Any]


def _wire(value: WireLike | None) -> Any:
    if isinstance(value, AcpModel):
        return value.to_wire()
    if value is None:
        return None
    return dict(value)


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


class InitializeRequestFactories(_Mixin):
    """Factories for ``InitializeRequest``."""

    @classmethod
    def of(
        cls,
        client_capabilities: WireLike | None = None,
        *,
        protocol_version: int = LATEST_PROTOCOL_VERSION,
        client_info: WireLike | None = None,
    ) -> Self:
        """An ``initialize`` request for protocol version 1 with the given capabilities.

        Without capabilities, ``clientCapabilities`` is sent as ``{}`` (everything off).
        """
        return cls.from_wire(
            _drop_none(
                {
                    "protocolVersion": protocol_version,
                    "clientCapabilities": _wire(client_capabilities) or {},
                    "clientInfo": _wire(client_info),
                }
            )
        )


class InitializeResponseFactories(_Mixin):
    """Factories for ``InitializeResponse``."""

    @classmethod
    def ok(
        cls,
        agent_capabilities: WireLike | None = None,
        *,
        auth_methods: Sequence[WireLike] | None = None,
        agent_info: WireLike | None = None,
        protocol_version: int = LATEST_PROTOCOL_VERSION,
    ) -> Self:
        """A successful ``initialize`` answer (protocol version 1, default capabilities)."""
        return cls.from_wire(
            _drop_none(
                {
                    "protocolVersion": protocol_version,
                    "agentCapabilities": _wire(agent_capabilities) or {},
                    "authMethods": None
                    if auth_methods is None
                    else [_wire(m) for m in auth_methods],
                    "agentInfo": _wire(agent_info),
                }
            )
        )


class NewSessionRequestFactories(_Mixin):
    """Factories for ``NewSessionRequest``."""

    @classmethod
    def of(cls, cwd: str, mcp_servers: Sequence[WireLike] = ()) -> Self:
        """A ``session/new`` request for ``cwd`` (an absolute path) and MCP servers."""
        return cls.from_wire({"cwd": cwd, "mcpServers": [_wire(s) for s in mcp_servers]})


class PromptRequestFactories(_Mixin):
    """Factories for ``PromptRequest``."""

    @classmethod
    def text(cls, session_id: str, text: str) -> Self:
        """A ``session/prompt`` request whose prompt is one text block."""
        return cls.from_wire({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})

    def prompt_text(self) -> str:
        """The concatenated text of all text blocks of this prompt ("" if none)."""
        blocks = getattr(self, "prompt", None) or []
        return "".join(
            b.text
            for b in blocks
            if getattr(b, "type", None) == "text" and isinstance(getattr(b, "text", None), str)
        )


class PromptResponseFactories(_Mixin):
    """Factories for ``PromptResponse``."""

    @classmethod
    def of(cls, stop_reason: str) -> Self:
        """A ``session/prompt`` answer with the given stop reason."""
        return cls.from_wire({"stopReason": stop_reason})

    @classmethod
    def end_turn(cls) -> Self:
        """The turn ended successfully (``stopReason: end_turn``)."""
        return cls.of("end_turn")

    @classmethod
    def text(cls, text: str = "") -> Self:
        """Java's ``PromptResponse.text(...)``: an ``end_turn`` answer.

        As in the Java SDK, ``text`` is documentation only: a prompt answer carries no content,
        so send the text first with ``ctx.send_message(text)``.
        """
        del text
        return cls.of("end_turn")

    @classmethod
    def cancelled(cls) -> Self:
        """The turn was cancelled by the client (``stopReason: cancelled``)."""
        return cls.of("cancelled")

    @classmethod
    def refusal(cls) -> Self:
        """The agent refused to continue (``stopReason: refusal``)."""
        return cls.of("refusal")

    @classmethod
    def max_tokens(cls) -> Self:
        """The agent reached its token limit (``stopReason: max_tokens``)."""
        return cls.of("max_tokens")

    @classmethod
    def max_turn_requests(cls) -> Self:
        """The agent reached its request limit (``stopReason: max_turn_requests``)."""
        return cls.of("max_turn_requests")


class RequestPermissionResponseFactories(_Mixin):
    """Factories for ``RequestPermissionResponse``."""

    @classmethod
    def selected(cls, option_id: str) -> Self:
        """The user picked the option ``option_id``."""
        return cls.from_wire({"outcome": {"outcome": "selected", "optionId": option_id}})

    @classmethod
    def cancelled(cls) -> Self:
        """The prompt turn was cancelled before the user answered."""
        return cls.from_wire({"outcome": {"outcome": "cancelled"}})


class SessionNotificationFactories(_Mixin):
    """Factories for ``SessionNotification`` (the ``session/update`` params)."""

    @classmethod
    def of(cls, session_id: str, update: WireLike) -> Self:
        """A ``session/update`` notification carrying ``update``."""
        return cls.from_wire({"sessionId": session_id, "update": _wire(update)})

    @classmethod
    def agent_text(cls, session_id: str, text: str) -> Self:
        """An ``agent_message_chunk`` update with one text block."""
        return cls.of(
            session_id,
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        )

    @classmethod
    def agent_thought(cls, session_id: str, text: str) -> Self:
        """An ``agent_thought_chunk`` update with one text block."""
        return cls.of(
            session_id,
            {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}},
        )

    def message_text(self) -> str:
        """The text this update adds to the agent's message: the text of an
        ``agent_message_chunk`` with a text block, else ``""`` (a plan, a tool call, a thought,
        an image, ...), so a consumer can print every update without looking at its kind."""
        update = getattr(self, "update", None)
        if getattr(update, "session_update", None) != "agent_message_chunk":
            return ""
        text = getattr(getattr(update, "content", None), "text", None)
        return text if isinstance(text, str) else ""


class SetSessionConfigOptionRequestFactories(_Mixin):
    """Factories for ``SetSessionConfigOptionRequest`` (``session/set_config_option``)."""

    @classmethod
    def select(cls, session_id: str, config_id: str, value: str) -> Self:
        """Set a ``select`` option ``config_id`` to the option value ``value``."""
        return cls.from_wire({"sessionId": session_id, "configId": config_id, "value": value})

    @classmethod
    def bool(cls, session_id: str, config_id: str, value: bool) -> Self:
        """Set a ``boolean`` option ``config_id`` to ``value`` (``type: "boolean"``)."""
        return cls.from_wire(
            {"sessionId": session_id, "configId": config_id, "type": "boolean", "value": value}
        )


class CreateElicitationRequestFactories(_Mixin):
    """Factories for ``CreateElicitationRequest`` (``elicitation/create``), session-scoped."""

    @classmethod
    def form(cls, session_id: str, message: str, requested_schema: WireLike) -> Self:
        """Ask the user to fill in a form described by ``requested_schema`` (``mode: form``)."""
        return cls.from_wire(
            {
                "sessionId": session_id,
                "mode": "form",
                "message": message,
                "requestedSchema": _wire(requested_schema),
            }
        )

    @classmethod
    def url_mode(cls, session_id: str, message: str, elicitation_id: str, url: str) -> Self:
        """Send the user to ``url`` out of band (``mode: url``); completion is notified later.

        Java's ``CreateElicitationRequest.url(...)``; here ``url`` is the model's field.
        """
        return cls.from_wire(
            {
                "sessionId": session_id,
                "mode": "url",
                "message": message,
                "elicitationId": elicitation_id,
                "url": url,
            }
        )


class CreateElicitationResponseFactories(_Mixin):
    """Factories for ``CreateElicitationResponse``."""

    @classmethod
    def accept(cls, content: Mapping[str, Any] | None = None) -> Self:
        """The user accepted; ``content`` holds the form's values (none for ``url`` mode)."""
        return cls.from_wire(
            _drop_none({"action": "accept", "content": None if content is None else dict(content)})
        )

    @classmethod
    def decline(cls) -> Self:
        """The user declined to answer."""
        return cls.from_wire({"action": "decline"})

    @classmethod
    def cancel(cls) -> Self:
        """The request was dismissed without an answer."""
        return cls.from_wire({"action": "cancel"})


class ClientCapabilitiesFactories(_Mixin):
    """Factories for ``ClientCapabilities``."""

    @classmethod
    def of(
        cls,
        *,
        read_text_file: bool = False,
        write_text_file: bool = False,
        terminal: bool = False,
        elicitation_form: bool = False,
        elicitation_url: bool = False,
    ) -> Self:
        """Client capabilities from flags (``fs``, ``terminal``, ``elicitation.form``/``url``).

        Only what is switched on is advertised; ``of()`` is ``{}`` (everything off).
        """
        wire: dict[str, Any] = {}
        if read_text_file or write_text_file:
            wire["fs"] = {"readTextFile": read_text_file, "writeTextFile": write_text_file}
        if terminal:
            wire["terminal"] = True
        elicitation: dict[str, Any] = {
            mode: {} for mode, on in (("form", elicitation_form), ("url", elicitation_url)) if on
        }
        if elicitation:
            wire["elicitation"] = elicitation
        return cls.from_wire(wire)

    @classmethod
    def file_system(cls, *, terminal: bool = False) -> Self:
        """Read and write text files (and optionally run terminals): the usual editor set."""
        return cls.of(read_text_file=True, write_text_file=True, terminal=terminal)
