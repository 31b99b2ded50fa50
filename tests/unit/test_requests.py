"""The one request/reply convention of pyjms's services: a refusal keeps its class and reason."""

from __future__ import annotations

import pytest

from pyjms.api.requests import answer_for_error, error_from_answer
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
