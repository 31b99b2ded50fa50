"""A concurrent order pipeline on one asyncio event loop, with pyjms.aio.

* producers put orders on ORDERS, each with a delivery delay of its own (an order due later);
* workers take orders as they fall due (``async for``), check none came early, and reply to
  each on its JMSReplyTo, correlated by the order's message id (``send_reply``);
* a checker takes the confirmations and confirms that every order was confirmed exactly once.

Each producer, worker and the checker has its own context (a JMS session, driven by a worker
thread of its own); the loop runs them all.

    python examples/asyncio_orders.py [--url tcp://127.0.0.1:61616] [--orders 200]
                                      [--producers 4] [--workers 3] [--max-delay-ms 1000]

With no --url (and no PYJMS_URL) it uses an embedded broker. Exits 0 when every order was
confirmed once and none was delivered before its delay.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyjms.aio as aio  # noqa: E402

#: a delayed message may come this much before its due time by the broker's clock and ours
CLOCK_SLACK_MS = 50


@dataclass
class Outcome:
    sent: set[str] = field(default_factory=set)
    confirmed: collections.Counter[str] = field(default_factory=collections.Counter)
    early: list[str] = field(default_factory=list)  # orders delivered before their delay was up
    by_worker: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def ok(self) -> bool:
        return (
            not self.early
            and set(self.confirmed) == self.sent
            and all(n == 1 for n in self.confirmed.values())
        )


async def produce(
    factory: aio.ConnectionFactory,
    orders: str,
    confirmations: str,
    number: int,
    count: int,
    max_delay_ms: int,
    outcome: Outcome,
) -> None:
    rng = random.Random(number)
    async with factory.create_context() as ctx:
        producer = ctx.create_producer().set_jms_reply_to(ctx.create_queue(confirmations))
        queue = ctx.create_queue(orders)
        for i in range(count):
            order_id = f"P{number}-{i}"
            delay = rng.randrange(0, max_delay_ms + 1)
            due_ms = int(time.time() * 1000) + delay
            # the delay is taken when send is called: the next order's setter cannot change it
            producer.set_delivery_delay(delay)
            await producer.send(queue, json.dumps({"id": order_id, "due_ms": due_ms}))
            outcome.sent.add(order_id)


async def work(
    factory: aio.ConnectionFactory, orders: str, name: str, outcome: Outcome, stop: asyncio.Event
) -> None:
    async with factory.create_context() as ctx:
        consumer = await ctx.create_consumer(ctx.create_queue(orders))
        replies = ctx.create_producer()
        while not stop.is_set():
            order = await consumer.receive(200)
            if order is None:
                continue
            body = json.loads(order.get_text())
            if time.time() * 1000 + CLOCK_SLACK_MS < body["due_ms"]:
                outcome.early.append(body["id"])
            await replies.send_reply(order, json.dumps({"id": body["id"], "worker": name}))
            outcome.by_worker[name] += 1


async def check(
    factory: aio.ConnectionFactory, confirmations: str, expected: int, outcome: Outcome, idle_ms: int = 500
) -> None:
    async with factory.create_context() as ctx:
        consumer = await ctx.create_consumer(ctx.create_queue(confirmations))
        while sum(outcome.confirmed.values()) < expected:
            reply = await consumer.receive(30_000)
            if reply is None:
                return  # nothing for 30 s: the run has failed
            outcome.confirmed[json.loads(reply.get_text())["id"]] += 1
        # a duplicate would come soon after: look a little longer
        async for reply in consumer.messages(idle_ms):
            outcome.confirmed[json.loads(reply.get_text())["id"]] += 1


async def run(
    url: str | None = None, orders: int = 200, producers: int = 4, workers: int = 3, max_delay_ms: int = 1000
) -> Outcome:
    factory = aio.ConnectionFactory(url) if url else aio.ConnectionFactory()
    run_id = uuid.uuid4().hex[:8]
    orders_queue, confirmations_queue = f"ORDERS.{run_id}", f"CONFIRMATIONS.{run_id}"
    outcome = Outcome()
    stop = asyncio.Event()
    per_producer = [orders // producers + (1 if p < orders % producers else 0) for p in range(producers)]
    checker = asyncio.create_task(check(factory, confirmations_queue, orders, outcome))
    working = [
        asyncio.create_task(work(factory, orders_queue, f"W{w}", outcome, stop)) for w in range(workers)
    ]
    await asyncio.gather(
        *(
            produce(factory, orders_queue, confirmations_queue, p, n, max_delay_ms, outcome)
            for p, n in enumerate(per_producer)
        )
    )
    await checker
    stop.set()
    await asyncio.gather(*working)
    return outcome


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=None)
    ap.add_argument("--orders", type=int, default=200)
    ap.add_argument("--producers", type=int, default=4)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--max-delay-ms", type=int, default=1000)
    args = ap.parse_args()
    t0 = time.monotonic()
    outcome = asyncio.run(run(args.url, args.orders, args.producers, args.workers, args.max_delay_ms))
    twice = sorted(k for k, n in outcome.confirmed.items() if n > 1)
    missing = sorted(outcome.sent - set(outcome.confirmed))
    print(
        f"{len(outcome.sent)} orders sent by {args.producers} producers, "
        f"{sum(outcome.confirmed.values())} confirmations for {len(outcome.confirmed)} orders, "
        f"by worker {dict(sorted(outcome.by_worker.items()))}; {time.monotonic() - t0:.1f} s"
    )
    if missing or twice or outcome.early:
        print(f"FAILED: missing {missing[:10]}, confirmed twice {twice[:10]}, early {outcome.early[:10]}")
        return 1
    print("every order confirmed exactly once, none delivered before its delay")
    return 0


if __name__ == "__main__":
    sys.exit(main())
