"""What a pyjms service takes as a request (issue 32): the limits, field by field checks of the
mark service, a handle that is its owner's, and the rate-limited log. No broker needed."""

from __future__ import annotations

import json
import logging

import pytest

from pyjms.api.destination import Queue
from pyjms.api.message import BytesMessage, MapMessage, TextMessage
from pyjms.api.quietlog import QuietLog
from pyjms.api.requests import MAX_REQUEST_CHARS, ServiceClient, parse_request
from pyjms.browse.service import MarkService
from pyjms.errors import InvalidArgumentRuntimeException, JMSSecurityRuntimeException

Q = Queue("PYJMS.TEST")


@pytest.mark.parametrize(
    "message, rule",
    [
        (TextMessage("[" * 60_000), "deeper than 8"),  # deeper than the parser's recursion
        (TextMessage('{"op": "x", "a": ' + "[" * 50 + "]" * 50 + "}"), "deeper than 8"),
        (TextMessage("[" * 100_000), "the most a request may be is 65,536"),
        (
            TextMessage(json.dumps({"op": "x", "h": "x" * MAX_REQUEST_CHARS})),
            "the most a request may be is 65,536",
        ),
        (
            TextMessage(json.dumps({"op": "x", "ids": [0] * 25_000}, separators=(",", ":"))),
            "more than 20,000 values",
        ),
        (TextMessage("NaN"), "not JSON"),
        (TextMessage('{"op": "claim", "limit": ' + "9" * 5000 + "}"), "not JSON"),
        (TextMessage("[]"), "must be a JSON object"),
        (TextMessage('{"op": 5}'), 'needs an "op" text'),
        (TextMessage(""), "not JSON"),
        (BytesMessage(b"\x00\x01"), "not a BytesMessage"),
        (MapMessage({"op": "ping"}), "not a MapMessage"),
    ],
)
def test_a_request_out_of_bounds_is_refused_with_the_rule(message, rule: str) -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match=rule) as e:
        parse_request(message, Q)
    assert e.value.reason in (2110, 2030)


@pytest.mark.parametrize("timeout", [-1, 0, 1.5, "5000", True, None, 2**63])
def test_a_service_client_refuses_a_timeout_that_is_not_an_int_of_ms(timeout: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match="timeout_ms"):
        ServiceClient(None, Q, timeout_ms=timeout, serves="nobody")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "request_",
    [
        {"op": "claim", "handle": 5, "queue": "Q", "ids": []},
        {"op": "claim", "handle": "h", "queue": "Q", "ids": "ID:1"},
        {"op": "claim", "handle": "h", "queue": "Q", "ids": [1, 2]},
        {"op": "claim", "handle": "h", "queue": "Q", "ids": ["x" * 600]},
        {"op": "claim", "handle": "h", "queue": "Q", "ids": ["a"] * 5000},
        {"op": "claim", "handle": "h", "queue": "Q", "ids": [], "limit": -1},
        {"op": "claim", "handle": "h", "queue": "Q", "ids": [], "limit": 1.5},
        {"op": "claim", "handle": "h", "queue": None, "ids": []},
        {"op": "renew", "handles": {"h": 1}},
        {"op": "restore", "handle": "h", "queue": "Q", "ids": ["a"], "ages_ms": [-5]},
        {"op": "restore", "handle": "h", "queue": "Q", "ids": ["a"], "ages_ms": []},
        {"op": "config", "interval_ms": float("nan")},
        {"op": "open"},
        {"op": ["claim"]},
    ],
)
def test_the_mark_service_checks_every_field(request_: dict) -> None:
    service = MarkService(factory=None)  # type: ignore[arg-type]
    service.handle({"op": "open", "handle": "h"})
    with pytest.raises(InvalidArgumentRuntimeException):
        service.handle(request_)


def test_a_handle_is_its_owners_and_the_interval_an_administrators() -> None:
    service = MarkService(factory=None, is_admin=lambda user: user == "root")  # type: ignore[arg-type]
    service.handle({"op": "open", "handle": "h"}, "alice")
    assert service.handle({"op": "claim", "handle": "h", "queue": "Q", "ids": ["m"]}, "alice")["granted"] == [
        "m"
    ]
    for request in (
        {"op": "claim", "handle": "h", "queue": "Q", "ids": ["n"]},
        {"op": "unmark", "handle": "h", "queue": "Q", "ids": ["m"]},
        {"op": "renew", "handles": ["h"]},
        {"op": "close", "handle": "h"},
        {"op": "open", "handle": "h"},
        {"op": "config", "interval_ms": 10},
    ):
        with pytest.raises(JMSSecurityRuntimeException) as e:
            service.handle(request, "bob")
        assert e.value.reason == 2035
    assert service.handle({"op": "config", "interval_ms": 10}, "root")["interval_ms"] == 10
    assert service.handle({"op": "close", "handle": "h"}, "alice")["released"] == 1


def test_the_quiet_log_logs_each_kind_once_a_window_and_counts_the_rest(caplog) -> None:
    now = [0.0]
    quiet = QuietLog(logging.getLogger("pyjms.test"), window_s=60, most=3, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "pyjms.test"):
        for i in range(1000):
            quiet.warn("same", "bad request %d", i)
        for i in range(1000):
            quiet.warn(f"key{i}", "other %d", i)
        now[0] = 61.0
        quiet.warn("same", "bad request again")
    lines = [r.getMessage() for r in caplog.records]
    # each line says how many were held back before it
    assert lines == [
        "bad request 0",
        "other 0 (999 similar line(s) held back)",
        "other 1",
        "bad request again (998 similar line(s) held back)",
    ]
