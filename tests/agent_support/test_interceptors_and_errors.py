"""Exception handlers (most specific wins), interceptors (order, veto, replace) and fail-fast
startup errors of decorator agents."""

from __future__ import annotations

import re
import threading
from typing import Annotated, Any

import pytest

from rxacp.agent import PromptContext, SyncPromptContext
from rxacp.agent.support import (
    AcpAgentSupport,
    AcpInterceptor,
    InvocationContext,
    SessionId,
    acp_agent,
    exception_handler,
    ext_method,
    initialize,
    list_sessions,
    new_session,
    prompt,
    resume_session,
    set_session_mode,
)
from rxacp.errors import AcpErrorCodes, AcpProtocolException
from rxacp.schema import (
    InitializeRequest,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SetSessionModeRequest,
)
from tests.session.conftest import ScriptedTransport

from .harness import SupportHarness

NEW = {"cwd": "/", "mcpServers": []}


def _text(req: PromptRequest) -> str:
    return req.prompt_text()


@acp_agent(name="errors", version="1")
class Failing:
    @prompt
    def answer(self, req: PromptRequest) -> str:
        text = _text(req)
        errors: dict[str, Exception] = {
            "key": KeyError("k"),
            "index": IndexError("i"),
            "runtime": RuntimeError("r"),
            "value": ValueError("v"),
        }
        raise errors[text]

    @new_session
    def create(self, req: NewSessionRequest) -> NewSessionResponse:
        raise KeyError(req.cwd)

    @exception_handler(KeyError)
    def on_key(self, exc: KeyError, req: PromptRequest) -> PromptResponse | NewSessionResponse:
        if req is None:  # not a prompt: the new-session request
            return NewSessionResponse(session_id=f"recovered-{exc.args[0]}")
        return PromptResponse(stop_reason="refusal")

    @exception_handler(LookupError)
    def on_lookup(self, exc: LookupError) -> str:
        return f"lookup {type(exc).__name__}"

    @exception_handler()
    def on_any(self, exc: Exception, inv: InvocationContext) -> Exception:
        if isinstance(exc, ValueError):
            raise AcpProtocolException(AcpErrorCodes.RESOURCE_NOT_FOUND, f"{inv.method}: {exc}")
        return AcpProtocolException.invalid_request(f"{type(exc).__name__} in {inv.handler_name}")


def test_the_most_specific_exception_handler_answers() -> None:
    h = SupportHarness(Failing())
    try:
        h.prompt("key")
        assert h.next_answer()[1]["result"] == {"stopReason": "refusal"}
        h.prompt("index")
        updates, answer = h.next_answer()
        assert updates[0]["params"]["update"]["content"]["text"] == "lookup IndexError"
        assert answer["result"] == {"stopReason": "end_turn"}
        h.prompt("runtime")
        error = h.next_answer()[1]["error"]
        assert error["code"] == -32600
        assert error["message"] == "RuntimeError in Failing.answer"
        h.prompt("value")
        error = h.next_answer()[1]["error"]
        assert error == {"code": -32002, "message": "session/prompt: v"}
        answer = h.request("session/new", NEW)
        assert answer["result"] == {"sessionId": "recovered-/"}
    finally:
        h.close()


class Recorder(AcpInterceptor):
    def __init__(self, name: str, log: list[str], veto: Exception | bool | None = None) -> None:
        self.name, self.log, self.veto = name, log, veto

    def pre_handle(self, ctx: InvocationContext) -> bool | None:
        self.log.append(f"{self.name}.pre {ctx.method}")
        if isinstance(self.veto, Exception):
            raise self.veto
        return None if self.veto is None else not self.veto

    def post_handle(self, ctx: InvocationContext, result: Any) -> Any:
        self.log.append(f"{self.name}.post {type(result).__name__}")
        return None

    def on_error(self, ctx: InvocationContext, exc: BaseException) -> None:
        self.log.append(f"{self.name}.error {type(exc).__name__}")

    def after_completion(self, ctx: InvocationContext, exc: BaseException | None) -> None:
        self.log.append(f"{self.name}.after {type(exc).__name__ if exc else None}")


