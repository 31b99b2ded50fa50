"""Batch reads through Arrow columns built in the JVM (pyjms.spark.arrow_columns): the same rows
as the Message path (ArrowRows), the same browse partition owners, and the batches only Python
renders exactly (float properties) still read once each."""

from __future__ import annotations

import re

import pytest
from pyspark.sql.types import StructType

from tests.spark import needs_spark

needs_spark()

import pyjms  # noqa: E402
from pyjms.api.duplicates import duplicate_id_of  # noqa: E402
from pyjms.api.expiry import now_ms, remaining_expiry  # noqa: E402
from pyjms.spark.arrow_columns import ArrowColumnReader  # noqa: E402
from pyjms.spark.batch_read import owner_of  # noqa: E402
from pyjms.spark.schema import READ_SCHEMA, ArrowRows  # noqa: E402


def _varied(ctx, queue: str) -> None:
    """Messages of every body kind, with properties of every type the columns render."""
    q = ctx.create_queue(queue)
    p = ctx.create_producer()
    m = ctx.create_text_message("héllo \U0001f600")
    m.set_string_property("region", "eu")
    m.set_int_property("n", 7)
    m.set_boolean_property("urgent", True)
    m.set_boolean_property("late", False)
    m.set_long_property("big", -(2**40))
    m.set_short_property("s", -3)
    m.set_byte_property("b", 5)
    m.set_string_property("empty", "")
    (
        p.set_priority(8)
        .set_time_to_live(600_000)
        .set_jms_correlation_id("c-9")
        .set_jms_type("greeting")
        .set_jms_reply_to(pyjms.Queue("REPLIES"))
        .send(q, m)
    )
    plain = ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT)
    plain.send(q, b"\x00\x01")
    plain.send(q, b"")
    plain.send(q, "")
    plain.send(q, ctx.create_text_message(None))
    mm = ctx.create_map_message()
    mm.set_int("a", 1)
    plain.send(q, mm)
    for i in range(40):
        d = ctx.create_text_message(f"d{i}")
        d.set_duplicate_id(f"key-{i}")
        plain.send(q, d)


def test_columns_hold_what_the_message_path_shows_and_partition_alike(jms_ctx, qname):
    _varied(jms_ctx, qname)
    rows = ArrowRows(READ_SCHEMA)
    q = jms_ctx.create_queue(qname)
    with jms_ctx.create_browser(q) as b:
        messages = list(b)
    expected = rows.batch(messages)
    columns = ArrowColumnReader(rows)
    with jms_ctx.create_browser(q) as b:
        before = now_ms()
        got = columns.browse(b, 500, 0, 1)
        after = now_ms()
    assert got.messages is None and got.received == len(messages) == 46
    got.batch.validate(full=True)
    for name in expected.schema.names:
        want, have = expected.column(name).to_pylist(), got.batch.column(name).to_pylist()
        if name == "remaining_expiry":  # counted down at the moment the JVM built the batch
            expirations = [
                0 if e is None else int(e.timestamp() * 1000)
                for e in got.batch.column("expiration").to_pylist()
            ]
            assert all(
                remaining_expiry(e, after) <= h <= remaining_expiry(e, before)
                for e, h in zip(expirations, have, strict=True)
            ), (expirations, have)
        else:
            assert want == have, name
    assert got.duplicate_ids == [duplicate_id_of(m) for m in messages]
    # a pruned schema takes the same columns
    pruned = ArrowColumnReader(ArrowRows(StructType([READ_SCHEMA["text"], READ_SCHEMA["properties"]])))
    with jms_ctx.create_browser(q) as b:
        narrow = pruned.browse(b, 500, 0, 1).batch
    assert narrow.schema.names == ["text", "properties"]
    assert narrow.column("text").to_pylist() == expected.column("text").to_pylist()
    # the JVM keeps for each partition the messages Python's owner_of gives it
    for partitions in (2, 3):
        for index in range(partitions):
            with jms_ctx.create_browser(q) as b:
                kept = columns.browse(b, 500, index, partitions)
            mine = [m for m in messages if owner_of(m, duplicate_id_of(m), partitions) == index]
            ids = [] if kept.batch is None else kept.batch.column("message_id").to_pylist()
            assert ids == [m.wire_headers()["message_id"] for m in mine]


def _fill_with_floats(ctx, queue: str, n: int) -> None:
    q = ctx.create_queue(queue)
    p = ctx.create_producer()
    for i in range(n):
        m = ctx.create_text_message(f"m{i}")
        if i % 7 == 0:  # only Python renders a float as str() does: this batch goes through ArrowRows
            m.set_double_property("ratio", i / 10)
        m.set_int_property("i", i)
        p.send(q, m)


