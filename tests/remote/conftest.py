"""Fixtures: the reference agent served by ``AcpAsgiApp`` under uvicorn on loopback, and rxacp
clients talking to it over both profiles of the one ``/acp`` endpoint (Streamable HTTP and
WebSocket)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rxacp.testing.reference_agent import ReferenceOptions, build_agent
from rxacp.transport import AcpTransport
from rxacp.transport.http import AcpAsgiApp, HttpAcpClientTransport
from rxacp.transport.http._serve import UvicornThread
from rxacp.transport.websocket import WebSocketAcpClientTransport
from tests.websocket.conftest import APIS, GRACE, Conversation

PROFILES = ("http", "websocket")


def reference_app(api: str = "sync", **options: Any) -> AcpAsgiApp:
    """The app giving each connection its own reference agent (grace ``GRACE``)."""

    def factory(transport: AcpTransport) -> Any:
        return build_agent(api, transport, ReferenceOptions(cancel_grace=GRACE))

    return AcpAsgiApp(factory, **options)


def client_transport(url: str, profile: str, **options: Any) -> AcpTransport:
    """An rxacp client transport for the app at ``url`` (http://.../acp) over ``profile``."""
    if profile == "http":
        return HttpAcpClientTransport(url, **options)
    return WebSocketAcpClientTransport("ws" + url.removeprefix("http"), **options)


@pytest.fixture(scope="module", params=APIS)
def served(request: pytest.FixtureRequest) -> Iterator[UvicornThread]:
    """One app per agent API under uvicorn, shared by a module's tests."""
    with UvicornThread(reference_app(request.param)) as server:
        yield server


@pytest.fixture(params=PROFILES)
def conv(served: UvicornThread, request: pytest.FixtureRequest) -> Iterator[Conversation]:
    """A fresh, initialized client connection to the shared app, over each profile."""
    conversation = Conversation(served.url, client_transport(served.url, request.param))
    conversation.initialize()
    yield conversation
    conversation.close()
