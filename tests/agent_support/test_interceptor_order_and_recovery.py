"""Interceptors, Java style (issue 19.7): ``on_error`` may replace the result (Java
``onError``), and interceptors run by ``order`` (Java ``getOrder``)."""

from __future__ import annotations

from typing import Any

import pytest

from rxacp.agent.support import AcpAgentSupport, AcpInterceptor, InvocationContext
from rxacp.schema import NewSessionResponse

from .harness import SupportHarness
from .test_interceptors_and_errors import NEW, Intercepted, Recorder


class Recovering(AcpInterceptor):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def on_error(self, ctx: InvocationContext, exc: BaseException) -> Any:
        self.log.append(f"recover {type(exc).__name__}")
        return NewSessionResponse(session_id="fallback")

    def after_completion(self, ctx: InvocationContext, exc: BaseException | None) -> None:
        self.log.append(f"recovering.after {exc}")


def test_an_on_error_that_returns_a_value_answers_with_it_instead_of_the_error() -> None:
    log: list[str] = []
    h = SupportHarness(
        Intercepted(log),
        configure=lambda b: b.interceptor(Recorder("outer", log)).interceptor(Recovering(log)),
    )
    try:
        answer = h.request("session/new", {**NEW, "cwd": "/fail"})
        assert answer["result"] == {"sessionId": "fallback"}
        h.flush()
        # the inner interceptor recovered: the outer one sees no error, everyone completes clean
        assert log == [
            "outer.pre session/new",
            "handler",
            "recover RuntimeError",
            "recovering.after None",
            "outer.after None",
        ]
    finally:
        h.close()


def test_an_on_error_returning_none_lets_the_error_through() -> None:
    log: list[str] = []
    h = SupportHarness(Intercepted(log), configure=lambda b: b.interceptor(Recorder("a", log)))
    try:
        assert h.request("session/new", {**NEW, "cwd": "/fail"})["error"]["code"] == -32603
    finally:
        h.close()


def test_interceptors_run_lowest_order_first_whatever_the_order_added() -> None:
    log: list[str] = []

    class Ranked(Recorder):
        order = -10

    h = SupportHarness(
        Intercepted(log),
        configure=lambda b: (
            b.interceptor(Recorder("late", log), order=5)
            .interceptor(Recorder("default", log))
            .interceptor(Ranked("early", log))
            .interceptor(Recorder("also-default", log))
        ),
    )
    try:
        h.request("session/new", NEW)
        h.flush()
        pre = [entry.split(".")[0] for entry in log if ".pre" in entry]
        assert pre == ["early", "default", "also-default", "late"]
    finally:
        h.close()


def test_an_order_that_is_not_an_int_is_refused() -> None:
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="order must be an int"):
        AcpAgentSupport.create(Intercepted([])).interceptor(Recorder("a", []), order="1")  # type: ignore[arg-type]
