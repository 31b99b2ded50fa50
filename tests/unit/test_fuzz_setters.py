"""Fuzz of every public setter and of the DLQ rules-table parser (issue 15 item 6): whatever a
user passes, the only exceptions are pyjms's (pyjms.errors.JMSRuntimeException and its
subclasses), never a TypeError, OverflowError, UnicodeError or anything from JPype; a value a
setter accepts reads back as set. No broker is needed: setters check at once (producers come
from a context on the fake broker)."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyjms
from pyjms.dlq import RulesTable
from tests.fakes.channel import FakeBroker
from tests.fakes.provider import fake_factory

QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: anything a caller might pass: JMS-looking values and everything else
ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(),
    st.text(alphabet=st.characters(categories=["Cs", "Lo", "So", "Cc"])),
    st.binary(),
    st.decimals(allow_nan=True),
    st.fractions(),
    st.complex_numbers(),
    st.timedeltas(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from(
        [
            object(),
            2**63,
            -(2**63) - 1,
            2**31,
            1e300,
            -1e300,
            float("inf"),
            float("nan"),
            3.5e38,
            Decimal("1"),
            Fraction(1, 2),
            2.0,
            1.0,
            "JMS_PYJMS_Expiration",
            "région",
            "\ud800",
            "😀",
            timedelta(days=10**8),
            b"",
            "",
            [1],
            {1: 2},
            ...,
        ]
    ),
)
NAMES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "p",
            "région",
            "JMS_PYJMS_X",
            "JMSXGroupID",
            "JMSXGroupSeq",
            "JMS_IBM_Format",
            "AND",
            "1a",
            "a-b",
            "😀",
            "\ud800",
        ]
    ),
    ANYTHING,
)

MESSAGE_PROPERTY_SETTERS = [
    "set_boolean_property",
    "set_byte_property",
    "set_short_property",
    "set_int_property",
    "set_long_property",
    "set_float_property",
    "set_double_property",
    "set_string_property",
    "set_object_property",
    "set_property",
]
PRODUCER_PROPERTY_SETTERS = [
    "set_property",
    "set_object_property",
    "set_boolean_property",
    "set_byte_property",
    "set_short_property",
    "set_int_property",
    "set_long_property",
    "set_float_property",
    "set_double_property",
    "set_string_property",
]
HEADER_SETTERS = [
    "set_jms_message_id",
    "set_jms_timestamp",
    "set_jms_correlation_id",
    "set_jms_reply_to",
    "set_jms_destination",
    "set_jms_delivery_mode",
    "set_jms_redelivered",
    "set_jms_type",
    "set_jms_expiration",
    "set_jms_delivery_time",
    "set_jms_priority",
]
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
MAP_SETTERS = [
    "set_object",
    "set_string",
    "set_int",
    "set_long",
    "set_double",
    "set_boolean",
    "set_bytes",
    "set_short",
    "set_byte",
    "set_float",
]


@pytest.fixture(scope="module")
def ctx():
    """A context on a fake broker (tests/fakes): producers come from it (nothing is sent)."""
    with fake_factory(FakeBroker()).create_context() as c:
        yield c


def only_pyjms_errors(call: Callable[[], Any]) -> bool:
    """Runs call; True if it returned, False if it raised a pyjms error; anything else fails."""
    try:
        call()
        return True
    except pyjms.JMSRuntimeException:
        return False


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@QUICK
@given(setter=st.sampled_from(MESSAGE_PROPERTY_SETTERS), name=NAMES, value=ANYTHING)
def test_message_property_setters_raise_only_pyjms_errors(setter, name, value):
    m = pyjms.TextMessage("x")
    if only_pyjms_errors(lambda: getattr(m, setter)(name, value)):
        assert isinstance(name, str) and not name.startswith("JMS_PYJMS_")
        got = m.get_object_property(name)
        if setter != "set_float_property":  # a float property holds the nearest Java float
            assert same(got, value) or (isinstance(value, int) and got == float(value))


@QUICK
@given(setter=st.sampled_from(PRODUCER_PROPERTY_SETTERS), name=NAMES, value=ANYTHING)
def test_producer_property_setters_raise_only_pyjms_errors(ctx, setter, name, value):
    p = ctx.create_producer()
    if only_pyjms_errors(lambda: getattr(p, setter)(name, value)):
        assert isinstance(name, str) and not name.startswith("JMS_PYJMS_") and p.property_exists(name)


@QUICK
@given(setter=st.sampled_from(HEADER_SETTERS), value=ANYTHING)
def test_message_header_setters_raise_only_pyjms_errors(setter, value):
    m = pyjms.TextMessage("x")
    if only_pyjms_errors(lambda: getattr(m, setter)(value)):
        getter = setter.replace("set_", "get_", 1)
        if setter not in ("set_jms_message_id", "set_jms_delivery_time"):  # getters that interpret
            assert same(getattr(m, getter)(), value) or value is None


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


@QUICK
@given(setter=st.sampled_from(MAP_SETTERS), name=NAMES, value=ANYTHING)
def test_map_message_setters_raise_only_pyjms_errors(setter, name, value):
    m = pyjms.MapMessage()
    only_pyjms_errors(lambda: getattr(m, setter)(name, value))
    only_pyjms_errors(lambda: pyjms.MapMessage({name: value}) if isinstance(name, str) else None)


@QUICK
@given(body=ANYTHING)
def test_message_bodies_raise_only_pyjms_errors(body):
    only_pyjms_errors(lambda: pyjms.TextMessage(body))
    only_pyjms_errors(lambda: pyjms.BytesMessage(body))


#: rules-table text: keywords, values, numbers of any length, quotes, continuations, junk
KEYWORDS = [
    "INPUTQ",
    "INPUTQM",
    "RETRYINT",
    "WAIT",
    "APPLIDAT",
    "APPLNAME",
    "APPLTYPE",
    "DESTQ",
    "DESTQM",
    "FEEDBACK",
    "FORMAT",
    "MSGTYPE",
    "PERSIST",
    "REASON",
    "REPLYQ",
    "REPLYQM",
    "USERID",
    "ACTION",
    "FWDQ",
    "FWDQM",
    "HEADER",
    "PUTAUT",
    "RETRY",
    "BOGUS",
]
VALUES = st.one_of(
    st.text(max_size=12),
    st.integers(-10, 10**12).map(str),
    st.integers(0, 5000).map(lambda n: "9" * n),
    st.sampled_from(
        [
            "MQRC_Q_FULL",
            "RETRY",
            "FWD",
            "DISCARD",
            "IGNORE",
            "&DESTQ",
            "&REPLYQM",
            "' '",
            "'a''b'",
            "*",
            "?*",
            "YES",
            "NO",
            "DEF",
            "CTX",
            "MQPER_PERSISTENT",
            "😀",
            "\x00",
        ]
    ),
)
ENTRY = st.tuples(
    st.sampled_from(KEYWORDS), VALUES, st.sampled_from(["(", "('"]), st.sampled_from([")", "')", ""])
)
LINE = st.lists(ENTRY, max_size=5).map(lambda es: " ".join(f"{k}{o}{v}{c}" for k, v, o, c in es))
TABLE = st.one_of(
    st.lists(
        st.one_of(
            LINE, st.text(max_size=40), st.sampled_from(["* comment", "+", "-", "", "ACTION(DISCARD) +"])
        ),
        max_size=6,
    ).map("\n".join),
    st.text(),
)


@QUICK
@given(text=TABLE)
def test_the_rules_table_parser_raises_only_pyjms_errors(text):
    try:
        table = RulesTable.parse(text)
    except pyjms.InvalidArgumentRuntimeException as e:
        assert len(str(e)) < 20_000  # one clear error, values cut short
        return
    assert len(table) >= 1
    assert len(RulesTable.parse(table.to_text())) == len(table)  # what parses prints back
