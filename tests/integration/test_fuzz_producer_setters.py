"""Fuzz of every public producer setter (issue 15 item 6), as tests/unit/test_fuzz_setters.py
does the message's: whatever a user passes, the only exceptions are pyjms's. A producer comes
from a context, so these start a JVM (nothing is sent)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyjms
from tests.unit.fuzz_values import ANYTHING, NAMES, PROPERTY_SETTERS, QUICK, only_pyjms_errors

PRODUCER_OPTION_SETTERS = [
    "set_delivery_mode",
    "set_priority",
    "set_time_to_live",
    "set_delivery_delay",
    "set_disable_message_id",
    "set_disable_message_timestamp",
    "set_jms_correlation_id",
    "set_jms_type",
    "set_jms_reply_to",
]


@pytest.fixture(scope="module")
def ctx():
    """A context on the embedded broker: producers come from it (nothing is sent)."""
    with pyjms.ConnectionFactory().create_context() as c:
        yield c


@QUICK
@given(setter=st.sampled_from(PROPERTY_SETTERS), name=NAMES, value=ANYTHING)
def test_producer_property_setters_raise_only_pyjms_errors(ctx, setter, name, value):
    p = ctx.create_producer()
    if only_pyjms_errors(lambda: getattr(p, setter)(name, value)):
        assert isinstance(name, str) and not name.startswith("JMS_PYJMS_") and p.property_exists(name)


@QUICK
@given(setter=st.sampled_from(PRODUCER_OPTION_SETTERS), value=ANYTHING)
def test_producer_option_setters_raise_only_pyjms_errors(ctx, setter, value):
    p = ctx.create_producer()
    if only_pyjms_errors(lambda: getattr(p, setter)(value)):
        if setter in ("set_delivery_mode", "set_priority"):
            assert type(value) is int
        if setter in ("set_time_to_live", "set_delivery_delay"):
            got = p.get_time_to_live() if setter == "set_time_to_live" else p.get_delivery_delay()
            assert 0 <= got < 2**63
