"""Items 1 and 2: malformed-input fuzz into an agent and into a client, and id fidelity.

Each generated line goes through the stdio framing rules (``LineFramer``) into a live session.
The expected answer of every line is derived from the codec's classification (tested on its
own in tests/jsonrpc): unparseable → one ``-32700`` with ``id: null``; valid JSON that is not a
message → ``-32600`` (with the id when one was recoverable); a request → exactly one answer
with its id, ``-32601`` for unknown methods and ``-32602`` for bad params of known ones;
notifications and responses → no answer. After the fuzz the same connection serves a normal
prompt. Id fidelity beyond the codec tests: tests/session/test_incoming.py
(``test_request_ids_are_echoed_with_their_exact_type``) and tests/session/test_outgoing_requests.py
(``test_unknown_and_duplicate_responses_do_not_disturb_pending_requests``).
"""

from __future__ import annotations

import json
import queue
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rxacp import jsonrpc
from rxacp.agent import AcpAgent, AcpSyncAgent, SyncPromptContext
from rxacp.client import AcpClient, AcpSyncClient
from rxacp.schema import (
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
)
from rxacp.transport.framing import LineFramer
from tests.session.conftest import ScriptedTransport, flush

from .conftest import Figure, scaled, wait_until


def _say(text: str) -> Callable[[PromptRequest, SyncPromptContext], PromptResponse]:
    """A sync prompt handler that sends ``text`` and ends the turn."""

    def prompt(_req: PromptRequest, ctx: SyncPromptContext) -> PromptResponse:
        ctx.send_message(text)
        return PromptResponse.end_turn()

    return prompt


LINES_PER_EXAMPLE = 100
EXAMPLES = scaled(100, 500)  # x 100 lines = 10,000 lines per side (50,000 long)
PING = "_rxacp/fuzz_ping"

# ---------------------------------------------------------------------------- line generator
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=12,
)


class Ids:
    """Unique ids of every JSON-RPC type (so a duplicate never collides with one in flight)."""

    def __init__(self) -> None:
        self.n = 0

    def next(self, rnd: random.Random) -> Any:
        self.n += 1
        kind = rnd.randrange(5)
        if kind == 0:
            return self.n
        if kind == 1:
            return -self.n
        if kind == 2:
            return 2**53 + 1 + self.n
        if kind == 3:
            return f"fz-{self.n}"
        return 10**30 + self.n


