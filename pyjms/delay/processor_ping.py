"""How producers find out that a delay processor serves a staging queue: it answers pings on
``PYJMS.CONTROL.<staging>`` (the staging delay mechanism is chosen only if one answers)."""

from __future__ import annotations

import threading

from pyjms.api.context import ConnectionFactory, JMSContext
from pyjms.api.destination import Queue


def control_queue(staging_queue: str) -> Queue:
    return Queue(f"PYJMS.CONTROL.{staging_queue}")


class PingResponder:
    """The ping thread: answers each ping on the control queue, to its reply-to queue."""

    def __init__(self, factory: ConnectionFactory, staging: str, stop: threading.Event) -> None:
        self._factory = factory
        self._queue = control_queue(staging)
        self._stop = stop

    def run(self) -> None:
        with self._factory.create_context() as ctx:
            consumer = ctx.create_consumer(self._queue)
            producer = ctx.create_producer().set_delivery_mode(1).set_time_to_live(10_000)
            while not self._stop.is_set():
                m = consumer.receive(200)
                if m is not None and m.get_jms_reply_to() is not None:
                    producer.set_jms_correlation_id(m.get_jms_message_id()).send(m.get_jms_reply_to(), "pyjms delay processor")


def processor_answers(ctx: JMSContext, timeout_ms: int = 1000) -> bool:
    """Whether a delay processor serves this factory's staging queue (it answers a ping)."""
    with ctx.create_context() as probe:
        reply = probe.create_temporary_queue()
        consumer = probe.create_consumer(reply)
        probe.create_producer().set_jms_reply_to(reply).set_time_to_live(timeout_ms).set_delivery_mode(1).send(
            control_queue(ctx._factory.staging_queue), "ping"
        )
        return consumer.receive(timeout_ms) is not None
