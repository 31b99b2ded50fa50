"""The one request/reply convention of pyjms's services: a refusal keeps its class and reason;
a service served and called over the fake broker."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from pyjms import ConnectionFactory, Queue
from pyjms.api.requests import ServiceClient, ServiceUnavailable, answer_for_error, error_from_answer, serve
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    JMSSecurityRuntimeException,
    ResourceAllocationRuntimeException,
)


@pytest.mark.parametrize(
    "error, expected",
    [
        (JMSSecurityRuntimeException("no", reason=2035), JMSSecurityRuntimeException),
        (IllegalStateRuntimeException("lease ran out"), IllegalStateRuntimeException),
        (InvalidArgumentRuntimeException("bad op", reason=2046), InvalidArgumentRuntimeException),
        # any other error is the asker's argument problem, and keeps its reason
        (ResourceAllocationRuntimeException("full", reason=2053), InvalidArgumentRuntimeException),
    ],
)
def test_a_refusal_keeps_its_kind_and_reason_across_the_wire(error, expected) -> None:
    answer = answer_for_error(error)
    assert answer["ok"] is False
    back = error_from_answer(answer, "define refused by PYJMS.ADMIN")
    assert type(back) is expected
    assert back.reason == error.reason
    assert str(error) in str(back) and "PYJMS.ADMIN" in str(back)


# ---------------------------------------------------------------------------- over the fake broker

SERVICE = Queue("PYJMS.TEST.SERVICE")


@pytest.fixture
def service(factory: ConnectionFactory) -> Iterator[list[dict]]:
    """A service on SERVICE that echoes, refuses "no", and fails on "bug"; what it was asked."""
    asked: list[dict] = []

    def handle(request: dict, sender: str | None) -> dict:
        asked.append(request)
        if request["op"] == "no":
            raise JMSSecurityRuntimeException("not you", reason=2035)
        if request["op"] == "bug":
            raise KeyError("oops")
        return {"ok": True, "echo": request.get("value")}

    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=serve, args=(factory, SERVICE, handle, stop), kwargs={"ready": ready})
    thread.start()
    assert ready.wait(5)
    yield asked
    stop.set()
    thread.join(5)


def test_a_call_gets_its_answer_and_a_notice_none(factory: ConnectionFactory, service: list[dict]) -> None:
    with (
        factory.create_context() as ctx,
        ServiceClient(ctx, SERVICE, timeout_ms=5000, serves="the test") as client,
    ):
        assert client.call("echo", value=[1, "two"]) == {"ok": True, "echo": [1, "two"]}
        client.notify("echo", value="noticed")
        assert client.call("echo", value=3)["echo"] == 3
    assert [r.get("value") for r in service] == [[1, "two"], "noticed", 3]


def test_a_refusal_reaches_the_caller_as_its_error_and_a_bug_as_an_internal_error(
    factory: ConnectionFactory, service: list[dict]
) -> None:
    with (
        factory.create_context() as ctx,
        ServiceClient(ctx, SERVICE, timeout_ms=5000, serves="the test") as client,
    ):
        with pytest.raises(JMSSecurityRuntimeException) as e:
            client.call("no")
        assert e.value.reason == 2035 and "not you" in str(e.value)
        with pytest.raises(IllegalStateRuntimeException, match="internal error"):
            client.call("bug")
        assert client.call("echo", value=1)["ok"]  # the service goes on


def test_nothing_serving_is_service_unavailable_saying_what_serves_it(factory: ConnectionFactory) -> None:
    with (
        factory.create_context() as ctx,
        ServiceClient(ctx, SERVICE, timeout_ms=20, serves="the test's service") as client,
    ):
        with pytest.raises(ServiceUnavailable, match="the test's service"):
            client.call("echo")


@pytest.mark.parametrize("timeout_ms", [0, -1, True, 1.5])
def test_a_call_timeout_is_a_positive_int_of_ms(factory: ConnectionFactory, timeout_ms: object) -> None:
    with factory.create_context() as ctx, pytest.raises(InvalidArgumentRuntimeException):
        ServiceClient(ctx, SERVICE, timeout_ms=timeout_ms, serves="x")  # type: ignore[arg-type]
