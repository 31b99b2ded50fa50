"""Fixtures for the DLQ handler tests: real brokers, one of which has queues that fill up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import pyjms
from pyjms.dlq import dead_letter

#: Queues with this prefix on the ``full_broker`` hold one message at most.
FULL_PREFIX = "FULL."


@pytest.fixture(scope="session")
def full_broker() -> Iterator[object]:
    """An embedded broker (vm:// and tcp://) whose FULL.* queues are full after one message.

    The limit is real: ActiveMQ refuses the put (sendFailIfNoSpace) once the queue's memory
    limit is reached, which is how a JMS provider says MQRC_Q_FULL.
    """
    from pyjms.bridge import jvm
    from pyjms.broker import EmbeddedBroker

    broker = EmbeddedBroker(port=0)
    s = jvm.shim()
    queue = s.jclass("org.apache.activemq.command.ActiveMQQueue")(FULL_PREFIX + ">")
    policy = s.jclass("org.apache.activemq.broker.region.policy.PolicyEntry")()
    policy.setQueue(FULL_PREFIX + ">")
    policy.setMemoryLimit(1)
    service = broker.service()
    service.getDestinationPolicy().put(queue, policy)
    service.getSystemUsage().setSendFailIfNoSpace(True)
    yield broker
    broker.stop()


@pytest.fixture(params=["vm", "tcp"])
def full_url(request: pytest.FixtureRequest, full_broker) -> str:
    return full_broker.vm_url if request.param == "vm" else full_broker.tcp_url


def put_dead_letters(
    ctx: pyjms.JMSContext, dlq: str, bodies: list[str], reason: int, dest_q: str, **kw
) -> None:
    """Dead-letters one persistent text message per body, as a pyjms component would."""
    for body in bodies:
        dead_letter(ctx, pyjms.TextMessage(body), dlq, reason, dest_q=dest_q, **kw)


def drain_all(ctx: pyjms.JMSContext, queue: str, idle_ms: int = 300) -> list[pyjms.Message]:
    """Every message on a queue, consumed (browsing stops at ActiveMQ's 400)."""
    consumer = ctx.create_consumer(ctx.create_queue(queue))
    out: list[pyjms.Message] = []
    while batch := consumer.receive_batch(500, idle_ms):
        out.extend(batch)
    consumer.close()
    return out


def browse(ctx: pyjms.JMSContext, queue: str) -> list[pyjms.Message]:
    with ctx.create_browser(ctx.create_queue(queue)) as browser:
        return list(browser)
