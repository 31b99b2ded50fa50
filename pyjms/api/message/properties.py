"""Message properties: their names, their typed values and the JMS conversion table.

A property name is a Java identifier that is neither a selector word nor a JMS header (and not
one of pyjms's own ``JMS_PYJMS_*``); a value carries its JMS type as a codec tag, is checked
for that type's range when set, and is read back through the Jakarta Messaging conversion
table. MapMessage entries follow the same value rules. The message classes, the producer, the
Spark sink and the DLQ handler all check here, so one rule has one place.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.errors import InvalidArgumentRuntimeException, MessageFormatRuntimeException
from pyjms.reasons import MQRC

#: JMS property carrying the delivery time where the transport drops JMSDeliveryTime
DELIVERY_TIME_PROPERTY = contract.DELIVERY_TIME
#: the send time of a message a broker scheduler delayed or a forward restamped
SEND_TIME_PROPERTY = contract.SEND_TIME
#: the original id of a message delayed through the staging queue
MESSAGE_ID_PROPERTY = contract.MESSAGE_ID
#: the exact expiration of a message a broker scheduler delayed
EXPIRATION_PROPERTY = contract.EXPIRATION
#: the duplicate-detection id (set_duplicate_id): Artemis's _AMQ_DUPL_ID
DUPLICATE_ID_PROPERTY = contract.DUPLICATE_ID
#: the longest duplicate id, in UTF-8 bytes (brokers keep every id they remember in memory)
MAX_DUPLICATE_ID_BYTES = 1024

_INT_RANGES = {
    C.T_BYTE: (-(2**7), 2**7 - 1),
    C.T_SHORT: (-(2**15), 2**15 - 1),
    C.T_INT: (-(2**31), 2**31 - 1),
    C.T_LONG: (-(2**63), 2**63 - 1),
}
_TYPE_NAMES = {
    C.T_BOOL: "boolean",
    C.T_BYTE: "byte",
    C.T_SHORT: "short",
    C.T_INT: "int",
    C.T_LONG: "long",
    C.T_FLOAT: "float",
    C.T_DOUBLE: "double",
    C.T_STRING: "String",
    C.T_BYTES: "byte[]",
    C.T_CHAR: "char",
}
# JMS conversion table: which stored types each typed getter accepts (strings are parsed)
_READABLE_AS = {
    C.T_BOOL: {C.T_BOOL, C.T_STRING},
    C.T_BYTE: {C.T_BYTE, C.T_STRING},
    C.T_SHORT: {C.T_BYTE, C.T_SHORT, C.T_STRING},
    C.T_INT: {C.T_BYTE, C.T_SHORT, C.T_INT, C.T_STRING},
    C.T_LONG: {C.T_BYTE, C.T_SHORT, C.T_INT, C.T_LONG, C.T_STRING},
    C.T_FLOAT: {C.T_FLOAT, C.T_STRING},
    C.T_DOUBLE: {C.T_FLOAT, C.T_DOUBLE, C.T_STRING},
    C.T_CHAR: {C.T_CHAR},
    C.T_BYTES: {C.T_BYTES},
}
_SURROGATE = re.compile("[\ud800-\udfff]")
#: the largest finite Java float (Float.MAX_VALUE)
_FLOAT_MAX = 3.4028234663852886e38
_RESERVED = {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE"}
# Java's Character.isJavaIdentifierStart/Part by Unicode category: letters, letter numbers,
# currency symbols and connector punctuation start one; digits, marks and format characters
# may follow (Java also ignores a few control characters inside identifiers)
_JAVA_START = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"}
_JAVA_PART = _JAVA_START | {"Nd", "Mn", "Mc", "Cf"}
_JAVA_IGNORABLE = {*range(0x00, 0x09), *range(0x0E, 0x1C), *range(0x7F, 0xA0)}
#: JMSX properties a sender may set, with the one JMS type each must have (JMS 2.0 3.5.9)
_JMSX_TYPES = {"JMSXGroupID": C.T_STRING, "JMSXGroupSeq": C.T_INT}


def is_java_identifier(name: str) -> bool:
    """Whether ``name`` is a Java identifier, the JMS rule for property names (`région` is)."""
    if not name or unicodedata.category(name[0]) not in _JAVA_START:
        return False
    return all(unicodedata.category(c) in _JAVA_PART or ord(c) in _JAVA_IGNORABLE for c in name[1:])


def check_property_name(name: Any) -> str:
    """JMS property names are Java identifiers, not selector words, not JMS headers, and not
    pyjms's own ``JMS_PYJMS_*`` (IBM MQ: MQRC_PROPERTY_NAME_ERROR, 2442)."""
    if not isinstance(name, str) or not is_java_identifier(name):
        why = "is not a valid Java identifier (a letter, _ or $, then letters, digits, _ or $)"
    elif name.upper() in _RESERVED:
        why = "is a reserved selector word"
    elif name.startswith(contract.RESERVED_PREFIX):
        why = f"is reserved: {contract.RESERVED_PREFIX}* properties are pyjms's own"
    elif name.startswith("JMS") and not name.startswith(("JMSX", "JMS_")):
        why = "is reserved: only JMSX* and JMS_<vendor>_* may start with JMS"
    else:
        return name
    raise InvalidArgumentRuntimeException(
        f"property name {name!r} {why}", reason=MQRC.PROPERTY_NAME_ERROR, values={"property_name": name}
    )


