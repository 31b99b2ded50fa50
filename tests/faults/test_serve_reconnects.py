"""A service whose session breaks serves again (issue 32): ``serve`` opens its session anew,
with backoff, instead of ending its thread silently. The service reaches the broker through a
TCP proxy that cuts every connection; its askers reach the broker directly."""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest

import pyjms
from pyjms.api.requests import ServiceClient, ServiceUnavailable, serve
from pyjms.bridge import jvm
from tests.faults.proxy import AnswerLosingProxy


def test_a_service_whose_connection_is_cut_serves_again(tcp_broker) -> None:
    port = int(re.search(r":(\d+)", tcp_broker.tcp_url).group(1))
    proxy = AnswerLosingProxy(port)
    queue = pyjms.Queue(f"PYJMS.TEST.ECHO.{uuid.uuid4().hex[:8]}")
    stop = threading.Event()
    ready = threading.Event()

    def run() -> None:
        with jvm.java_thread():
            serve(
                pyjms.ConnectionFactory(f"tcp://127.0.0.1:{proxy.port}"),
                queue,
                lambda request, sender: {"ok": True, "echo": request.get("n")},
                stop,
                ready=ready,
            )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
            with ServiceClient(ctx, queue, timeout_ms=3000, serves="this test's echo") as client:
                assert client.call("echo", n=1)["echo"] == 1
                for n in (2, 3):
                    proxy.cut()  # the service's connection fails under it
                    deadline = time.monotonic() + 20
                    while True:
                        try:
                            assert client.call("echo", n=n)["echo"] == n
                            break
                        except ServiceUnavailable:
                            assert time.monotonic() < deadline, "the service did not serve again"
                    assert thread.is_alive()
    finally:
        stop.set()
        thread.join(10)
        proxy.close()


def test_a_handler_that_fails_fails_its_request_only(tcp_broker) -> None:
    queue = pyjms.Queue(f"PYJMS.TEST.BUGGY.{uuid.uuid4().hex[:8]}")
    stop = threading.Event()
    ready = threading.Event()

    def handle(request: dict, sender: str | None) -> dict:
        return {"ok": True, "inverse": 1 / request["n"]}  # a bug: n = 0, or no n

    def run() -> None:
        with jvm.java_thread():
            serve(pyjms.ConnectionFactory(tcp_broker.tcp_url), queue, handle, stop, ready=ready)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
            with ServiceClient(ctx, queue, timeout_ms=5000, serves="this test's service") as client:
                for fields in ({"n": 0}, {}):
                    with pytest.raises(pyjms.IllegalStateRuntimeException, match="internal error"):
                        client.call("invert", **fields)
                assert client.call("invert", n=4)["inverse"] == 0.25
    finally:
        stop.set()
        thread.join(10)
