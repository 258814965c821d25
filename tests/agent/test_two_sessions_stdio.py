"""Issue 22 on the wire: a blocking agent runs the turns of two sessions at once (the sync agent
API and the decorator support), over stdio, played by a raw JSON-RPC client."""

from __future__ import annotations

import os
import sys

import pytest

from .raw_peer import RawPeer

pytestmark = pytest.mark.timeout(60)

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "rendezvous_agent.py")


@pytest.mark.parametrize("api", ["sync", "decorators"])
def test_a_blocking_agent_streams_the_turns_of_two_sessions_at_the_same_time(
    peers: list[RawPeer], api: str
) -> None:
    peer = RawPeer([sys.executable, PEER, "--api", api, "--sessions", "2"])
    peers.append(peer)
    sessions = peer.open_sessions(2)
    events = peer.prompt_all(sessions, "go")
    for sid in sessions:
        texts = [text for s, text in events if s == sid]
        # each handler saw the other one running ("alone" = the turns ran one after another)
        assert texts == [
            "started",
            "met",
            "chunk 0",
            "chunk 1",
            "chunk 2",
            ("answer", {"stopReason": "end_turn"}),
        ]
    first_answer = next(i for i, (_, text) in enumerate(events) if isinstance(text, tuple))
    started = [s for s, text in events[:first_answer] if text == "started"]
    assert sorted(started) == sorted(sessions), "both turns streamed before either ended"


@pytest.mark.parametrize("api", ["sync", "decorators", "async"])
def test_the_reference_agent_streams_slow_turns_of_two_sessions_at_the_same_time(
    peers: list[RawPeer], api: str
) -> None:
    peer = RawPeer([sys.executable, "-m", "rxacp.testing.reference_agent", "--api", api])
    peers.append(peer)
    sessions = peer.open_sessions(2)
    events = peer.prompt_all(sessions, "slow 1.5")
    first_answer = next(i for i, (_, text) in enumerate(events) if isinstance(text, tuple))
    streamed_before = {s for s, _ in events[:first_answer]}
    assert streamed_before == set(sessions), "the second turn waited for the first to end"
    answers = [text for _, text in events if isinstance(text, tuple)]
    assert answers == [("answer", {"stopReason": "end_turn"})] * 2
