"""Entries ActiveMQ dead-letters itself (expiry, redelivery limit) get a header and are handled."""

from __future__ import annotations

import time

import pyjms
from pyjms.bridge.urls import with_options
from pyjms.dlq import DeadLetterHeader, DLQHandler
from pyjms.dlq.header import ACTIVEMQ_CAUSE, MQFB_EXPIRATION, MQRC_BACKOUT_THRESHOLD_REACHED
from tests.dlq.conftest import browse

ACTIVEMQ_DLQ = "ActiveMQ.DLQ"


def test_activemq_dead_letters_are_mapped_and_handled(factory: pyjms.ConnectionFactory, url: str, qname: str):
    expiring, poisoned = qname + ".EXPIRING", qname + ".POISONED"
    with factory.create_context() as ctx:  # a persistent message that expires goes to ActiveMQ.DLQ
        ctx.create_producer().set_time_to_live(100).set_property("k", "v").send(
            ctx.create_queue(expiring), f"{qname} expired"
        )
    # a consumer that rolls back past the redelivery limit makes ActiveMQ dead-letter it
    impatient = with_options(
        url,
        {
            "jms.redeliveryPolicy.maximumRedeliveries": "1",
            "jms.redeliveryPolicy.initialRedeliveryDelay": "0",
            "jms.redeliveryPolicy.redeliveryDelay": "0",
        },
    )
    with pyjms.ConnectionFactory(impatient).create_context(pyjms.SESSION_TRANSACTED) as tx:
        queue = tx.create_queue(poisoned)
        tx.create_producer().send(queue, f"{qname} poison")
        tx.commit()
        consumer = tx.create_consumer(queue)
        while consumer.receive(500) is not None:
            tx.rollback()
    time.sleep(0.2)
    with factory.create_context() as ctx:
        assert (
            ctx.create_consumer(ctx.create_queue(expiring)).receive(200) is None
        )  # the broker expires it now
        mine = {
            m.get_text(): m
            for m in browse(ctx, ACTIVEMQ_DLQ)  # shared with other tests: not all text
            if isinstance(m, pyjms.TextMessage) and m.get_text().startswith(qname)
        }
        details = ctx.provider.dead_letter_details(ctx, ACTIVEMQ_DLQ)

    expired, poison = mine[f"{qname} expired"], mine[f"{qname} poison"]
    headers = {}
    for message in (expired, poison):
        found = details[message.get_jms_message_id()]
        headers[message.get_text()] = DeadLetterHeader.from_message(
            message,
            queue_manager="QM1",
            original_destination=found.original_destination,
            dead_lettered_ms=found.dead_lettered_ms,
        )
    assert headers[f"{qname} expired"] is not None and headers[f"{qname} poison"] is not None
    assert (headers[f"{qname} expired"].reason, headers[f"{qname} expired"].dest_q) == (
        MQFB_EXPIRATION,
        expiring,
    )
    assert (headers[f"{qname} poison"].reason, headers[f"{qname} poison"].dest_q) == (
        MQRC_BACKOUT_THRESHOLD_REACHED,
        poisoned,
    )
    assert all(
        h.put_appl_name == "ActiveMQ"
        and h.put_appl_type == 7
        and h.dest_q_mgr == "QM1"
        and h.put_datetime is not None
        for h in headers.values()
    )

    table = (
        "WAIT(NO)\n"
        f"REASON(MQFB_EXPIRATION) DESTQ({expiring}) ACTION(FWD) FWDQ({qname}.EXPIRED)\n"
        f"REASON(MQRC_BACKOUT_THRESHOLD_REACHED) DESTQ({poisoned}) ACTION(RETRY)\n"
    )  # any other entry on ActiveMQ.DLQ matches nothing and stays (IGNORE)
    stats = DLQHandler(url, ACTIVEMQ_DLQ, table, "QM1").run()

    assert (stats.forwarded, stats.retried) == (1, 1)
    with factory.create_context() as ctx:
        [forwarded] = browse(ctx, qname + ".EXPIRED")
        [retried] = browse(ctx, poisoned)
        # ActiveMQ.DLQ is the worker's broker's, shared with the tests that ran before: not all text
        assert not [
            m
            for m in browse(ctx, ACTIVEMQ_DLQ)
            if isinstance(m, pyjms.TextMessage) and m.get_text().startswith(qname)
        ]
    assert forwarded.get_text() == f"{qname} expired" and forwarded.get_string_property("k") == "v"
    assert "Message Expired" in forwarded.get_string_property(ACTIVEMQ_CAUSE)  # FWD keeps the header
    assert retried.get_text() == f"{qname} poison" and not retried.property_exists(ACTIVEMQ_CAUSE)
