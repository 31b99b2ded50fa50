"""Options and schemas, checked where Spark plans the job (no Spark session needed)."""

from __future__ import annotations

import pytest

from tests.spark import needs_spark

needs_spark()

from pyspark.sql.types import IntegerType, MapType, StringType, StructField, StructType  # noqa: E402

import pyjms  # noqa: E402
from pyjms import MQRC  # noqa: E402
from pyjms.spark import READ_SCHEMA, JMSDataSource, JMSOptions, check_read_schema, check_write_schema  # noqa: E402

URL = "tcp://127.0.0.1:61616"


def test_camel_case_options_are_parsed_and_checked_by_the_producer_rules():
    o = JMSOptions.parse(
        {
            "URL": URL,
            "destination": "ORDERS",
            "deliveryDelay": "1500",
            "timeToLive": "60000",
            "priority": "7",
            "deliveryMode": "non_persistent",
            "batchSize": "500",
            "onInvalid": "DLQ",
            "deadLetterQueue": "queue://BAD",
            "messageSelector": " region = 'eu' ",
            "mode": "consume",
            "maxMessages": "10",
            "numPartitions": "3",
        }
    )
    assert (o.destination, o.delivery_delay, o.time_to_live, o.priority, o.delivery_mode) == (
        "queue://ORDERS",
        1500,
        60000,
        7,
        pyjms.NON_PERSISTENT,
    )
    assert (o.batch_size, o.on_invalid, o.dead_letter_queue, o.message_selector) == (
        500,
        "dlq",
        "queue://BAD",
        "region = 'eu'",
    )
    assert (o.mode, o.max_messages, o.num_partitions) == ("consume", 10, 3)
    assert "secret" not in repr(JMSOptions.parse({"url": URL, "password": "secret"}))


@pytest.mark.parametrize(
    "options, reason, values",
    [
        (
            {"deliveryDelay": "5000", "timeToLive": "1000"},
            MQRC.EXPIRY_ERROR,
            {"delivery_delay": 5000, "time_to_live": 1000},
        ),
        ({"timeToLive": "-1"}, MQRC.EXPIRY_ERROR, {"time_to_live": -1}),
        ({"priority": "12"}, MQRC.PRIORITY_ERROR, {"priority": 12}),
        ({"deliveryMode": "sometimes"}, MQRC.PERSISTENCE_ERROR, {"delivery_mode": "sometimes"}),
    ],
)
def test_bad_send_options_fail_with_the_rule_that_broke(options, reason, values):
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        JMSOptions.parse({"url": URL, **options})
    assert e.value.reason == reason and e.value.values == values


@pytest.mark.parametrize(
    "options, text",
    [
        ({}, "needs the option url"),
        ({"url": "vm://pyjms-1?create=false"}, "separate processes"),
        ({"url": URL, "onInvalid": "dlq"}, "deadLetterQueue"),
        ({"url": URL, "onInvalid": "ignore"}, "onInvalid must be one of fail, skip, dlq"),
        ({"url": URL, "mode": "peek"}, "mode must be one of browse, consume"),
        ({"url": URL, "numPartitions": "0"}, "at least 1"),
        ({"url": URL, "batchSize": "many"}, "must be an integer"),
        # issue 32 item 6: counts and timeouts are Java ints on the wire, never an OverflowError
        ({"url": URL, "receiveTimeout": str(2**63)}, "receiveTimeout must be at most 2147483647"),
        ({"url": URL, "batchSize": str(2**31)}, "batchSize must be at most 2147483647"),
    ],
)
def test_unusable_options_are_refused(monkeypatch, options, text):
    monkeypatch.delenv("PYJMS_URL", raising=False)
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match=text):
        JMSOptions.parse(options)


def test_every_field_has_its_option_name():
    from dataclasses import fields

    assert set(JMSOptions.NAMES) == {f.name for f in fields(JMSOptions)}


def test_write_schema_needs_a_body_and_known_columns_of_the_right_types():
    ok = StructType(
        [
            StructField("body", StringType()),
            StructField("priority", IntegerType()),
            StructField("properties", MapType(StringType(), StringType())),
        ]
    )
    assert set(check_write_schema(ok)) == {"body", "priority", "properties"}
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="needs a body"):
        check_write_schema(StructType([StructField("text", StringType())]))
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="'ttl' is not one"):
        check_write_schema(StructType([StructField("body", StringType()), StructField("ttl", IntegerType())]))
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="priority"):
        check_write_schema(
            StructType([StructField("body", StringType()), StructField("priority", StringType())])
        )


def test_read_schema_may_be_narrowed_but_not_changed():
    narrow = StructType([READ_SCHEMA["body"], READ_SCHEMA["priority"]])
    assert check_read_schema(narrow) is narrow
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="is int, not string"):
        check_read_schema(StructType([StructField("priority", StringType())]))


def test_overwrite_and_a_missing_destination_are_refused():
    schema = StructType([StructField("body", StringType())])
    with pytest.raises(pyjms.NotSupportedRuntimeException, match="append"):
        JMSDataSource({"url": URL, "destination": "Q"}).writer(schema, overwrite=True)
    with pytest.raises(pyjms.InvalidDestinationRuntimeException, match="option destination"):
        JMSDataSource({"url": URL}).writer(schema, overwrite=False)
    with pytest.raises(pyjms.InvalidDestinationRuntimeException, match="needs a queue"):
        JMSDataSource({"url": URL, "destination": "topic://T"}).reader(READ_SCHEMA)


def test_factory_properties_reach_the_connection_factory_with_their_case():
    from pyjms.spark.options import connection_factory

    o = JMSOptions.parse(
        {
            "url": URL,
            "factoryproperties": "messagePrioritySupported=false, sendTimeout=5000",
            "deliveryDelayMechanism": "scheduler",
        }
    )
    assert o.factory_properties == (("messagePrioritySupported", "false"), ("sendTimeout", "5000"))
    f = connection_factory(o)
    assert f.properties == {"messagePrioritySupported": "false", "sendTimeout": "5000"}
    assert f.delivery_delay == "scheduler" and connection_factory(o) is f  # one per worker process
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="name=value"):
        JMSOptions.parse({"url": URL, "factoryProperties": "oops"})
