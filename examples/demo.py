"""The pyjms demo: an embedded ActiveMQ broker, JMS 2.0 sends and receives, printed as they happen.

python examples/demo.py        (or: make demo)
"""

from __future__ import annotations

import time
from datetime import timedelta

import pyjms


def main() -> None:
    started = time.perf_counter()
    # A real ActiveMQ broker inside this process, chosen on purpose: ConnectionFactory() with
    # no URL and no PYJMS_URL starts the same one, but warns that its messages end with the process.
    factory = pyjms.ConnectionFactory.embedded()
    print(f"broker: {factory.url}")
    with factory.create_context() as ctx:
        orders = ctx.create_queue("DEMO.ORDERS")
        print(f"provider: {ctx.provider_name}; connected in {time.perf_counter() - started:.2f} s")

        producer = (
            ctx.create_producer()
            .set_priority(6)
            .set_time_to_live(timedelta(minutes=5))
            .set_property("source", "demo")
        )
        for i, item in enumerate(["apples", "pears", "plums"], start=1):
            msg = ctx.create_text_message(f"order {i}: {item}")
            msg.set_int_property("quantity", i * 10)
            producer.send(orders, msg)
            print(f"sent     {msg.get_jms_message_id()}  {msg.get_text()!r} quantity={i * 10}")
        producer.send(orders, {"order": 4, "item": "figs", "quantity": 40})
        print("sent     a MapMessage {'order': 4, 'item': 'figs', 'quantity': 40}")
        sent = producer.send_batch(orders, [f"bulk {i}" for i in range(1000)])
        print(f"sent     {sent} messages in one batch")

        consumer = ctx.create_consumer(orders)
        for _ in range(4):
            m = consumer.receive(5000)
            print(
                f"received {m.get_jms_message_id()}  {m.get_body()!r} "
                f"priority={m.get_jms_priority()} source={m.get_string_property('source')} "
                f"remaining expiry={m.get_remaining_expiry()} tenths of a second"
            )
        bulk = []
        while len(bulk) < sent:
            bulk += consumer.receive_batch(500, 5000)
        print(
            f"received {len(bulk)} bulk messages, first {bulk[0].get_text()!r}, last {bulk[-1].get_text()!r}"
        )

        # Delivery delay (JMS 2.0) with IBM MQ's rules: held by the broker until due.
        delayed = ctx.create_producer().set_delivery_delay(timedelta(seconds=1))
        delayed.send(orders, "delayed order")
        print("sent     'delayed order' with a 1 s delivery delay")
        t0 = time.perf_counter()
        m = consumer.receive(5000)
        print(
            f"received {m.get_text()!r} after {time.perf_counter() - t0:.2f} s "
            f"(delivery time - send time = {m.get_jms_delivery_time() - m.get_jms_timestamp()} ms)"
        )
        try:
            delayed.set_time_to_live(timedelta(milliseconds=500))  # shorter than the delay
        except pyjms.JMSRuntimeException as e:
            print(f"refused  {e}")
    print(f"done in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
