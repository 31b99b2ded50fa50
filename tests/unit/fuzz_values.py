"""What the setter fuzz tests pass (tests/unit/test_fuzz_setters.py, and the producer's in
tests/integration/test_fuzz_producer_setters.py): anything a caller might, and names."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import pyjms

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


def only_pyjms_errors(call: Callable[[], Any]) -> bool:
    """Runs call; True if it returned, False if it raised a pyjms error; anything else fails."""
    try:
        call()
        return True
    except pyjms.JMSRuntimeException:
        return False


#: the property setters of a message and of a producer alike
PROPERTY_SETTERS = [
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
