"""Reactor → RxPY, one tested snippet per row of the migration guide's operator table.

Each ``row_*`` function is the Python for one Java idiom (in its docstring) and asserts what the
Java code would give. ``python examples/reactor_to_rxpy.py`` runs them all and prints one line
per row; ``tests/docs/test_reactor_table.py`` runs each as a test and checks that the guide's
table and this file name the same rows.
"""

from __future__ import annotations

import concurrent.futures
from datetime import timedelta
from typing import Any

import reactivex
from reactivex import operators as ops
from reactivex.subject import AsyncSubject, ReplaySubject, Subject
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxacp.agent import AcpAgent
from rxacp.client import AcpClient
from rxacp.errors import AcpTimeoutException
from rxacp.schema import InitializeResponse, PromptResponse
from rxacp.session import as_acp_observable
from rxacp.testing import InMemoryTransportPair, MockAcpAgent, quiesce

TIMEOUT = timedelta(seconds=5)  # Java: Duration.ofSeconds(5)


def values(source: reactivex.Observable[Any]) -> list[Any]:
    """Every value of a finished Observable (Java: ``flux.collectList().block()``)."""
    return source.pipe(ops.to_list()).run()


# ------------------------------------------------------------------ creating
def row_mono_just() -> None:
    """``Mono.just(x)`` / ``Flux.just(a, b)``"""
    assert values(reactivex.just(InitializeResponse.ok())) == [InitializeResponse.ok()]
    assert values(reactivex.of("a", "b")) == ["a", "b"]


def row_mono_empty() -> None:
    """``Mono.empty()``"""
    assert values(reactivex.empty()) == []


def row_mono_error() -> None:
    """``Mono.error(e)``"""
    errors: list[Exception] = []
    reactivex.throw(ValueError("bad")).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["bad"]


def row_mono_from_callable() -> None:
    """``Mono.fromCallable(fn)`` / ``Mono.fromRunnable(fn)`` / ``Mono.defer(supplier)``"""
    calls: list[str] = []
    lazy = reactivex.defer(lambda _: reactivex.just(calls.append("called") or len(calls)))
    assert calls == []  # nothing runs before a subscription, as in Java
    assert values(reactivex.from_callable(lambda: 42)) == [42]
    assert values(lazy) == [1] and calls == ["called"]


def row_mono_delay() -> None:
    """``Mono.delay(Duration)``"""
    clock = TestScheduler()
    fired: list[int] = []
    reactivex.timer(timedelta(seconds=2), scheduler=clock).subscribe(fired.append)
    clock.advance_by(2.0)
    assert fired == [0]


def row_sinks() -> None:
    """``Sinks.one()`` / ``Sinks.many().multicast()`` / ``Sinks.many().replay().all()``"""
    one: AsyncSubject[str] = AsyncSubject()  # Sinks.one(): the last value, to late subscribers
    one.on_next("done")
    one.on_completed()
    many: Subject[str] = Subject()  # multicast: only what comes after subscribing
    seen: list[str] = []
    many.subscribe(seen.append)
    many.on_next("x")
    replay: ReplaySubject[str] = ReplaySubject()  # replay().all()
    replay.on_next("early")
    assert values(one) == ["done"] and seen == ["x"]
    assert replay.pipe(ops.take(1), ops.to_list()).run() == ["early"]


# ------------------------------------------------------------------ transforming and chaining
def row_map_filter_cast() -> None:
    """``.map(f)`` / ``.filter(p)`` / ``.cast(T)``"""
    out = reactivex.of(1, 2, 3).pipe(ops.filter(lambda n: n > 1), ops.map(lambda n: n * 10))
    assert values(out) == [20, 30]  # .cast(T): not needed, Python is not typed at run time


def row_flat_map() -> None:
    """``.flatMap(f)`` (``.concatMap(f)`` to keep the order)"""
    out = reactivex.of(1, 2).pipe(ops.concat_map(lambda n: reactivex.of(n, n)))
    assert values(out) == [1, 1, 2, 2]
    assert values(reactivex.just(1).pipe(ops.flat_map(lambda n: reactivex.just(n + 1)))) == [2]


def row_then() -> None:
    """``.then(next)`` / ``.then()`` / ``.thenReturn(x)``"""
    answer = reactivex.just(PromptResponse.end_turn())
    sent = reactivex.of("update 1", "update 2")
    then_next = sent.pipe(ops.ignore_elements(), ops.concat(answer))  # .then(answer)
    then_void = sent.pipe(ops.ignore_elements())  # .then()
    then_return = sent.pipe(ops.ignore_elements(), ops.concat(reactivex.just("x")))
    assert values(then_next) == [PromptResponse.end_turn()]
    assert values(then_void) == [] and values(then_return) == ["x"]


def row_lifecycle_then() -> None:
    """``agent.start().then(client.initialize())`` (a lifecycle ``Mono<Void>`` chained)"""
    with MockAcpAgent() as mock:
        client = AcpClient.async_(mock.client_transport).build()
        started = client.session.start()  # a Completion: --None|
        answer = started.pipe(ops.flat_map(lambda _: client.initialize())).block(TIMEOUT)
        assert answer is not None and answer.protocol_version == 1
        client.close_gracefully().block(TIMEOUT)


