"""An agent under test whose client is played by the test (exact wire assertions)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from reactivex.testing import TestScheduler

from rxacp.agent import AcpAgent
from rxacp.testing import quiesce
from tests.session.conftest import ScriptedTransport

SESSION = "sess-1"


class Notes:
    """A notification handler that records each ``params`` and signals :attr:`arrived`."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.arrived = threading.Event()

    def __call__(self, params: Any) -> None:
        self.seen.append(params)
        self.arrived.set()


class AgentHarness:
    """Builds an agent on a scripted transport with a virtual clock; the test is the client."""

    def __init__(
        self,
        api: str = "sync",
        *,
        grace: float | None = 60.0,
        max_duration: float | None = None,
        configure: Any = None,
        client_capabilities: dict[str, Any] | None = None,
        make_builder: Callable[[ScriptedTransport], Any] | None = None,
    ) -> None:
        """``api``: ``"sync"`` or ``"async"`` (or ``make_builder(transport)`` builds another
        kind of agent); ``configure(builder)`` adds handlers; with ``client_capabilities`` the
        agent is initialized at once."""
        self.peer = ScriptedTransport()
        self.clock = TestScheduler()
        if make_builder is not None:
            builder = make_builder(self.peer)
        else:
            builder = AcpAgent.sync(self.peer) if api == "sync" else AcpAgent.async_(self.peer)
        builder.scheduler(self.clock).cancel_grace_period(grace or 0).max_prompt_duration(
            max_duration or 0
        )
        if configure is not None:
            configure(builder)
        self.agent: Any = builder.build()
        self.agent.start()
        self._next_id = 100
        if client_capabilities is not None:
            answer = self.request(
                "initialize", {"protocolVersion": 1, "clientCapabilities": client_capabilities}
            )
            assert "result" in answer, answer

    # -- client side ------------------------------------------------------------------
    def send(self, obj: dict[str, Any]) -> None:
        self.peer.inject({"jsonrpc": "2.0", **obj})

    def send_request(self, method: str, params: Any, id: Any = None) -> Any:
        if id is None:
            self._next_id += 1
            id = self._next_id
        self.send({"id": id, "method": method, "params": params})
        return id

    def request(self, method: str, params: Any) -> dict[str, Any]:
        rid = self.send_request(method, params)
        msg = self.next()
        assert msg.get("id") == rid, msg
        return msg

    def prompt(self, text: str = "hi", session: str = SESSION, id: Any = None) -> Any:
        return self.send_request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]}, id
        )

    def cancel(self, session: str = SESSION) -> None:
        self.send({"method": "session/cancel", "params": {"sessionId": session}})

    def cancel_request(self, rid: Any) -> None:
        self.send({"method": "$/cancel_request", "params": {"requestId": rid}})

    def next(self, timeout: float = 3.0) -> dict[str, Any]:
        return self.peer.sent(timeout)

    def next_answer(self, timeout: float = 3.0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Collect messages until an answer (a message with an id and no method)."""
        before: list[dict[str, Any]] = []
        while True:
            msg = self.next(timeout)
            if "method" not in msg:
                return before, msg
            before.append(msg)

    def idle(self) -> bool:
        return self.peer.nothing_sent(self.agent.session)

    def flush(self) -> None:
        quiesce(self.agent, workers=False)  # sync handlers stay blocked on purpose here

    def advance(self, seconds: float) -> None:
        self.flush()
        self.clock.advance_by(seconds)
        self.flush()

    def close(self) -> None:
        self.agent.close()
