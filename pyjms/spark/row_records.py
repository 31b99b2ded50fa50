"""The sink's row encoding: a DataFrame row as a routed record (JMSContext.send_routed).

A row's columns (body, destination, priority, delivery mode, TTL, delay, correlation id, type,
reply-to, properties, duplicate id) pass the same rules as JMSProducer's setters
(pyjms.rules.delivery), then become one record: the destination key, the send options and the
message (pyjms.api.bulk.RoutedEncoder). A row with a delivery delay becomes a DelayedRow instead, for the
task to send through a JMSProducer. A row that broke a rule can become a dead-letter record,
with IBM MQ's dead-letter header. Rows with only a body, the common case, are encoded column
at a time. The task's transaction (pyjms.spark.task_writer) sends what this module makes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType, StringType

from pyjms.api.bulk import RoutedEncoder
from pyjms.api.constants import DEFAULT_PRIORITY, PERSISTENT
from pyjms.api.message.properties import check_duplicate_id, check_property_name
from pyjms.api.property_types import KIND_BYTES, KIND_TEXT, T_STRING
from pyjms.bridge.contract import DLQ_DETAIL, DUPLICATE_ID
from pyjms.dlq.header import MQFMT_NONE, MQFMT_STRING, DeadLetterHeader, destination_name, reason_for
from pyjms.errors import InvalidDestinationRuntimeException, JMSRuntimeException
from pyjms.rules import delivery as rules
from pyjms.spark.options import JMSOptions, delivery_mode_value, destination_key

#: PutApplName in the dead-letter header of a row this sink dead-letters
PUT_APPL_NAME = "pyjms.spark"
#: beside the header (pyjms.dlq.header: JMS_PYJMS_DLH_Reason, _DestQ, ...): the error itself,
#: naming the row and the values that broke the rule (pyjms.bridge.contract.DLQ_DETAIL)

#: the columns a row may have besides its body, in the order RowEncoder.encode takes them
OPTIONAL_COLUMNS = (
    "duplicate_id",
    "destination",
    "priority",
    "delivery_mode",
    "time_to_live",
    "delivery_delay",
    "correlation_id",
    "type",
    "reply_to",
    "properties",
)


@dataclass(frozen=True)
class DelayedRow:
    """A row with a delivery delay, checked: the task sends it through a JMSProducer, so that
    it gets what the Python API does for a delayed message (target checks, the delay mechanism)."""

    key: str
    mode: int
    priority: int
    ttl: int
    delay: int
    body: Any
    correlation_id: str | None
    jms_type: str | None
    reply_key: str | None
    props: dict[str, tuple[int, Any]]


class RowEncoder:
    """One task's rows as routed records, each with its duplicate-detection id: the row's
    ``duplicate_id`` column, else ``<id_prefix><row>`` (None: no id)."""

    def __init__(self, options: JMSOptions, columns: dict[str, DataType], id_prefix: str | None) -> None:
        self._o = options
        self._id_prefix = id_prefix
        #: the message kind of every row: a string body makes TextMessages, binary BytesMessages
        self.kind = KIND_TEXT if isinstance(columns["body"], StringType) else KIND_BYTES
        self._routed = RoutedEncoder(text=self.kind == KIND_TEXT)

    def bodies(self, bodies: pa.Array, first_row: int) -> list[bytes]:
        """The records of rows with only a body and no delay: every send option comes from
        the options, which passed the rules when the job was planned, so no row can break one.
        Bodies stay UTF-8 bytes from Arrow to the JVM (a string column is cast to binary)."""
        o = self._o
        raw = (
            bodies.cast(pa.binary())
            if pa.types.is_string(bodies.type) or pa.types.is_large_string(bodies.type)
            else bodies
        )
        return self._routed.bodies(
            o.require_destination(),
            o.delivery_mode,
            o.priority,
            o.time_to_live,
            raw.to_pylist(),
            self._id_prefix,
            first_row,
        )

    def duplicate_id(self, row: int, given: str | None) -> str | None:
        if given is not None:
            return check_duplicate_id(given)
        return None if self._id_prefix is None else f"{self._id_prefix}{row}"

    def encode(
        self,
        row: int,
        body: Any,
        duplicate_id: str | None,
        dest: str | None,
        priority: int | None,
        mode: Any,
        ttl: int | None,
        delay: int | None,
        correlation_id: str | None,
        jms_type: str | None,
        reply_to: str | None,
        properties: list[tuple[str, str | None]] | None,
    ) -> bytes | DelayedRow:
        """A routed record for one row, after the same rules as JMSProducer's setters; a
        DelayedRow for a row with a delay."""
        o = self._o
        key = o.destination if dest is None else destination_key(dest, "destination")
        if key is None:
            raise InvalidDestinationRuntimeException(
                "the row has no destination and the option destination is not set",
                values={"destination": None},
            )
        priority = o.priority if priority is None else rules.check_priority(priority)
        mode = o.delivery_mode if mode is None else delivery_mode_value(mode)
        ttl = o.time_to_live if ttl is None else rules.check_time_to_live(ttl)
        delay = o.delivery_delay if delay is None else rules.check_delivery_delay(delay)
        rules.check_delay_within_ttl(delay, ttl)
        props = string_properties(properties)
        key_of_row = self.duplicate_id(row, duplicate_id)
        if key_of_row is not None:
            props[DUPLICATE_ID] = (T_STRING, key_of_row)
        reply_key = None if reply_to is None else destination_key(reply_to, "reply_to")
        if delay:
            return DelayedRow(
                key, mode, priority, ttl, delay, body, correlation_id, jms_type, reply_key, props
            )
        return self.route(key, mode, priority, ttl, body, correlation_id, jms_type, reply_key, props)

    def route(
        self,
        key: str,
        mode: int,
        priority: int,
        ttl: int,
        body: Any,
        correlation_id: str | None,
        jms_type: str | None,
        reply_key: str | None,
        props: dict[str, tuple[int, Any]],
    ) -> bytes:
        """The routed record of a message of this task's kind, without a delay."""
        return self._routed.entry(key, mode, priority, ttl, body, correlation_id, jms_type, reply_key, props)

    def dead_letter(
        self, row: int, partition: int, error: JMSRuntimeException, values: tuple[Any, ...]
    ) -> bytes:
        """The record that puts a row that broke a rule (``error``) on the dead-letter queue,
        with what can be kept of it: ``values`` are its body and OPTIONAL_COLUMNS, unchecked."""
        o = self._o
        body, duplicate_id, dest, *_, correlation_id, jms_type, reply_to, properties = values
        try:
            intended = o.destination if dest is None else destination_key(dest, "destination")
        except JMSRuntimeException:
            intended = dest
        try:
            reply_key = None if reply_to is None else destination_key(reply_to, "reply_to")
        except JMSRuntimeException:
            reply_key = None
        # IBM MQ's dead-letter header, as pyjms carries it, so that pyjms's DLQ handler (or
        # anyone reading DLH_Reason / DLH_DestQ) can deal with the row like any dead letter
        header = DeadLetterHeader.create(
            reason_for(error),
            destination_name(intended),
            put_appl_name=PUT_APPL_NAME,
            format=MQFMT_STRING if self.kind == KIND_TEXT else MQFMT_NONE,
        )
        props = {**string_properties(properties, strict=False), **header.typed_properties()}
        props[DLQ_DETAIL] = (T_STRING, f"row {row} of partition {partition}: {error}")
        try:
            key_of_row = self.duplicate_id(row, duplicate_id)
        except JMSRuntimeException:
            key_of_row = self.duplicate_id(row, None)
        if key_of_row is not None:
            props[DUPLICATE_ID] = (T_STRING, key_of_row)
        # no delay and no TTL: the dead-letter queue keeps the row until someone looks at it
        return self.route(
            o.dead_letter_queue or "",
            PERSISTENT,
            DEFAULT_PRIORITY,
            0,
            body,
            correlation_id,
            jms_type,
            reply_key,
            props,
        )


def string_properties(
    properties: list[tuple[str, str | None]] | None, strict: bool = True
) -> dict[str, tuple[int, Any]]:
    """A properties map<string,string> as JMS String properties (null values are left unset)."""
    out: dict[str, tuple[int, Any]] = {}
    for name, value in properties or ():
        if value is None:
            continue
        try:
            check_property_name(name)
        except JMSRuntimeException:
            if strict:
                raise
            continue  # dead-lettering: keep what can be kept
        out[name] = (T_STRING, value)
    return out