def make_line(rnd: random.Random, ids: Ids, known: list[str], junk: Any) -> bytes:
    """One hostile line (no newline inside)."""
    kind = rnd.randrange(14)
    request = {"jsonrpc": "2.0", "id": ids.next(rnd), "method": rnd.choice(known), "params": {}}
    if kind == 0:  # known method, params that miss every required field
        request["params"] = {"zz": junk}
        return json.dumps(request).encode()
    if kind == 1:  # unknown method
        request["method"] = f"nope/{rnd.randrange(10**6)}"
        request["params"] = junk if isinstance(junk, dict | list) else {"v": junk}
        return json.dumps(request).encode()
    text = json.dumps(request).encode()
    if kind == 2:  # truncated JSON
        return text[: rnd.randrange(1, len(text))]
    if kind == 3:  # invalid UTF-8 inside a string
        cut = text.index(b'"method"') + 10
        return (
            text[:cut] + rnd.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + text[cut:]
        )
    if kind == 4:  # deep nesting, inside params or bare
        depth = rnd.choice([50, 2_000, 100_000])
        nest = b"[" * depth + b"]" * depth
        return nest if rnd.random() < 0.5 else text[:-2] + b',"x":' + nest + b"}}"
    if kind == 5:  # NaN / Infinity literals
        return text[:-2] + b',"x":' + rnd.choice([b"NaN", b"Infinity", b"-Infinity"]) + b"}}"
    if kind == 6:  # non-object JSON
        return json.dumps(junk if not isinstance(junk, dict) else [junk]).encode()
    if kind == 7:  # batches
        return json.dumps([request, {"jsonrpc": "2.0", "method": "x"}]).encode()
    if kind == 8:  # huge numbers: an over-long integer literal, a float overflow, a huge id
        choice = rnd.randrange(3)
        if choice == 0:
            return text[:-2] + b',"n":' + b"9" * 5000 + b"}}"
        if choice == 1:
            return text[:-2] + b',"n":1e400}}'
        ids.n += 1
        request["id"] = 2**64 + ids.n
        request["method"] = f"nope/{ids.n}"
        return json.dumps(request).encode()
    if kind == 9:  # random object, maybe message-like
        obj = junk if isinstance(junk, dict) else {"v": junk}
        obj.update(rnd.choice([{}, {"jsonrpc": "2.0"}, {"jsonrpc": "1.0", "id": ids.next(rnd)}]))
        if "id" in obj and obj.get("jsonrpc") == "2.0":
            obj["id"] = ids.next(rnd)
        return json.dumps(obj).encode()
    if kind == 10:  # bad id / params / version types on a request
        bad = rnd.randrange(4)
        if bad == 0:
            request["id"] = rnd.choice([1.5, True, [], {}])
        elif bad == 1:
            request["params"] = rnd.choice([None, 3, "s"])
        elif bad == 2:
            request["jsonrpc"] = rnd.choice(["1.0", 2, None])
        else:
            request["method"] = rnd.choice([None, 7, []])
        return json.dumps(request).encode()
    if kind == 11:  # stray responses and notifications: never answered
        return json.dumps(
            rnd.choice(
                [
                    {"jsonrpc": "2.0", "id": ids.next(rnd), "result": junk},
                    {"jsonrpc": "2.0", "id": ids.next(rnd), "error": junk},
                    {"jsonrpc": "2.0", "method": f"nope/{ids.n}", "params": {"v": junk}},
                    {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": junk}},
                ]
            )
        ).encode()
    if kind == 12:  # random bytes
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40))).replace(b"\n", b" ")
    return b"  \r"  # blank: skipped by the framing, never answered


def expected(frame: bytes, known: set[str]) -> tuple[str, Any, int | None] | None:
    """What one frame must produce: ("id", id, code | None) / ("null", None, code) / None."""
    try:
        msg = jsonrpc.parse_message(frame)
    except jsonrpc.ParseError:
        return ("null", None, -32700)
    except jsonrpc.InvalidMessage as exc:
        if not exc.answerable:
            return None
        if exc.id is None:
            return ("null", None, -32600)
        return ("id", exc.id, -32600)
    if isinstance(msg, jsonrpc.Request):
        if msg.method == PING:
            return ("id", msg.id, None)
        return ("id", msg.id, -32602 if msg.method in known else -32601)
    return None


# ---------------------------------------------------------------------------- the two sides
class Side:
    """A session under fuzz whose peer the test plays through a ScriptedTransport."""

    def __init__(self, peer: ScriptedTransport, session: Any, known: list[str]) -> None:
        self.peer = peer
        self.session = session
        self.known = known
        self.framer = LineFramer()
        self.stats = Counter[str]()
        self.crashes: list[Any] = []  # exceptions that escaped to the loop (a crash of a callback)
        session.loop.set_exception_handler(lambda _loop, ctx: self.crashes.append(ctx))

    def feed(self, lines: list[bytes]) -> list[bytes]:
        frames: list[bytes] = []
        for line in lines:
            frames.extend(self.framer.feed(line + b"\n"))
        assert not self.framer.take_oversized()
        assert self.peer.loop is not None and self.peer.receiver is not None
        for frame in frames:
            self.peer.loop.call_soon_threadsafe(self.peer.receiver.on_frame, frame)
        return frames

    def classify_on_loop(self, frames: list[bytes]) -> list[Any]:
        """The oracle, run on the session's loop thread: how deep JSON may nest before the
        decoder gives up depends on the thread's recursion budget, so ask the same thread."""
        out: list[Any] = []
        done = threading.Event()

        def work() -> None:
            out.extend(expected(frame, set(self.known)) for frame in frames)
            done.set()

        self.session.queue_on_loop(work)
        assert done.wait(30.0)
        return out

    def run(self, lines: list[bytes], ping_id: str) -> None:
        ping = json.dumps({"jsonrpc": "2.0", "id": ping_id, "method": PING}).encode()
        frames = self.feed([*lines, ping])
        want_ids: dict[Any, int | None] = {}
        want_null: Counter[int] = Counter()
        for exp in self.classify_on_loop(frames):
            if exp is None:
                self.stats["unanswered"] += 1
            elif exp[0] == "null":
                want_null[exp[2]] += 1
            else:
                key = (type(exp[1]).__name__, exp[1])
                assert key not in want_ids, f"duplicate id in the generator: {exp[1]!r}"
                want_ids[key] = exp[2]
        got_null: Counter[int] = Counter()
        while want_ids:
            try:
                msg = self.peer.sent(5.0)
            except queue.Empty:
                pytest.fail(f"no answer for ids {list(want_ids)[:5]} (0 hangs expected)")
            assert "method" not in msg, msg
            rid = msg["id"]
            if rid is None:
                got_null[msg["error"]["code"]] += 1
                continue
            key = (type(rid).__name__, rid)
            assert key in want_ids, f"unexpected or duplicate answer {msg}"
            code = want_ids.pop(key)
            if code is None:
                assert msg["result"] == {}
            else:
                assert msg["error"]["code"] == code, (msg, code)
            self.stats["answered_with_id"] += 1
        flush(self.session)
        while True:  # null-id answers are written synchronously, before the ping is handled
            try:
                msg = self.peer.sent(0.0)
            except queue.Empty:
                break
            assert msg["id"] is None, msg
            got_null[msg["error"]["code"]] += 1
        assert got_null == want_null
        self.stats["answered_null_id"] += sum(got_null.values())
        self.stats["lines"] += len(lines)


