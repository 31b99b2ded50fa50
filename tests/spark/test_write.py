"""Batch writes: columns, per-row rules under each onInvalid, one transaction per task."""

from __future__ import annotations

import time

import pytest

from tests.spark import needs_spark

needs_spark()

import pyjms  # noqa: E402
from pyjms import MQRC  # noqa: E402
from pyjms.dlq import header as dlh  # noqa: E402
from pyjms.spark import DLQ_DETAIL  # noqa: E402
from tests.conftest import drain  # noqa: E402

SCHEMA = (
    "body string, destination string, priority int, delivery_delay long, time_to_live long, "
    "delivery_mode string, correlation_id string, type string, reply_to string, properties map<string,string>"
)


def _write(df, url: str, fmt: str = "jms", **options) -> None:
    w = df.write.format(fmt).mode("append").option("url", url)
    for k, v in options.items():
        w = w.option(k, str(v))
    w.save()


def _receive_all(ctx, queue: str, timeout_ms: int = 500) -> list:
    with ctx.create_consumer(ctx.create_queue(queue)) as c:
        return drain(c, timeout_ms)


def test_columns_become_headers_properties_and_routes(spark, jms_url, jms_ctx, qname):
    other = qname + ".OTHER"
    rows = [
        ("a", None, 9, None, 60000, "NON_PERSISTENT", "c-1", "order", "queue://REPLIES", {"region": "eu"}),
        ("b", other, None, None, None, None, None, None, None, None),
        ("c", f"queue://{other}", 1, 0, 0, "2", "c-3", None, "R2", {"n": "3", "gone": None}),
    ]
    _write(spark.createDataFrame(rows, SCHEMA), jms_url, destination=qname, priority=6, timeToLive=120000)

    (a,) = _receive_all(jms_ctx, qname)
    assert a.get_text() == "a" and a.get_jms_priority() == 9
    assert a.get_jms_delivery_mode() == pyjms.NON_PERSISTENT
    assert a.get_jms_correlation_id() == "c-1" and a.get_jms_type() == "order"
    assert a.get_jms_reply_to() == pyjms.Queue("REPLIES") and a.get_string_property("region") == "eu"
    assert 59_000 <= a.get_jms_expiration() - a.get_jms_timestamp() <= 60_000  # the column beat the option
    b, c = sorted(_receive_all(jms_ctx, other), key=lambda m: m.get_text())
    assert b.get_jms_priority() == 6 and b.get_jms_delivery_mode() == pyjms.PERSISTENT  # the options
    assert 119_000 <= b.get_jms_expiration() - b.get_jms_timestamp() <= 120_000
    assert c.get_jms_expiration() == 0 and c.get_jms_priority() == 1  # time_to_live 0 = unlimited
    # every row carries its duplicate id (pyjms.spark.sink) beside its own properties
    assert c.get_jms_reply_to() == pyjms.Queue("R2") and c.get_duplicate_id().startswith("spark:")
    assert {k: v for k, v in c.properties.items() if k != "_AMQ_DUPL_ID"} == {"n": "3"}


def test_binary_bodies_become_bytes_messages(spark, jms_url, jms_ctx, qname):
    df = spark.createDataFrame([(bytes([i, 0, 255]),) for i in range(5)], "body binary")
    _write(df, jms_url, destination=qname, deliveryMode="NON_PERSISTENT")
    got = _receive_all(jms_ctx, qname)
    assert sorted(m.get_body(bytes) for m in got) == [bytes([i, 0, 255]) for i in range(5)]
    assert all(isinstance(m, pyjms.BytesMessage) for m in got)


def test_options_apply_to_rows_with_only_a_body(spark, jms_url, jms_ctx, qname):
    df = spark.createDataFrame([("x",), (None,), ("z",)], "body string")
    _write(df, jms_url, destination=qname, deliveryDelay=1000, timeToLive=60000, priority=2)
    got = []
    with jms_ctx.create_consumer(jms_ctx.create_queue(qname)) as consumer:
        # held for the delay: none comes before its delivery time (the write's job may end after
        # it, so whether one comes at once says nothing)
        while (m := consumer.receive(3000)) is not None:
            assert time.time() * 1000 >= m.get_jms_delivery_time()
            got.append(m)
    assert sorted(str(m.get_text()) for m in got) == [
        "None",
        "x",
        "z",
    ]  # a null body is a TextMessage without text
    assert all(m.get_jms_priority() == 2 for m in got)
    assert all(m.get_jms_expiration() - m.get_jms_timestamp() == 60000 for m in got)
    # the delay applied: Artemis's client reads the clock once for JMSTimestamp and again for
    # JMSDeliveryTime, so the two differ by the delay plus whatever ran between the readings
    # (over 50 ms once, in a full suite on a 2-core machine)
    assert all(950 <= m.get_jms_delivery_time() - m.get_jms_timestamp() <= 1500 for m in got)


def test_per_row_delivery_delay(spark, jms_url, jms_ctx, qname):
    df = spark.createDataFrame([("now", 0), ("later", 2000)], "body string, delivery_delay long").coalesce(1)
    sent = int(time.time() * 1000)
    _write(df, jms_url, destination=qname)
    with jms_ctx.create_consumer(jms_ctx.create_queue(qname)) as consumer:
        first = consumer.receive(3000)
        assert first.get_text() == "now"
        later = consumer.receive(8000)
        arrived = int(time.time() * 1000)
    assert later.get_text() == "later" and arrived - sent >= 2000 - 50
    # the delay plus what ran between the client's two clock readings (test above)
    assert 1950 <= later.get_jms_delivery_time() - later.get_jms_timestamp() <= 2500


