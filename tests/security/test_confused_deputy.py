"""pyjms's services act for whoever asked, never with their own rights (issue 32): on a broker
with users and access rules (ActiveMQ and Artemis), a user who may not write a queue cannot have
the admin service, the mark service or the delay processor's ping write there by naming it as
JMSReplyTo; and a browse handle is its owner's: another user cannot claim, unmark, renew, close
or restore with it, nor change the mark interval."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

import pyjms
from pyjms.bridge.contract import ADMIN_QUEUE, MARK_QUEUE
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.browse import set_mark_browse_interval
from pyjms.browse.client import MarkClient
from pyjms.delay.processor import control_queue
from pyjms.providers.artemis import EmbeddedArtemisBroker

USERS = {"alice": ("alice-pw", ["senders", "readers"]), "bob": ("bob-pw", ["readers"])}
ACCESS = [
    AccessRule("ORDERS.>", read=["readers"], write=["senders"], admin=["senders", "readers"]),
    AccessRule("PUBLIC.>", read=["readers"], write=["senders", "readers"], admin=["senders", "readers"]),
]


@pytest.fixture(scope="module", params=["activemq", "artemis"])
def secured(request: pytest.FixtureRequest) -> Iterator[EmbeddedBroker | EmbeddedArtemisBroker]:
    name = f"pyjms-deputy-{uuid.uuid4().hex[:6]}"
    broker: EmbeddedBroker | EmbeddedArtemisBroker
    if request.param == "artemis":
        broker = EmbeddedArtemisBroker(name=name, users=USERS, access=ACCESS)
    else:
        broker = EmbeddedBroker(name=name, users=USERS, access=ACCESS)
    yield broker
    broker.stop()


def as_user(broker: EmbeddedBroker | EmbeddedArtemisBroker, user: str) -> pyjms.ConnectionFactory:
    return pyjms.ConnectionFactory(broker.vm_url, user, USERS[user][0])


@pytest.mark.parametrize(
    "service, request_body",
    [
        (ADMIN_QUEUE, '{"op": "destinations"}'),
        (MARK_QUEUE, '{"op": "config"}'),
        ("control", '{"op": "ping"}'),
        (MARK_QUEUE, '{"op": "open", "handle": "' + "b" * 32 + '"}'),
        (ADMIN_QUEUE, "[[[[ not even JSON"),  # an error answer is a write too
    ],
)
def test_no_service_writes_for_a_user_where_that_user_may_not_write(secured, service, request_body) -> None:
    target = pyjms.Queue(f"ORDERS.X.{uuid.uuid4().hex[:8]}")  # bob reads ORDERS.>, may not write it
    with as_user(secured, "bob").create_context() as bob:
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_producer().send(target, "bob may not write here himself")
        queue = control_queue(bob.factory.staging_queue) if service == "control" else pyjms.Queue(service)
        # the same request with a reply-to bob may write is answered: the service is there
        own = bob.create_temporary_queue()
        bob.create_producer().set_jms_reply_to(own).set_jms_correlation_id("c1").send(queue, request_body)
        assert bob.create_consumer(own).receive(10_000) is not None
        bob.create_producer().set_jms_reply_to(target).set_jms_correlation_id("c2").send(queue, request_body)
    with as_user(secured, "alice").create_context() as alice:
        # alice may read and write ORDERS.>: she sees what is there (nothing), then what she puts
        consumer = alice.create_consumer(target)
        assert consumer.receive(2000) is None, f"{queue.name} wrote to {target.name} for bob"
        alice.create_producer().send(target, "alice's own")
        assert consumer.receive(5000).get_text() == "alice's own"


def test_a_browse_handle_is_its_owners(secured) -> None:
    handle = uuid.uuid4().hex
    with (
        as_user(secured, "alice").create_context() as a_ctx,
        as_user(secured, "bob").create_context() as b_ctx,
    ):
        alice, bob = MarkClient(a_ctx), MarkClient(b_ctx)
        alice.call("open", handle=handle)
        assert alice.call("claim", handle=handle, queue="PUBLIC.Q", ids=["ID:m1", "ID:m2"])["granted"] == [
            "ID:m1",
            "ID:m2",
        ]
        for op, fields in [
            ("claim", {"handle": handle, "queue": "PUBLIC.Q", "ids": ["ID:m3"]}),
            ("unmark", {"handle": handle, "queue": "PUBLIC.Q", "ids": ["ID:m1"]}),
            ("renew", {"handles": [handle]}),
            ("close", {"handle": handle}),
            ("open", {"handle": handle}),
            ("restore", {"handle": handle, "queue": "PUBLIC.Q", "ids": ["ID:m4"], "ages_ms": [0]}),
        ]:
            with pytest.raises(pyjms.JMSSecurityRuntimeException, match="another user's") as refused:
                bob.call(op, **fields)
            assert refused.value.reason == 2035, op
        # alice's marks are untouched, and her handle is still hers
        assert bob.call("marked", queue="PUBLIC.Q", ids=["ID:m1", "ID:m2", "ID:m3"])["marked"] == [
            "ID:m1",
            "ID:m2",
        ]
        assert alice.call("renew", handles=[handle])["lost"] == []
        assert alice.call("close", handle=handle)["released"] == 2
        alice.close()
        bob.close()


def test_only_an_administrator_changes_the_mark_interval(secured) -> None:
    bob = as_user(secured, "bob")
    with pytest.raises(
        pyjms.JMSSecurityRuntimeException, match="'bob' may not change MsgMarkBrowseInterval"
    ) as e:
        set_mark_browse_interval(bob, 1234)
    assert e.value.reason == 2035
    with bob.create_context() as ctx, MarkClient(ctx) as marks:
        assert marks.call("config")["interval_ms"] != 1234  # reading it is everyone's