def fuzz(side: Side, figure: Figure, label: str) -> None:
    ids = Ids()
    counter = {"n": 0}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.integers(0, 2**32), st.lists(_json, min_size=1, max_size=8))
    def check(seed: int, junks: list[Any]) -> None:
        rnd = random.Random(seed)
        lines = [
            make_line(rnd, ids, side.known, junks[i % len(junks)]) for i in range(LINES_PER_EXAMPLE)
        ]
        counter["n"] += 1
        side.run(lines, f"ping-{counter['n']}")

    check()
    for key in ("lines", "answered_with_id", "answered_null_id", "unanswered"):
        figure(f"{label}_{key}", side.stats[key])
    figure(f"{label}_crashes", len(side.crashes) + (0 if side.session.is_open else 1))
    assert side.crashes == []
    assert side.stats["lines"] >= 10_000
    assert side.session.is_open
    assert side.session.stats.parse_errors > 0 and side.session.stats.invalid_messages > 0


@pytest.fixture
def agent_side() -> Iterator[tuple[Side, AcpSyncAgent]]:
    peer = ScriptedTransport()
    agent = (
        AcpAgent.sync(peer)
        .new_session_handler(lambda req: NewSessionResponse(session_id="s1"))
        .prompt_handler(_say("ok"))
        .ext_request_handler(PING, lambda params: {})
        .build()
    )
    agent.start()
    known = ["initialize", "session/new", "session/prompt"]
    yield Side(peer, agent.session, known), agent
    agent.close()