# three rows break the producer's rules: TTL below the delay (2013), a priority outside 0..9,
# a delayed grouped message (2046)
INVALID = [
    ("ok-1", None, None, None, {}),
    ("ttl-below-delay", 5000, 1000, None, {}),
    ("ok-2", 1000, 60000, None, {}),
    ("bad-priority", None, None, 12, {}),
    ("delayed-group", 1000, None, None, {"JMSXGroupID": "g1"}),
    ("ok-3", None, None, 3, {"k": "v"}),
]
INVALID_SCHEMA = (
    "body string, delivery_delay long, time_to_live long, priority int, properties map<string,string>"
)


def test_on_invalid_fail_names_the_row_and_sends_nothing(spark, jms_url, jms_ctx, qname):
    df = spark.createDataFrame(INVALID, INVALID_SCHEMA).coalesce(1)
    with pytest.raises(Exception) as e:
        _write(df, jms_url, destination=qname)  # onInvalid=fail is the default
    text = str(e.value)
    assert (
        "JMSRuntimeException: row 1 of partition 0: delivery delay 5000 ms exceeds time-to-live 1000 ms"
        in text
    )
    assert "MQRC_EXPIRY_ERROR (2013)" in text
    time.sleep(1.2)  # a delayed row, had it been committed, would be due by now
    assert _receive_all(jms_ctx, qname) == []  # ok-1 went out before row 1, and was rolled back


def test_on_invalid_skip_sends_the_valid_rows(spark, jms_url, jms_ctx, qname):
    _write(spark.createDataFrame(INVALID, INVALID_SCHEMA), jms_url, destination=qname, onInvalid="skip")
    time.sleep(1.2)  # ok-2 is delayed by 1 s
    assert sorted(m.get_text() for m in _receive_all(jms_ctx, qname, 1500)) == ["ok-1", "ok-2", "ok-3"]


def test_on_invalid_dlq_dead_letters_with_the_reason(spark, jms_url, jms_ctx, qname):
    dlq = qname + ".DLQ"
    _write(
        spark.createDataFrame(INVALID, INVALID_SCHEMA),
        jms_url,
        destination=qname,
        onInvalid="dlq",
        deadLetterQueue=dlq,
    )
    dead = {m.get_text(): m for m in _receive_all(jms_ctx, dlq)}
    assert set(dead) == {"ttl-below-delay", "bad-priority", "delayed-group"}
    # IBM MQ's dead-letter header, as pyjms.dlq carries it
    headers = {text: dlh.DeadLetterHeader.from_message(m) for text, m in dead.items()}
    assert headers["ttl-below-delay"].reason == MQRC.EXPIRY_ERROR
    assert headers["delayed-group"].reason == MQRC.OPTIONS_ERROR
    assert dead["delayed-group"].get_string_property("JMSXGroupID") == "g1"
    assert headers["bad-priority"].reason == MQRC.PRIORITY_ERROR
    assert "priority 12 is outside" in dead["bad-priority"].get_string_property(DLQ_DETAIL)
    assert all(
        h.dest_q == qname and h.put_appl_name == "pyjms.spark" and h.format == "MQSTR"
        for h in headers.values()
    )
    assert all(m.get_jms_expiration() == 0 for m in dead.values())
    time.sleep(1.2)
    assert sorted(m.get_text() for m in _receive_all(jms_ctx, qname, 1500)) == ["ok-1", "ok-2", "ok-3"]


def test_a_task_retried_after_failing_leaves_exactly_the_rows_written(spark, jms_url, jms_ctx, qname):
    """local[2,3]: the first attempt of each task dies after sending rows in its transaction
    (one raises, one kills its Python worker and JVM); the retries commit. No duplicates."""
    df = spark.range(0, 400, numPartitions=2).selectExpr("concat('row-', id) AS body")
    _write(df, jms_url, fmt="jms_flaky", destination=qname, batchSize=25)
    bodies = [m.get_text() for m in _receive_all(jms_ctx, qname)]
    assert len(bodies) == 400 and set(bodies) == {f"row-{i}" for i in range(400)}


def test_a_retried_task_whose_first_attempt_committed_leaves_no_duplicate(spark, jms_url, jms_ctx, qname):
    """Partition 0's first attempt commits, then its worker dies before Spark hears of it, so
    Spark runs it again: the retry sends the same rows with the same duplicate ids. Artemis
    refuses them (the task then knows they were committed); on ActiveMQ Classic both copies are
    on the queue, and pyjms's readers drop the resent ones: the Spark reader and a consumer."""
    df = spark.range(0, 200, numPartitions=2).selectExpr("concat('row-', id) AS body")
    _write(df, jms_url, fmt="jms_commit_then_die", destination=qname, batchSize=50)
    expected = sorted(f"row-{i}" for i in range(200))
    read = spark.read.format("jms").option("url", jms_url).option("destination", qname)
    browsed = read.option("numPartitions", "2").load().select("text").collect()
    assert sorted(r.text for r in browsed) == expected
    got = _receive_all(jms_ctx, qname)
    assert sorted(m.get_text() for m in got) == expected
    ids = {m.get_duplicate_id() for m in got}
    assert len(ids) == 200 and all(i.startswith("spark:") for i in ids)
