"""pyjms for asyncio: the JMS 2.0 API of pyjms, with the same names, as coroutines.

    import pyjms.aio as aio

    async with aio.ConnectionFactory().create_context() as ctx:
        q = ctx.create_queue("ORDERS")
        await ctx.create_producer().set_priority(7).send(q, "hello")
        consumer = await ctx.create_consumer(q)
        print((await consumer.receive(1000)).get_text())
        async for message in consumer:   # until the consumer or the context is closed
            ...

Built only on the public synchronous API (pyjms.api, pyjms.browse), as nats.py builds
JetStream on its public client: each context drives a synchronous pyjms.JMSContext on a worker
thread of its own (pyjms.aio.worker), so the event loop never calls Java and a session is used
by one thread, as JMS requires. Messages, destinations and errors are pyjms's own. The threads,
and what a cancelled call does, are in docs/asyncio.md.
"""

from pyjms.aio.browse import MarkingBrowser, QueueBrowser
from pyjms.aio.consumer import JMSConsumer
from pyjms.aio.context import ConnectionFactory, ContextOpening, JMSContext
from pyjms.aio.producer import JMSProducer

__all__ = [
    "ConnectionFactory",
    "ContextOpening",
    "JMSContext",
    "JMSProducer",
    "JMSConsumer",
    "QueueBrowser",
    "MarkingBrowser",
]
