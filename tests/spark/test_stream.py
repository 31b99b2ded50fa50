"""Streaming: the sink's per-task transactions for each micro-batch, and an at-least-once source
that takes a micro-batch's messages off the queue only after Spark committed that batch."""

from __future__ import annotations

import json

import pytest

from tests.spark import needs_spark

needs_spark()

import pyjms  # noqa: E402
from tests.conftest import drain  # noqa: E402


@pytest.fixture(scope="session")
def jms_url(tcp_broker) -> str:
    """Streaming runs on ActiveMQ Classic only (batch reads and writes run on every provider in
    SPARK_PROVIDERS): the stream's commit path is the batch consume path, which those prove,
    and three more streaming jobs would cost the suite minutes."""
    return tcp_broker.tcp_url


def _fill(ctx, queue: str, n: int) -> None:
    with ctx.create_context(pyjms.SESSION_TRANSACTED) as tx:
        tx.create_producer().send_batch(tx.create_queue(queue), [f"m{i}" for i in range(n)])
        tx.commit()


def _left(ctx, queue: str) -> list[str]:
    with ctx.create_browser(ctx.create_queue(queue)) as b:
        return sorted(m.get_text() for m in b)


def test_stream_write_sends_each_micro_batch_once(spark, jms_url, jms_ctx, qname, tmp_path):
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    source.mkdir()

    def run() -> None:
        stream = spark.readStream.schema("body string, priority int").json(str(source))
        (
            stream.writeStream.format("jms")
            .option("url", jms_url)
            .option("destination", qname)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
            .awaitTermination(120)
        )

    (source / "1.json").write_text(
        "\n".join(json.dumps({"body": f"a{i}", "priority": i % 10}) for i in range(30))
    )
    run()
    (source / "2.json").write_text("\n".join(json.dumps({"body": f"b{i}"}) for i in range(20)))
    run()  # the checkpoint knows file 1 was sent: only file 2 goes out
    with jms_ctx.create_consumer(jms_ctx.create_queue(qname)) as c:
        got = drain(c, 500)
    assert sorted(m.get_text() for m in got) == sorted(
        [f"a{i}" for i in range(30)] + [f"b{i}" for i in range(20)]
    )
    assert {m.get_text(): m.get_jms_priority() for m in got}["a7"] == 7
    # duplicate ids name the query and the micro-batch (the same on a replay, never across batches)
    ids = {m.get_text(): m.get_duplicate_id() for m in got}
    assert len(set(ids.values())) == 50 and ids["a0"].split(":")[2] != ids["b0"].split(":")[2]


def _stream(spark, url: str, queue: str, checkpoint, sink, per_trigger: int = 10):
    return (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", queue)
        .option("maxMessagesPerTrigger", per_trigger)
        .option("receiveTimeout", 500)
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )


def test_stream_read_commits_every_batch_of_an_available_now_run(spark, jms_url, jms_ctx, qname, tmp_path):
    _fill(jms_ctx, qname, 25)
    seen: dict[int, list[str]] = {}
    query = _stream(
        spark,
        jms_url,
        qname,
        tmp_path / "cp",
        lambda df, batch_id: seen.setdefault(batch_id, [r.text for r in df.collect()]),
    )
    query.awaitTermination(120)
    assert [len(seen[b]) for b in sorted(seen)] == [10, 10, 5]  # maxMessagesPerTrigger
    assert sorted(t for batch in seen.values() for t in batch) == sorted(f"m{i}" for i in range(25))
    assert _left(jms_ctx, qname) == []  # the last batch too: committed before the query returned


def test_stream_read_restarted_from_its_checkpoint_loses_nothing(spark, jms_url, jms_ctx, qname, tmp_path):
    _fill(jms_ctx, qname, 25)
    delivered: list[str] = []

    def failing_sink(df, batch_id):
        if batch_id == 1:
            raise RuntimeError("sink down")
        delivered.extend(r.text for r in df.collect())

    query = _stream(spark, jms_url, qname, tmp_path / "cp", failing_sink)
    with pytest.raises(Exception, match="sink down"):
        query.awaitTermination(120)
    # batch 0 was committed when batch 1 was planned; batch 1 went back to the queue
    assert len(delivered) == 10 and len(_left(jms_ctx, qname)) == 15

    # restarted: Spark replays batch 1 from its offset log, then reads on; at-least-once
    query = _stream(
        spark, jms_url, qname, tmp_path / "cp", lambda df, _: delivered.extend(r.text for r in df.collect())
    )
    query.awaitTermination(120)
    assert sorted(delivered) == sorted(f"m{i}" for i in range(25))
    assert _left(jms_ctx, qname) == []