@acp_agent(name="intercepted", version="1")
class Intercepted:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    @new_session
    def create(self, req: NewSessionRequest) -> NewSessionResponse:
        self.log.append("handler")
        if req.cwd == "/fail":
            raise RuntimeError("boom")
        return NewSessionResponse(session_id="s")


def test_interceptors_run_as_an_onion_around_success_and_failure() -> None:
    log: list[str] = []
    h = SupportHarness(
        Intercepted(log),
        configure=lambda b: b.interceptor(Recorder("a", log)).interceptor(Recorder("b", log)),
    )
    try:
        assert h.request("session/new", NEW)["result"] == {"sessionId": "s"}
        h.flush()
        assert log == [
            "a.pre session/new",
            "b.pre session/new",
            "handler",
            "b.post NewSessionResponse",
            "a.post NewSessionResponse",
            "b.after None",
            "a.after None",
        ]
        log.clear()
        assert h.request("session/new", {**NEW, "cwd": "/fail"})["error"]["code"] == -32603
        h.flush()
        assert log == [
            "a.pre session/new",
            "b.pre session/new",
            "handler",
            "b.error RuntimeError",
            "a.error RuntimeError",
            "b.after RuntimeError",
            "a.after RuntimeError",
        ]
    finally:
        h.close()


@acp_agent(name="blocked", version="1")
class Blocked:
    def __init__(self, log: list[str], started: threading.Event, release: threading.Event) -> None:
        self.log, self.started, self.release = log, started, release

    @prompt
    def answer(self, req: PromptRequest) -> str:
        self.started.set()
        self.release.wait(10)
        self.log.append("handler returned")
        return "too late"


def test_a_cancelled_blocking_handler_ends_its_interceptors_once_and_drops_its_late_value() -> None:
    log: list[str] = []
    started, release = threading.Event(), threading.Event()
    h = SupportHarness(
        Blocked(log, started, release), configure=lambda b: b.interceptor(Recorder("a", log))
    )
    try:
        rid = h.prompt("wait")
        assert started.wait(10)
        h.cancel_request(rid)
        updates, answer = h.next_answer()
        assert updates == []
        assert answer == {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32800, "message": "Request cancelled"},
        }
        h.flush()
        assert log == ["a.pre session/prompt", "a.after None"]  # ended by the disposal
        release.set()
        h.prompt("next")
        updates, answer = h.next_answer()
        assert answer["result"] == {"stopReason": "end_turn"}
        assert [u["params"]["update"]["content"]["text"] for u in updates] == ["too late"]
        # only the second call got as far as post_handle: the cancelled one's value is dropped
        assert log.count("a.post PromptResponse") == 1
    finally:
        release.set()
        h.close()


def test_an_interceptor_vetoes_with_its_protocol_error_and_the_handler_never_runs() -> None:
    log: list[str] = []
    auth = AcpProtocolException.auth_required("log in first")
    h = SupportHarness(
        Intercepted(log),
        configure=lambda b: b.interceptor(Recorder("a", log)).interceptor(
            Recorder("b", log, veto=auth)
        ),
    )
    try:
        error = h.request("session/new", NEW)["error"]
        assert error == {"code": -32000, "message": "log in first"}
        h.flush()
        assert log == ["a.pre session/new", "b.pre session/new", "a.after AcpProtocolException"]
    finally:
        h.close()


def test_a_false_pre_handle_is_answered_invalid_request_naming_the_interceptor() -> None:
    log: list[str] = []
    h = SupportHarness(
        Intercepted(log), configure=lambda b: b.interceptor(Recorder("a", log, True))
    )
    try:
        error = h.request("session/new", NEW)["error"]
        assert error["code"] == -32600
        assert "rejected by Recorder" in error["message"]
        assert "handler" not in log
    finally:
        h.close()


def test_post_handle_may_replace_the_answer_and_duck_typed_interceptors_work() -> None:
    class Rename:
        def post_handle(self, ctx: InvocationContext, result: Any) -> Any:
            return NewSessionResponse(session_id=f"{result.session_id}-renamed")

    h = SupportHarness(Intercepted([]), configure=lambda b: b.interceptor(Rename()))
    try:
        assert h.request("session/new", NEW)["result"] == {"sessionId": "s-renamed"}
    finally:
        h.close()
    with pytest.raises(TypeError, match="none of the interceptor methods"):
        AcpAgentSupport.create(Intercepted([])).interceptor(object())