def row_zip_when() -> None:
    """``Mono.zip(a, b)`` / ``Mono.when(a, b)``"""
    both = reactivex.zip(reactivex.just("a"), reactivex.just("b"))
    done = reactivex.merge(reactivex.just("a"), reactivex.just("b")).pipe(ops.ignore_elements())
    assert values(both) == [("a", "b")] and values(done) == []


# ------------------------------------------------------------------ side effects and errors
def row_do_on_next() -> None:
    """``.doOnNext(fn)`` / ``.doOnError(fn)`` / ``.doFinally(fn)``"""
    seen: list[Any] = []
    source = reactivex.of(1, 2).pipe(
        ops.do_action(on_next=seen.append, on_error=seen.append),
        ops.finally_action(lambda: seen.append("finally")),
    )
    assert values(source) == [1, 2] and seen == [1, 2, "finally"]


def row_on_error_resume() -> None:
    """``.onErrorResume(e -> fallback)`` / ``.onErrorReturn(x)``"""
    failing = reactivex.throw(ValueError("bad"))
    resumed = failing.pipe(ops.catch(lambda error, _source: reactivex.just(f"after {error}")))
    assert values(resumed) == ["after bad"]
    assert values(failing.pipe(ops.catch(reactivex.just("default")))) == ["default"]


def row_subscribe() -> None:
    """``.subscribe(onNext, onError, onComplete)``"""
    events: list[Any] = []
    reactivex.of("a").subscribe(
        on_next=events.append, on_error=events.append, on_completed=lambda: events.append("|")
    )
    assert events == ["a", "|"]


# ------------------------------------------------------------------ leaving reactive code
def row_block() -> None:
    """``.block()`` / ``.block(Duration)``"""
    with MockAcpAgent() as mock:
        client = AcpClient.async_(mock.client_transport).build()
        response = client.initialize().block(TIMEOUT)  # every rxacp Observable has block()
        assert response is not None and response.protocol_version == 1
        assert as_acp_observable(reactivex.just(7)).block(TIMEOUT) == 7  # a plain Observable
        assert reactivex.just(7).run() == 7  # reactivex's own: no timeout, no dispose on Ctrl-C
        client.close_gracefully().block(TIMEOUT)


def row_to_future() -> None:
    """``.toFuture()``"""
    with MockAcpAgent() as mock:
        client = AcpClient.async_(mock.client_transport).build()
        future = client.initialize().pipe(ops.to_future(concurrent.futures.Future))
        assert future.result(timeout=5).protocol_version == 1
        client.close_gracefully().block(TIMEOUT)


def row_timeout() -> None:
    """``.timeout(Duration)``"""
    clock = TestScheduler()
    slow = reactivex.never()
    limited = slow.pipe(
        ops.timeout(
            timedelta(seconds=3),
            other=reactivex.throw(AcpTimeoutException("_example/slow", 3.0)),
            scheduler=clock,  # rxacp code: client.session.scheduler
        )
    )
    errors: list[Exception] = []
    limited.subscribe(on_error=errors.append)
    clock.advance_by(3.0)
    assert isinstance(errors[0], AcpTimeoutException)


def row_subscribe_on() -> None:
    """``.subscribeOn(scheduler)`` / ``.publishOn(scheduler)``"""
    clock = TestScheduler()
    seen: list[str] = []
    reactivex.just("x").pipe(ops.subscribe_on(clock), ops.observe_on(clock)).subscribe(seen.append)
    assert seen == []
    clock.start()
    assert seen == ["x"]


# ------------------------------------------------------------------ testing: StepVerifier
def row_step_verifier() -> None:
    """``StepVerifier.create(flux).expectNext(a, b).verifyComplete()``"""
    with marbles_testing(timespan=1.0) as (start, cold, _hot, expected):
        source = cold("-a-b|")
        results = start(source.pipe(ops.map(str.upper)))
        assert results == expected("-A-B|")


def row_step_verifier_error() -> None:
    """``StepVerifier.create(mono).expectError(E.class).verify()``"""
    clock = TestScheduler()
    results = clock.start(lambda: reactivex.throw(ValueError("bad")))
    (message,) = results.messages
    assert message.time == ReactiveTest.subscribed  # 200: errors at subscription
    assert isinstance(message.value.exception, ValueError)


def row_virtual_time() -> None:
    """``StepVerifier.withVirtualTime(...).thenAwait(Duration)`` on an SDK timeout"""
    clock = TestScheduler()
    pair = InMemoryTransportPair.create()
    agent = (
        AcpAgent.async_(pair.agent_transport)
        .ext_request_handler("_example/slow", lambda _params: reactivex.never())  # no answer
        .build()
    )
    agent.start()
    client = AcpClient.async_(pair.client_transport).scheduler(clock).request_timeout(30).build()
    errors: list[Exception] = []
    client.ext_method("_example/slow").subscribe(on_error=errors.append)
    quiesce(client)  # the request is written and its timer armed
    clock.advance_by(30.0)  # 30 virtual seconds, at once
    quiesce(client)
    assert isinstance(errors[0], AcpTimeoutException)
    client.close()
    agent.close()


ROWS = {name: fn for name, fn in sorted(globals().items()) if name.startswith("row_")}


def main() -> None:
    for name, row in ROWS.items():
        row()
        print(f"ok {name}: {(row.__doc__ or '').strip()}")


if __name__ == "__main__":
    main()