def _read(spark, url: str, queue: str, **options):
    r = (
        spark.read.format("jms")
        .option("url", url)
        .option("destination", queue)
        .option("receiveTimeout", 1000)
    )
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load()


def test_batches_with_float_properties_read_each_message_once(spark, jms_url, jms_ctx, qname):
    _fill_with_floats(jms_ctx, qname, 120)
    expected = {f"m{i}": ({"ratio": str(i / 10)} if i % 7 == 0 else {}) | {"i": str(i)} for i in range(120)}
    # small batches: some hold a float property, some do not; browse partitions split both alike
    browsed = (
        _read(spark, jms_url, qname, numPartitions=3, batchSize=5).select("text", "properties").collect()
    )
    assert sorted(r.text for r in browsed) == sorted(expected)
    assert {r.text: r.properties for r in browsed} == expected
    consumed = _read(spark, jms_url, qname, mode="consume", numPartitions=2, batchSize=5).collect()
    assert sorted(r.text for r in consumed) == sorted(expected)
    assert {r.text: r.properties for r in consumed} == expected
    with jms_ctx.create_browser(jms_ctx.create_queue(qname)) as b:
        assert list(b) == []


def test_consume_drops_a_resent_copy_and_takes_it_off_the_queue(spark, jms_url, jms_ctx, qname):
    q = jms_ctx.create_queue(qname)
    p = jms_ctx.create_producer()
    for i in range(30):
        m = jms_ctx.create_text_message(f"m{i}")
        m.set_duplicate_id(f"row-{i}")
        p.send(q, m)
    resend = jms_ctx.create_text_message("m3")
    resend.set_duplicate_id("row-3")  # a new message id: Artemis drops it, pyjms's reader on ActiveMQ
    p.send(q, resend)
    rows = _read(spark, jms_url, qname, mode="consume").select("text").collect()
    assert sorted(r.text for r in rows) == sorted(f"m{i}" for i in range(30))
    with jms_ctx.create_browser(q) as b:
        assert list(b) == []


@pytest.mark.parametrize("partitions", [1, 4])
def test_consume_over_partitions_takes_each_message_once(spark, jms_url, jms_ctx, qname, partitions):
    q = jms_ctx.create_queue(qname)
    jms_ctx.create_producer().send_batch(q, [f"m{i}" for i in range(500)])
    rows = _read(spark, jms_url, qname, mode="consume", numPartitions=partitions, batchSize=64).collect()
    assert sorted(r.text for r in rows) == sorted(f"m{i}" for i in range(500))
    assert {r.body for r in rows} == {f"m{i}".encode() for i in range(500)}


def _sent_ahead(browser) -> int:
    """How many messages ActiveMQ may send a browser ahead of its reads (its consumer's prefetch)."""
    wire = browser.wire_browser().java
    field = wire.getClass().getDeclaredField("cursor")  # org.pyjms.shim.activemq.EndFirstBrowse
    field.setAccessible(True)
    cursor = field.get(wire)
    field = cursor.getClass().getDeclaredField("consumer")  # ActiveMQ's browser-mode consumer
    field.setAccessible(True)
    return int(field.get(cursor).getPrefetchNumber())


def test_a_browser_read_ahead_shows_the_same_and_is_sent_a_batch_ahead(jms_ctx, qname):
    """The browse read's browser (create_browser with read_ahead) shows what a plain one shows;
    on ActiveMQ the broker may send it a batch ahead, never fewer than its own default
    (queueBrowserPrefetch, 500). Read from ActiveMQ's browser: nothing else shows it."""
    q = jms_ctx.create_queue(qname)
    p = jms_ctx.create_producer()
    for i in range(5):
        p.send(q, f"m{i}")
    with jms_ctx.create_browser(q) as b:
        shown = [m.get_body(str) for m in b]
    assert shown == [f"m{i}" for i in range(5)]
    with jms_ctx.create_browser(q, read_ahead=2) as b:
        assert [m.get_body(str) for m in b] == shown
    if jms_ctx.channel.provider_name().startswith("ActiveMQ Classic"):
        with jms_ctx.create_browser(q, read_ahead=2_000) as b:
            assert _sent_ahead(b) == 2_000
            assert [m.get_body(str) for m in b] == shown
        with jms_ctx.create_browser(q, read_ahead=10) as b:
            assert _sent_ahead(b) == 500
        with jms_ctx.create_browser(q) as b:
            assert _sent_ahead(b) == 500


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "100"])
def test_a_read_ahead_that_is_not_a_positive_int_is_refused_by_name(jms_ctx, qname, bad):
    with pytest.raises(
        pyjms.InvalidArgumentRuntimeException,
        match=rf"read_ahead must be a positive int, got {re.escape(repr(bad))}",
    ):
        jms_ctx.create_browser(jms_ctx.create_queue(qname), read_ahead=bad)