# -- fail fast ------------------------------------------------------------------------------


@acp_agent(name="bad", version="1")
class Duplicate:
    @new_session
    def one(self, req: NewSessionRequest) -> None: ...

    @new_session
    def two(self, req: NewSessionRequest) -> None: ...


def test_two_methods_claiming_one_acp_method_fail_at_create_naming_both() -> None:
    with pytest.raises(
        TypeError, match=r"Duplicate: both one\(\) and two\(\) handle 'session/new'"
    ):
        AcpAgentSupport.create(Duplicate())


class Unknown:
    pass


@acp_agent(name="bad", version="1")
class UnknownParam:
    @set_session_mode
    def mode(self, req: SetSessionModeRequest, thing: Unknown) -> None: ...


@acp_agent(name="bad", version="1")
class Unannotated:
    @set_session_mode
    # deliberately unannotated: proves the decorator's refusal
    def mode(self, req) -> None:  # type: ignore[no-untyped-def]
        ...


@acp_agent(name="bad", version="1")
class ContextOutsidePrompt:
    @new_session
    def create(self, ctx: SyncPromptContext) -> None: ...


@acp_agent(name="bad", version="1")
class BlockingContextInAsync:
    @prompt
    async def answer(self, ctx: SyncPromptContext) -> None: ...


@acp_agent(name="bad", version="1")
class SessionIdWithoutSession:
    @initialize
    def init(self, req: InitializeRequest, sid: Annotated[str, SessionId]) -> None: ...


@acp_agent(name="bad", version="1")
class WrongRequest:
    @resume_session
    def resume(self, req: NewSessionRequest) -> None: ...


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        (
            UnknownParam,
            "UnknownParam.mode: cannot resolve parameter 'thing' of type Unknown of this "
            "session/set_mode handler (supported: the request model",
        ),
        (Unannotated, "Unannotated.mode: parameter 'req' of this session/set_mode handler has no"),
        (ContextOutsidePrompt, "only available to @prompt handlers"),
        (BlockingContextInAsync, "use PromptContext, not SyncPromptContext"),
        (SessionIdWithoutSession, "InitializeRequest has no session id"),
        (WrongRequest, "this handler receives ResumeSessionRequest"),
    ],
)
def test_an_unresolvable_signature_fails_the_build_naming_class_method_and_parameter(
    agent: type, message: str
) -> None:
    builder = AcpAgentSupport.create(agent()).transport(ScriptedTransport())  # create succeeds
    with pytest.raises(TypeError, match=re.escape(message)):
        builder.build()
    with pytest.raises(TypeError, match=re.escape(message)):
        builder.validate()


def test_bad_declarations_fail_with_clear_errors() -> None:
    with pytest.raises(TypeError, match="not an ACP agent: decorate the class with @acp_agent"):
        AcpAgentSupport.create(Unknown())
    with pytest.raises(ValueError, match=r"@ext_method: .*must start with '_'"):
        ext_method("acme/echo")
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="takes exception types"):
        exception_handler("ValueError")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="@acp_agent needs a non-empty name"):
        acp_agent(name="", version="1")
    with pytest.raises(ValueError, match="no transport"):
        AcpAgentSupport.create(Intercepted([])).build()
    with pytest.raises(ValueError, match="no agent"):
        AcpAgentSupport.builder().transport(ScriptedTransport()).build()

    @acp_agent(name="bad", version="1")
    class TwoForOneType:
        @exception_handler(KeyError)
        def a(self) -> None: ...

        @exception_handler(KeyError)
        def b(self) -> None: ...

    with pytest.raises(TypeError, match=r"both a\(\) and b\(\) handle KeyError"):
        AcpAgentSupport.create(TwoForOneType())


def test_a_prompt_context_is_resolved_for_async_def_prompts() -> None:
    @acp_agent(name="ok", version="1")
    class Ok:
        @prompt
        async def answer(self, ctx: PromptContext) -> None:
            return None

        @list_sessions
        def sessions(self) -> None: ...

    agent = AcpAgentSupport.create(Ok()).transport(ScriptedTransport()).build()
    try:
        assert agent.active_turns == 0
    finally:
        agent.close()
