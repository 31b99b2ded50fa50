"""Batch reads: browse (a snapshot) and consume (transactional), spread over partitions."""

from __future__ import annotations

import time
from datetime import UTC

import pytest

from tests.spark import needs_spark

needs_spark()

import pyjms  # noqa: E402
from tests.conftest import drain_expecting  # noqa: E402


def _read(spark, url: str, queue: str, fmt: str = "jms", **options):
    r = spark.read.format(fmt).option("url", url).option("destination", queue).option("receiveTimeout", 500)
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load()


def _fill(ctx, queue: str, n: int, **props) -> None:
    with ctx.create_context(pyjms.SESSION_TRANSACTED) as tx:
        p = tx.create_producer()
        for k, v in props.items():
            p.set_property(k, v)
        p.send_batch(tx.create_queue(queue), [f"m{i}" for i in range(n)])
        tx.commit()


def _left(ctx, queue: str) -> list[str]:
    with ctx.create_browser(ctx.create_queue(queue)) as b:
        return sorted(str(m.get_body()) for m in b)


def test_browse_returns_every_column_and_removes_nothing(spark, jms_url, jms_ctx, qname):
    q = jms_ctx.create_queue(qname)
    before = int(time.time() * 1000)
    m = jms_ctx.create_text_message("hello")
    m.set_string_property("region", "eu")
    m.set_int_property("n", 7)
    m.set_boolean_property("urgent", True)
    (
        jms_ctx.create_producer()
        .set_priority(8)
        .set_time_to_live(600_000)
        .set_jms_correlation_id("c-9")
        .set_jms_type("greeting")
        .set_jms_reply_to(pyjms.Queue("REPLIES"))
        .send(q, m)
    )
    jms_ctx.create_producer().set_delivery_mode(pyjms.NON_PERSISTENT).send(q, b"\x00\x01")

    rows = {r.message_id: r for r in _read(spark, jms_url, qname).collect()}
    read_at = time.time() * 1000
    text, binary = (
        rows[m.get_jms_message_id()],
        next(r for k, r in rows.items() if k != m.get_jms_message_id()),
    )
    assert (text.destination, text.correlation_id, text.type, text.reply_to) == (
        f"queue://{qname}",
        "c-9",
        "greeting",
        "queue://REPLIES",
    )
    assert (text.priority, text.delivery_mode, text.redelivered, text.delivery_count) == (
        8,
        pyjms.PERSISTENT,
        False,
        1,
    )
    assert text.properties == {"region": "eu", "n": "7", "urgent": "true"}
    assert (text.body, text.text) == (b"hello", "hello")
    ts = text.timestamp.replace(tzinfo=UTC) if text.timestamp.tzinfo is None else text.timestamp
    assert before - 1000 <= ts.timestamp() * 1000 <= time.time() * 1000
    assert text.delivery_time == text.timestamp
    assert (text.expiration - text.timestamp).total_seconds() == pytest.approx(600, abs=0.01)
    # tenths of a second left when read (IBM MQ's MQMD Expiry), counted down from the send
    left_after = (
        (text.expiration - text.timestamp).total_seconds() * 1000 - (read_at - ts.timestamp() * 1000)
    ) / 100
    assert left_after - 1 <= text.remaining_expiry <= 6000
    assert (binary.body, binary.text, binary.expiration, binary.remaining_expiry) == (
        b"\x00\x01",
        None,
        None,
        -1,
    )
    assert binary.delivery_mode == pyjms.NON_PERSISTENT
    assert len(_left(jms_ctx, qname)) == 2


def test_browse_partitions_split_the_queue_exactly(spark, jms_url, jms_ctx, qname):
    _fill(jms_ctx, qname, 120)
    df = _read(spark, jms_url, qname, numPartitions=3)
    assert df.rdd.getNumPartitions() == 3
    texts = [r.text for r in df.select("text").collect()]
    assert sorted(texts) == sorted(f"m{i}" for i in range(120))
    narrow = _read(spark, jms_url, qname, maxMessages=50, numPartitions=2).select("text").collect()
    assert len(narrow) == 50 and len({r.text for r in narrow}) == 50