def check_own_property_name(name: Any) -> str:
    """A property name on the route pyjms's own components write by (typed pairs for
    Message.copy/encode, pyjms.dlq's puts): as check_property_name, but ``JMS_PYJMS_*`` may
    be written, as pyjms writes its dead-letter and staging headers."""
    if isinstance(name, str) and name.startswith(contract.RESERVED_PREFIX) and is_java_identifier(name):
        return name
    return check_property_name(name)


def checked_property(name: Any, tag: int, value: Any) -> tuple[int, Any]:
    """A property as a user sets it: the name checked, the value checked for its JMS type,
    and the JMSX properties JMS types (a float JMSXGroupID is refused, not made '5.0')."""
    check_property_name(name)
    want = _JMSX_TYPES.get(name)
    if want is not None and tag != want and not (want == C.T_INT and tag in (C.T_BYTE, C.T_SHORT)):
        raise MessageFormatRuntimeException(
            f"property {name!r} must be a JMS {_TYPE_NAMES[want]}, got {value!r}",
            values={name: value},
        )
    return tag, checked_value(tag, value, f"property {name!r}")


def tag_for(value: Any, *, allow_bytes: bool = False, what: str = "value") -> int:
    """The JMS type a Python value is stored as (int picks int or long by size)."""
    if isinstance(value, bool):
        return C.T_BOOL
    if isinstance(value, int):
        if _INT_RANGES[C.T_INT][0] <= value <= _INT_RANGES[C.T_INT][1]:
            return C.T_INT
        if _INT_RANGES[C.T_LONG][0] <= value <= _INT_RANGES[C.T_LONG][1]:
            return C.T_LONG
        raise InvalidArgumentRuntimeException(f"{what} {value} does not fit a JMS long (64 bits)")
    if isinstance(value, float):
        return C.T_DOUBLE
    if isinstance(value, str):
        return C.T_STRING
    if allow_bytes and isinstance(value, (bytes, bytearray, memoryview)):
        return C.T_BYTES
    allowed = "bool, int, float, str" + (", bytes" if allow_bytes else "")
    raise MessageFormatRuntimeException(
        f"{what} {value!r} has type {type(value).__name__}; JMS allows {allowed}"
    )


