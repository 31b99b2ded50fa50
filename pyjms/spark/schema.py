"""The columns of the ``jms`` data source: what a read returns, what a write takes.

Reading turns received messages into Arrow record batches through pyjms's own Message API, so
the columns mean exactly what the getters mean (exact expiration and delivery time across a
broker scheduler, IBM MQ's remaining expiry in tenths of a second).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pyjms.api.bulk import received_body
from pyjms.api.expiry import is_expired, now_ms, remaining_expiry
from pyjms.api.message import Message
from pyjms.api.message.properties import DELIVERY_TIME_PROPERTY, EXPIRATION_PROPERTY, SEND_TIME_PROPERTY
from pyjms.errors import InvalidArgumentRuntimeException

_STRING_MAP = MapType(StringType(), StringType(), valueContainsNull=True)

#: a read's columns, in order
READ_SCHEMA = StructType(
    [
        StructField("message_id", StringType()),
        StructField("destination", StringType()),
        StructField("correlation_id", StringType()),
        StructField("type", StringType()),
        StructField("reply_to", StringType()),
        StructField("priority", IntegerType()),
        StructField("delivery_mode", IntegerType()),
        StructField("timestamp", TimestampType()),
        StructField("delivery_time", TimestampType()),
        StructField("expiration", TimestampType()),
        StructField("remaining_expiry", LongType()),
        StructField("redelivered", BooleanType()),
        StructField("delivery_count", IntegerType()),
        StructField("properties", _STRING_MAP),
        StructField("body", BinaryType()),
        StructField("text", StringType()),
    ]
)

_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
#: a write's columns and the Spark types each may have; only body is required
WRITE_COLUMNS: dict[str, tuple[type[DataType], ...]] = {
    "body": (StringType, BinaryType),
    "destination": (StringType,),
    "priority": _INTEGRAL,
    "delivery_delay": _INTEGRAL,
    "time_to_live": _INTEGRAL,
    "delivery_mode": (*_INTEGRAL, StringType),
    "correlation_id": (StringType,),
    "type": (StringType,),
    "reply_to": (StringType,),
    "properties": (MapType,),
    "duplicate_id": (StringType,),
}

# carried by pyjms across a broker scheduler; the timestamp/delivery_time/expiration columns show them
_TRANSPORT_PROPERTIES = {SEND_TIME_PROPERTY, DELIVERY_TIME_PROPERTY, EXPIRATION_PROPERTY}


def check_read_schema(schema: StructType | None) -> StructType:
    """The full read schema, or a user-given subset of its columns (same names and types)."""
    if schema is None or not schema.fields:
        return READ_SCHEMA
    by_name = {f.name: f for f in READ_SCHEMA.fields}
    for f in schema.fields:
        known = by_name.get(f.name)
        if known is None:
            raise InvalidArgumentRuntimeException(
                f"column {f.name!r} is not one the jms data source reads; it reads {', '.join(by_name)}",
                values={"column": f.name},
            )
        if known.dataType != f.dataType:
            raise InvalidArgumentRuntimeException(
                f"column {f.name!r} is {known.dataType.simpleString()}, not {f.dataType.simpleString()}",
                values={"column": f.name},
            )
    return schema


def check_write_schema(schema: StructType) -> dict[str, DataType]:
    """The columns a write uses, by name; an unknown column is an error, not silently dropped."""
    columns = {f.name: f.dataType for f in schema.fields}
    if "body" not in columns:
        raise InvalidArgumentRuntimeException(
            "writing to jms needs a body column (string or binary)", values={"columns": list(columns)}
        )
    for name, dtype in columns.items():
        allowed = WRITE_COLUMNS.get(name)
        if allowed is None:
            raise InvalidArgumentRuntimeException(
                f"column {name!r} is not one the jms data source writes; select from {', '.join(WRITE_COLUMNS)}",
                values={"column": name},
            )
        ok = isinstance(dtype, allowed)
        if ok and isinstance(dtype, MapType):
            ok = isinstance(dtype.keyType, StringType) and isinstance(dtype.valueType, StringType)
        if not ok:
            raise InvalidArgumentRuntimeException(
                f"column {name!r} has type {dtype.simpleString()}; it must be "
                f"{' or '.join(t.typeName() for t in allowed) if name != 'properties' else 'map<string,string>'}",
                values={"column": name, "type": dtype.simpleString()},
            )
    return columns


# ---------------------------------------------------------------------------- messages to Arrow

_NAMES = [f.name for f in READ_SCHEMA.fields]


def _micros(ms: int) -> int | None:
    return ms * 1000 if ms > 0 else None


def _property_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return None  # JMS cannot read a byte[] property as a String either
    return None if value is None else str(value)


class ArrowRows:
    """Turns received messages into record batches of a (possibly pruned) read schema.

    A message is decoded once (headers and properties in one pass); the send time, delivery
    time and expiration come from pyjms's Message getters, which know where pyjms carries them
    across a broker scheduler, and the remaining expiry from pyjms.api.expiry.
    """

    def __init__(self, schema: StructType) -> None:
        self.schema = schema
        # the very Arrow schema PySpark checks a reader's batches against
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")
        self._wanted = [_NAMES.index(f.name) for f in schema.fields]

    def batch(self, messages: Iterable[Message]) -> pa.RecordBatch | None:
        """The unexpired messages as one record batch, or None if none is left.

        Expired messages never appear: a provider may hand one over in the instant it
        expires, and IBM MQ discards a message on get once its expiry has passed.
        """
        now = now_ms()
        rows = []
        for m in messages:
            h = m.wire_headers()  # decodes headers and properties together
            expiration = m.get_jms_expiration()
            if is_expired(expiration, now):
                continue
            props = m.typed_properties()
            body, text = received_body(m)
            count = h["delivery_count"]
            rows.append(
                (
                    h["message_id"],
                    h["destination"],
                    h["correlation_id"],
                    h["type"],
                    h["reply_to"],
                    h["priority"],
                    h["delivery_mode"],
                    _micros(m.get_jms_timestamp()),
                    _micros(m.get_jms_delivery_time()),
                    _micros(expiration),
                    remaining_expiry(expiration, now),
                    bool(h["redelivered"]),
                    count if count else 1,
                    [(k, _property_text(v)) for k, (_, v) in props.items() if k not in _TRANSPORT_PROPERTIES],
                    body,
                    text,
                )
            )
        if not rows:
            return None
        columns = list(zip(*rows, strict=True))
        arrays = [
            pa.array(columns[i], type=f.type) for i, f in zip(self._wanted, self.arrow_schema, strict=True)
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)