def test_selector_and_expiry(spark, jms_url, jms_ctx, qname):
    _fill(jms_ctx, qname, 5, region="eu")
    _fill(jms_ctx, qname, 3, region="us")
    q = jms_ctx.create_queue(qname)
    jms_ctx.create_producer().set_time_to_live(300).set_property("region", "eu").send_batch(
        q, ["short-lived"] * 4
    )
    time.sleep(0.5)
    for mode in ("browse", "consume"):
        rows = _read(spark, jms_url, qname, mode=mode, messageSelector="region = 'eu'").collect()
        assert sorted(r.text for r in rows) == [f"m{i}" for i in range(5)], mode
    assert _left(jms_ctx, qname) == ["m0", "m1", "m2"]  # consume took the eu ones; expired ones never showed


def test_consume_takes_each_message_once_over_concurrent_partitions(spark, jms_url, jms_ctx, qname):
    _fill(jms_ctx, qname, 300)
    # a partition that stops at its bound holds the rest of its prefetch until it commits, so
    # give the others time to get those messages back
    rows = _read(
        spark,
        jms_url,
        qname,
        mode="consume",
        numPartitions=3,
        maxMessages=250,
        batchSize=40,
        receiveTimeout=2000,
    ).collect()
    assert len(rows) == 250 and len({r.text for r in rows}) == 250
    assert len(_left(jms_ctx, qname)) == 50
    rest = _read(spark, jms_url, qname, mode="consume", numPartitions=2).collect()
    assert sorted(r.text for r in rows + rest) == sorted(f"m{i}" for i in range(300))
    assert _left(jms_ctx, qname) == []


def test_consume_in_a_failed_job_removes_nothing(spark, jms_url, jms_ctx, qname):
    """Every attempt of every task fails after Spark took its first rows: the job fails
    (local[2,3] gives each task three attempts) and every message is still there."""
    _fill(jms_ctx, qname, 200)
    with pytest.raises(Exception, match="injected read failure"):
        _read(
            spark, jms_url, qname, fmt="jms_failing_consume", mode="consume", numPartitions=2, batchSize=20
        ).collect()
    with jms_ctx.create_consumer(jms_ctx.create_queue(qname)) as c:
        # the job fails when one task's last attempt does: another task's attempt may still be
        # giving its messages back (the run with two test workers found the queue empty at 1 s)
        back = drain_expecting(c, 200)
    assert sorted(m.get_text() for m in back) == sorted(f"m{i}" for i in range(200))
    assert any(m.get_jms_redelivered() for m in back)  # they were taken, then given back


def test_consume_after_job_removes_exactly_what_a_successful_job_saw(spark, jms_url, jms_ctx, qname):
    from pyjms.spark import consume_after_job

    _fill(jms_ctx, qname, 30)

    def job(df):
        # a message that arrives while the job runs is not in its snapshot: it must stay
        jms_ctx.create_producer().send(jms_ctx.create_queue(qname), "late")
        return sorted(r.text for r in df.select("text").collect())

    out = consume_after_job(spark, {"url": jms_url, "destination": qname, "receiveTimeout": "500"}, job)
    assert out.result == sorted(f"m{i}" for i in range(30))
    assert (out.processed, out.acknowledged, out.missing) == (30, 30, 0)
    assert _left(jms_ctx, qname) == ["late"]


def test_consume_after_job_in_a_failed_job_removes_nothing(spark, jms_url, jms_ctx, qname):
    from pyjms.spark import consume_after_job

    _fill(jms_ctx, qname, 10)

    def job(df):
        assert df.count() == 10
        raise RuntimeError("the sink failed")

    with pytest.raises(RuntimeError, match="the sink failed"):
        consume_after_job(spark, {"url": jms_url, "destination": qname}, job)
    assert _left(jms_ctx, qname) == sorted(f"m{i}" for i in range(10))
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="mode"):
        consume_after_job(spark, {"url": jms_url, "destination": qname, "mode": "consume"}, job)
