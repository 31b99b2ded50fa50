"""pyjms: JMS 2.0 from Python, with IBM MQ's delivery-delay and expiry rules, on any provider.

Names follow Jakarta Messaging one to one in snake_case::

    import pyjms
    with pyjms.ConnectionFactory().create_context() as ctx:
        q = ctx.create_queue("ORDERS")
        ctx.create_producer().set_priority(7).send(q, "hello")
        print(ctx.create_consumer(q).receive(1000).get_text())

This package is the facade: it names the public API, and importing it plugs IBM MQ's
features (pyjms.rules, pyjms.delay, pyjms.browse) and the default provider
(pyjms.providers.activemq) into the JMS client (pyjms.api), which knows none of them.
"""

# the features and the default provider plug themselves in when imported
from pyjms import browse as _browse  # noqa: E402,F401 - browse with mark, gets by token
from pyjms import delay as _delay  # noqa: E402,F401 - the delivery-delay send policy
from pyjms import rules as _rules  # noqa: E402,F401 - IBM MQ's rules for delayed sends
from pyjms.api.constants import (
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DEFAULT_DELIVERY_DELAY,
    DEFAULT_DELIVERY_MODE,
    DEFAULT_PRIORITY,
    DEFAULT_TIME_TO_LIVE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
    NON_PERSISTENT,
    PERSISTENT,
    SESSION_TRANSACTED,
)
from pyjms.api.consumer import JMSConsumer, QueueBrowser
from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from pyjms.api.producer import CompletionListener, JMSProducer
from pyjms.errors import *  # noqa: F403 - the error tree is part of the top-level API
from pyjms.errors import __all__ as _errors_all
from pyjms.providers import activemq as _activemq  # noqa: E402,F401 - the default provider
from pyjms.providers import amqp as _amqp  # noqa: E402,F401 - AMQP 1.0 peers
from pyjms.providers import artemis as _artemis  # noqa: E402,F401 - Apache Artemis
from pyjms.reasons import MQEI_UNLIMITED, MQRC
from pyjms.version import __version__ as __version__

__all__ = [
    "AUTO_ACKNOWLEDGE",
    "CLIENT_ACKNOWLEDGE",
    "DUPS_OK_ACKNOWLEDGE",
    "INDIVIDUAL_ACKNOWLEDGE",
    "SESSION_TRANSACTED",
    "PERSISTENT",
    "NON_PERSISTENT",
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_PRIORITY",
    "DEFAULT_TIME_TO_LIVE",
    "DEFAULT_DELIVERY_DELAY",
    "ConnectionFactory",
    "JMSContext",
    "JMSProducer",
    "JMSConsumer",
    "QueueBrowser",
    "CompletionListener",
    "Destination",
    "Queue",
    "Topic",
    "TemporaryQueue",
    "TemporaryTopic",
    "Message",
    "TextMessage",
    "BytesMessage",
    "MapMessage",
    "ObjectMessage",
    "StreamMessage",
    "MQRC",
    "MQEI_UNLIMITED",
    *_errors_all,
]
