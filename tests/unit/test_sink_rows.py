"""The Spark sink's rows as messages (pyjms.spark.task_writer.write_partition): how each row of an
Arrow batch is encoded and routed, with its duplicate id, its options and its invalid-row
handling, in one transaction per task. The task's context is a real JMSContext on the fake
broker (tests/fakes), so what reaches the broker is decoded as the shim would decode it; no
Spark session and no JVM."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import BinaryType, DataType, IntegerType, MapType, StringType

from pyjms import ConnectionFactory
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.dlq import header as dlh
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException
from pyjms.rules.reasons import MQRC
from pyjms.spark import task_writer
from pyjms.spark.options import JMSOptions
from pyjms.spark.row_records import PUT_APPL_NAME
from tests.fakes.channel import FakeBroker, ManualClock, StoredMessage


@pytest.fixture(autouse=True)
def tasks_connect_to_the_fake_broker(factory: ConnectionFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_writer, "connection_factory", lambda options: factory)


def options(**given: str) -> JMSOptions:
    return JMSOptions.parse({"url": "tcp://spark-sink-test:1", "destination": "OUT", **given})


def write(
    batches: list[pa.RecordBatch], columns: dict[str, DataType], write_id: str | None = "w1", **given: str
):
    return task_writer.write_partition(options(**given), columns, iter(batches), write_id)


TEXT = {"body": StringType()}
BYTES = {"body": BinaryType()}


def texts(broker: FakeBroker, queue: str = "OUT") -> list[str | None]:
    return [m.text() for m in broker.queue(queue)]


def test_body_only_rows_carry_the_options_and_a_duplicate_id_per_row(
    broker: FakeBroker, clock: ManualClock
) -> None:
    batch = pa.record_batch({"body": pa.array(["a", "é😀", None])})
    done = write([batch], TEXT, priority="7", deliveryMode="NON_PERSISTENT", timeToLive="60000")
    assert (done.sent, done.skipped, done.dead_lettered) == (3, 0, 0)
    sent = broker.queue("OUT")
    assert [m.body for m in sent] == ["a", "é😀", None]  # a null body is a TextMessage without text
    assert {(m.priority, m.delivery_mode, m.expiration) for m in sent} == {(7, 1, clock.now + 60_000)}
    assert [m.properties for m in sent] == [
        {contract.DUPLICATE_ID: (C.T_STRING, f"spark:w1:0:{row}")} for row in range(3)
    ]


def test_row_ids_count_on_across_batches_of_a_partition(broker: FakeBroker) -> None:
    batches = [pa.record_batch({"body": pa.array(["a", "b"])}), pa.record_batch({"body": pa.array(["c"])})]
    write(batches, TEXT, batchSize="2")
    ids = [m.properties[contract.DUPLICATE_ID][1] for m in broker.queue("OUT")]
    assert ids == ["spark:w1:0:0", "spark:w1:0:1", "spark:w1:0:2"]


def test_without_a_write_id_rows_carry_no_property(broker: FakeBroker) -> None:
    write([pa.record_batch({"body": pa.array([b"\x00\x01", b""], pa.binary())})], BYTES, write_id=None)
    assert [(m.kind, m.body, m.properties) for m in broker.queue("OUT")] == [
        (C.KIND_BYTES, b"\x00\x01", {}),
        (C.KIND_BYTES, b"", {}),
    ]


@pytest.mark.parametrize("write_id", [None, "w1"])
def test_a_null_binary_body_is_an_empty_bytes_message(broker: FakeBroker, write_id: str | None) -> None:
    write([pa.record_batch({"body": pa.array([None, b"x"], pa.binary())})], BYTES, write_id=write_id)
    assert [(m.kind, m.body) for m in broker.queue("OUT")] == [(C.KIND_BYTES, b""), (C.KIND_BYTES, b"x")]


ROW_COLUMNS: dict[str, DataType] = {
    "body": StringType(),
    "destination": StringType(),
    "priority": IntegerType(),
    "delivery_mode": StringType(),
    "correlation_id": StringType(),
    "type": StringType(),
    "reply_to": StringType(),
    "properties": MapType(StringType(), StringType()),
    "duplicate_id": StringType(),
}


def rows(**columns: list) -> pa.RecordBatch:
    arrays = {
        name: pa.array(values, pa.map_(pa.string(), pa.string()))
        if name == "properties"
        else pa.array(values)
        for name, values in columns.items()
    }
    return pa.record_batch(arrays)


def test_each_row_goes_where_and_how_its_columns_say(broker: FakeBroker) -> None:
    batch = rows(
        body=["one", "two"],
        destination=["topic://T", None],  # None: the destination option
        priority=[0, None],
        delivery_mode=["1", None],
        correlation_id=["c1", None],
        type=["t1", None],
        reply_to=["REPLIES", None],
        properties=[[("region", "eu"), ("skip", None)], None],
        duplicate_id=["mine", None],
    )
    subscriber = broker.open_channel().consumer("topic://T", None, False, "subscribe")
    write([batch], ROW_COLUMNS)
    raw = subscriber.receive(0, True, "receive")
    assert raw is not None
    one, _ = C.IncomingRecord(raw, 0).headers_and_properties()
    assert (one["priority"], one["delivery_mode"], one["correlation_id"], one["type"]) == (0, 1, "c1", "t1")
    assert one["reply_to"] == "queue://REPLIES"
    (two,) = broker.queue("OUT")
    assert (two.text(), two.priority, two.delivery_mode, two.correlation_id) == ("two", 4, 2, None)
    assert two.properties == {contract.DUPLICATE_ID: (C.T_STRING, "spark:w1:0:1")}
    assert broker.sent[0].properties == {
        "region": (C.T_STRING, "eu"),  # a null property value is left unset
        contract.DUPLICATE_ID: (C.T_STRING, "mine"),
    }


def test_an_invalid_row_fails_the_task_and_nothing_is_sent(broker: FakeBroker) -> None:
    batch = rows(body=["ok", "bad"], priority=[4, 12])
    with pytest.raises(JMSRuntimeException, match="row 1 of partition 0") as e:
        write([batch], {"body": StringType(), "priority": IntegerType()})
    assert e.value.reason == MQRC.PRIORITY_ERROR and e.value.values["row"] == 1
    assert broker.queue("OUT") == []  # the task's transaction was rolled back


def test_an_invalid_row_can_be_skipped(broker: FakeBroker) -> None:
    batch = rows(body=["ok", "bad", "fine"], priority=[4, 12, 5])
    done = write([batch], {"body": StringType(), "priority": IntegerType()}, onInvalid="skip")
    assert (done.sent, done.skipped) == (2, 1)
    assert texts(broker) == ["ok", "fine"]


def test_an_invalid_row_can_be_dead_lettered_with_a_header_saying_why(broker: FakeBroker) -> None:
    batch = rows(body=["bad"], priority=[12], properties=[[("keep", "k"), ("1bad name", "x")]])
    columns = {"body": StringType(), "priority": IntegerType(), "properties": ROW_COLUMNS["properties"]}
    done = write([batch], columns, onInvalid="dlq", deadLetterQueue="DLQ")
    assert (done.sent, done.dead_lettered) == (0, 1)
    assert broker.queue("OUT") == []
    (dead,) = broker.queue("DLQ")
    assert (dead.text(), dead.delivery_mode, dead.expiration) == ("bad", 2, 0)
    props = {name: value for name, (_, value) in dead.properties.items()}
    assert props[dlh.REASON] == MQRC.PRIORITY_ERROR and props[dlh.DEST_Q] == "OUT"
    assert props[dlh.PUT_APPL_NAME] == PUT_APPL_NAME and props[dlh.FORMAT] == dlh.MQFMT_STRING
    assert props[contract.DLQ_DETAIL].startswith("row 0 of partition 0: ")
    assert props["keep"] == "k" and "1bad name" not in props  # what can be kept is kept
    assert props[contract.DUPLICATE_ID] == "spark:w1:0:0"


def test_a_row_with_a_delay_is_sent_as_a_delayed_message(broker: FakeBroker, clock: ManualClock) -> None:
    batch = rows(body=["later"], delivery_delay=[1500])
    write([batch], {"body": StringType(), "delivery_delay": IntegerType()})
    (m,) = broker.queue("OUT")
    assert m.delivery_time == clock.now + 1500
    assert m.properties == {contract.DUPLICATE_ID: (C.T_STRING, "spark:w1:0:0")}


def test_d06_a_rows_delay_beyond_its_ttl_is_an_invalid_row(broker: FakeBroker) -> None:
    batch = rows(body=["x"], delivery_delay=[2000], time_to_live=[1000])
    columns = {"body": StringType(), "delivery_delay": IntegerType(), "time_to_live": IntegerType()}
    done = write([batch], columns, onInvalid="skip")
    assert (done.sent, done.skipped) == (0, 1)


def test_a_row_without_any_destination_is_refused(broker: FakeBroker) -> None:
    batch = rows(body=["x"], destination=[None])
    opts = JMSOptions.parse({"url": "tcp://spark-sink-test:1"})
    with pytest.raises(JMSRuntimeException, match="no destination"):
        task_writer.write_partition(
            opts, {"body": StringType(), "destination": StringType()}, iter([batch]), "w1"
        )


def test_sink_options_are_checked_when_the_job_is_planned() -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match="deadLetterQueue"):
        options(onInvalid="dlq")
    with pytest.raises(InvalidArgumentRuntimeException, match="in-process"):
        JMSOptions.parse({"url": "vm://localhost"})
    with pytest.raises(JMSRuntimeException) as e:
        options(timeToLive="1000", deliveryDelay="2000")
    assert e.value.reason == MQRC.EXPIRY_ERROR
    assert options(deliveryMode="non_persistent").delivery_mode == 1
    assert options(destination="topic://T").destination == "topic://T"


def test_the_records_the_fast_path_packs_decode_as_any_record(broker: FakeBroker) -> None:
    """The body-only path packs records by hand, a property block written once per batch:
    each must decode as one Message.encode would give (StoredMessage equality, by field)."""
    write([pa.record_batch({"body": pa.array(["x" * 70_000])})], TEXT, write_id="long-write-id" * 10)
    (m,) = broker.queue("OUT")
    assert m == StoredMessage(
        C.KIND_TEXT,
        "x" * 70_000,
        {contract.DUPLICATE_ID: (C.T_STRING, "spark:" + "long-write-id" * 10 + ":0:0")},
        message_id=m.message_id,
        timestamp=m.timestamp,
        destination="queue://OUT",
        delivery_time=m.delivery_time,
        delivery_count=0,
    )