def checked_value(tag: int, value: Any, what: str) -> Any:
    """Validates a value for an explicit JMS type (set_byte_property(…, 300) is an error)."""
    if tag in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise MessageFormatRuntimeException(
                f"{what} must be an int for a JMS {_TYPE_NAMES[tag]}, got {value!r}"
            )
        lo, hi = _INT_RANGES[tag]
        if not lo <= value <= hi:
            raise InvalidArgumentRuntimeException(
                f"{what} {value} is outside the JMS {_TYPE_NAMES[tag]} range {lo}..{hi}"
            )
        return value
    if tag in (C.T_FLOAT, C.T_DOUBLE):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MessageFormatRuntimeException(f"{what} must be a float, got {value!r}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if math.isinf(number) and not (isinstance(value, float) and math.isinf(value)):
            raise InvalidArgumentRuntimeException(
                f"{what} {value} does not fit a JMS {_TYPE_NAMES[tag]}", values={"value": value}
            )
        if tag == C.T_FLOAT and math.isfinite(number) and abs(number) > _FLOAT_MAX:
            raise InvalidArgumentRuntimeException(
                f"{what} {value!r} is outside the JMS float range (±{_FLOAT_MAX:.8g})",
                values={"value": value},
            )
        return number
    if tag == C.T_BOOL:
        if not isinstance(value, bool):
            raise MessageFormatRuntimeException(f"{what} must be a bool, got {value!r}")
        return value
    if tag == C.T_STRING:
        if not isinstance(value, str):
            raise MessageFormatRuntimeException(f"{what} must be a str, got {value!r}")
        return check_text(value)
    if tag == C.T_BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise MessageFormatRuntimeException(f"{what} must be bytes, got {value!r}")
        return bytes(value)
    if tag == C.T_CHAR:
        if not isinstance(value, str) or len(value) != 1 or ord(value) > 0xFFFF:
            raise MessageFormatRuntimeException(f"{what} must be one UTF-16 char, got {value!r}")
        return value
    return value


def check_duplicate_id(key: Any) -> str:
    """A duplicate-detection id: a non-empty str of at most MAX_DUPLICATE_ID_BYTES in UTF-8."""
    if not isinstance(key, str):
        raise MessageFormatRuntimeException(
            f"a duplicate id must be a str, got {key!r}", values={"duplicate_id": key}
        )
    size = len(check_text(key).encode("utf-8"))
    if not 0 < size <= MAX_DUPLICATE_ID_BYTES:
        raise InvalidArgumentRuntimeException(
            f"duplicate id {key[:40]!r} is {size} bytes in UTF-8; it must be 1..{MAX_DUPLICATE_ID_BYTES}",
            values={"duplicate_id": key},
        )
    return key


def check_text(value: str) -> str:
    """A str that is Unicode text (no lone surrogate), as UTF-8 carries it: refused at once
    rather than replaced on the wire."""
    if not value.isascii():
        found = _SURROGATE.search(value)
        if found is not None:
            raise C.lone_surrogate(value, found.start())
    return value


def convert(entry: tuple[int, Any] | None, want: int, what: str) -> Any:
    """Reads a stored (tag, value) as JMS type ``want``, per the JMS conversion table."""
    if entry is None or entry[1] is None:  # absent, or a map entry a Java client set to null
        if want == C.T_BOOL:
            return False  # Boolean.valueOf(null)
        if want == C.T_STRING:
            return None
        raise MessageFormatRuntimeException(f"{what} is not set, so it has no {_TYPE_NAMES[want]} value")
    tag, value = entry
    if want == C.T_STRING:
        if tag == C.T_BOOL:
            return "true" if value else "false"
        if tag == C.T_BYTES:
            raise MessageFormatRuntimeException(f"{what} is a byte[] and cannot be read as a String")
        return value if tag == C.T_STRING else str(value)
    if tag not in _READABLE_AS[want]:
        raise MessageFormatRuntimeException(
            f"{what} holds a JMS {_TYPE_NAMES[tag]} ({value!r}), which cannot be read as a {_TYPE_NAMES[want]}"
        )
    if tag != C.T_STRING:
        return value
    try:  # JMS parses strings for the typed getters
        if want == C.T_BOOL:
            return value.lower() == "true"
        if want in _INT_RANGES:
            return checked_value(want, int(value), what)
        return float(value)
    except (ValueError, InvalidArgumentRuntimeException):
        raise MessageFormatRuntimeException(
            f"{what} holds the String {value!r}, which is not a valid {_TYPE_NAMES[want]}"
        ) from None
