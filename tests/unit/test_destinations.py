"""Destinations (pyjms.api.destination): kinds, names and the keys that cross to the shim, and
how a context names them (create_queue, create_topic)."""

from __future__ import annotations

import pytest

from pyjms import JMSContext, Queue, Topic
from pyjms.api.destination import TemporaryQueue, TemporaryTopic, from_key
from pyjms.errors import InvalidDestinationRuntimeException


@pytest.mark.parametrize(
    ("key", "kind", "name"),
    [
        ("queue://ORDERS", Queue, "ORDERS"),
        ("topic://NEWS.eu", Topic, "NEWS.eu"),
        ("temp-queue://ID:x-1", TemporaryQueue, "ID:x-1"),
        ("temp-topic://t", TemporaryTopic, "t"),
        ("queue://a://b", Queue, "a://b"),
    ],
)
def test_a_key_names_its_kind_and_name_and_back(key: str, kind: type, name: str) -> None:
    destination = from_key(key)
    assert type(destination) is kind and destination.name == name
    assert destination.key == key == str(destination)


@pytest.mark.parametrize("key", ["ORDERS", "fifo://Q", "://Q", "queue://"])
def test_a_key_of_no_known_kind_is_an_invalid_destination(key: str) -> None:
    with pytest.raises(InvalidDestinationRuntimeException):
        from_key(key)


def test_none_is_no_destination() -> None:
    assert from_key(None) is None


@pytest.mark.parametrize("name", ["", "   ", None, 5])
def test_a_destination_needs_a_name(name: object) -> None:
    with pytest.raises(InvalidDestinationRuntimeException):
        Queue(name)  # type: ignore[arg-type]


def test_equal_destinations_have_equal_kinds_and_names() -> None:
    assert Queue("A") == Queue("A") and hash(Queue("A")) == hash(Queue("A"))
    assert Queue("A") != Topic("A") and Queue("A") != Queue("B")
    assert TemporaryQueue("t") != Queue("t")  # another kind: temp-queue://t
    assert {Queue("A"), Queue("A"), Topic("A")} == {Queue("A"), Topic("A")}
    assert Queue("A").get_queue_name() == "A" and Topic("T").get_topic_name() == "T"


def test_a_temporary_destination_made_elsewhere_cannot_be_deleted_here() -> None:
    with pytest.raises(InvalidDestinationRuntimeException, match="not created by this process"):
        from_key("temp-queue://elsewhere").delete()  # type: ignore[union-attr]


def test_a_context_names_queues_and_topics_with_or_without_their_prefix(ctx: JMSContext) -> None:
    assert ctx.create_queue("queue://ORDERS") == ctx.create_queue("ORDERS") == Queue("ORDERS")
    assert ctx.create_topic("topic://NEWS") == Topic("NEWS")
    with pytest.raises(InvalidDestinationRuntimeException, match="names a topic, not a queue"):
        ctx.create_queue("topic://NEWS")
    with pytest.raises(InvalidDestinationRuntimeException, match="names a queue, not a topic"):
        ctx.create_topic("queue://ORDERS")