def test_ten_thousand_malformed_lines_into_an_agent_are_answered_and_it_still_serves_a_prompt(
    agent_side: tuple[Side, AcpSyncAgent], figure: Figure
) -> None:
    side, agent = agent_side
    fuzz(side, figure, "agent")
    peer = side.peer
    for method, params in (
        ("initialize", {"protocolVersion": 1}),
        ("session/new", {"cwd": "/tmp", "mcpServers": []}),
        ("session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}),
    ):
        peer.inject({"jsonrpc": "2.0", "id": f"after-{method}", "method": method, "params": params})
        msg = peer.sent(5.0)
        while "method" in msg:  # the prompt's session/update
            assert msg["method"] == "session/update"
            msg = peer.sent(5.0)
        assert msg["id"] == f"after-{method}" and "result" in msg, msg
    assert msg["result"]["stopReason"] == "end_turn"
    assert agent.session.incoming_request_count == 0 and agent.active_turns == 0


@pytest.fixture
def client_side() -> Iterator[tuple[Side, AcpSyncClient]]:
    peer = ScriptedTransport()
    client = (
        AcpClient.sync(peer)
        .read_text_file_handler(lambda req: ReadTextFileResponse(content="x"))
        .request_permission_handler(lambda req: RequestPermissionResponse.cancelled())
        .ext_request_handler(PING, lambda params: {})
        .build()
    )
    client.session.start()
    known = ["fs/read_text_file", "session/request_permission"]
    yield Side(peer, client.session, known), client
    client.close()


def test_ten_thousand_malformed_lines_into_a_client_are_answered_and_it_still_serves_a_prompt(
    client_side: tuple[Side, AcpSyncClient], figure: Figure
) -> None:
    side, client = client_side
    fuzz(side, figure, "client")
    assert side.session.stats.parse_errors > 0
    peer = side.peer
    updates: list[Any] = []
    client.session.set_notification_handler("session/update", lambda n: updates.append(n.params))
    answer = client.session.send_request("session/prompt", PromptRequest.text("s1", "hi"))
    result: list[Any] = []
    answer.subscribe(result.append)
    msg = peer.sent(5.0)
    assert msg["method"] == "session/prompt"
    update = {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "ok"},
        },
    }
    peer.inject({"jsonrpc": "2.0", "method": "session/update", "params": update})
    peer.inject({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "end_turn"}})
    assert wait_until(lambda: bool(result), 30.0)
    assert result == [{"stopReason": "end_turn"}] and updates == [update]
    assert client.session.pending_request_count == 0


# ---------------------------------------------------------------------------- id fidelity
IDS = [0, 7, -3, 2**53 + 1, -(2**63), 10**30, "", "7", "id with spaces", "ü"]


def test_request_ids_of_every_type_are_echoed_exactly_through_a_handler_and_an_error(
    agent_side: tuple[Side, AcpSyncAgent], figure: Figure
) -> None:
    side, _ = agent_side
    for rid in IDS:
        for method, field in ((PING, "result"), ("nope/x", "error")):
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method}).encode()
            side.feed([line])
            msg = side.peer.sent(5.0)
            raw = json.dumps(msg["id"])
            assert msg["id"] == rid and type(msg["id"]) is type(rid) and field in msg, raw
    figure("id_types_echoed", len(IDS) * 2)


def test_stray_duplicate_and_unknown_responses_leave_pending_requests_untouched(
    client_side: tuple[Side, AcpSyncClient], figure: Figure
) -> None:
    side, client = client_side
    session = client.session
    answers = [session.send_request("_x/echo", {"n": n}) for n in range(3)]
    results: list[list[Any]] = [[] for _ in answers]
    subs = [a.subscribe(r.append) for a, r in zip(answers, results, strict=True)]
    sent = [side.peer.sent(5.0) for _ in answers]
    strays = [
        {"jsonrpc": "2.0", "id": 999, "result": {}},
        {"jsonrpc": "2.0", "id": str(sent[0]["id"]), "result": {}},  # right number, wrong type
        {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "x"}},
        {"jsonrpc": "2.0", "id": sent[0]["id"] + 0.5, "result": {}},
    ]
    for stray in strays:
        side.peer.inject(stray)
    flush(session)
    assert session.pending_request_count == 3 and all(not r for r in results)
    side.peer.inject({"jsonrpc": "2.0", "id": sent[1]["id"], "result": {"n": 1}})
    side.peer.inject({"jsonrpc": "2.0", "id": sent[1]["id"], "result": {"n": "dup"}})  # duplicate
    flush(session)
    assert results[1] == [{"n": 1}] and session.pending_request_count == 2
    assert session.stats.stray_responses >= 3
    figure("stray_responses_ignored", session.stats.stray_responses)
    for sub in subs:
        sub.dispose()


def test_a_cancel_request_naming_an_object_or_array_id_is_ignored_without_a_crash(
    agent_side: tuple[Side, AcpSyncAgent],
) -> None:
    side, _ = agent_side
    for rid in ([], {}, [1], {"a": 1}, 1.5, True, None):
        note = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}
        side.feed([json.dumps(note).encode()])
    flush(side.session)
    assert side.crashes == [] and side.peer.nothing_sent(side.session)
