"""Delayed publications staged one copy per subscriber, as IBM MQ does (D16, D21).

IBM MQ matches a delayed publication to the subscriptions that exist when it is sent, and
stages one copy per matching subscriber; a subscriber that has gone by the delivery time gets
nothing and nobody else gets its copy. On a pyjms broker:

* every topic subscriber pyjms makes carries an *address*: a shared subscription is its queue
  (``Q:Consumer.<name>.<topic>``); a plain or durable subscriber's consumer gets a selector
  clause naming its address (``JMS_PYJMS_Subscriber = 'N:...'`` or ``'D:...'``), so the
  broker gives it only publications addressed to it or to nobody;
* at a delayed send to a topic, the delay policy asks the broker (the admin service, op
  ``subscribers``) for the addresses of the topic's subscribers now, and stages one copy per
  address, each with ``JMS_PYJMS_Subscriber`` set;
* at delivery the processor publishes each copy to the topic as usual: the clause lets only
  its subscriber take it, and the broker forwards it to its shared-subscription queue only
  (activemq.DelayedPublications). A subscriber that has gone takes nothing: the copy is
  discarded silently (D21), and a copy that expires while staged still gets its expiration
  report (D18).

Where this cannot hold, the publication is staged once and subscribers are matched at
delivery, as before: on brokers pyjms did not start (no admin service), and when the topic has
a subscriber without an address (one not made by pyjms). A plain or durable subscriber made
by pyjms on another broker has no clause, so a durable subscription keeps one identity there.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from urllib.parse import quote

from pyjms.api.context import JMSContext
from pyjms.api.destination import TemporaryTopic, Topic
from pyjms.bridge.contract import SUBSCRIBER
from pyjms.errors import JMSRuntimeException
from pyjms.providers.activemq import admin

__all__ = [
    "SUBSCRIBER",
    "plain_address",
    "shared_address",
    "selector_for",
    "durable_selector",
    "subscribers_at_send",
]

#: what the broker lists for a subscriber it cannot address
UNADDRESSABLE = "?"
_ADDRESS = re.compile(SUBSCRIBER + " = '([^']*)'")


def plain_address() -> str:
    """A new address for a plain (non-durable, unshared) topic consumer."""
    return f"N:{uuid.uuid4().hex}"


def shared_address(name: str, durable: bool) -> str:
    """The address of a shared subscription that the broker shares natively (Artemis): one per
    kind and name, so that every consumer of it has the same selector."""
    return f"{'SD' if durable else 'SN'}:{quote(name, safe='')}"


def durable_selector(
    ctx: JMSContext,
    topic: Topic,
    client_id: str,
    name: str,
    selector: str | None,
    stored: Callable[[str], str] = lambda selector: selector,
    address: str | None = None,
) -> str | None:
    """The selector to open a durable subscription with. An existing subscription keeps its
    address (so its selector, and so the subscription itself, stays the same); a new one,
    even of a name used before, gets a new address: a publication staged for a subscription
    that was deleted must not reach its successor (D21). ``stored`` gives a selector as the
    broker keeps it (Artemis translates header names); ``address``, a new subscription's
    address where it is not its own (a shared subscription's is its kind and name)."""
    current = admin.durable_selector(ctx, topic, client_id, name, 5000)
    if current is not None:
        match = _ADDRESS.search(current)
        if match and stored(with_address := selector_for(selector, match.group(1))) == current:
            return with_address
        if not match and current == stored(selector or ""):
            # made without an address (by pyjms before addresses, or another client): adding
            # one would change the selector, and ActiveMQ would then delete the subscription
            # with its messages; it stays as it is, and delayed publications to its topic are
            # staged once
            return selector
    if address is None:
        address = f"D:{quote(client_id, safe='')}:{quote(name, safe='')}:{uuid.uuid4().hex[:12]}"
    return selector_for(selector, address)


def selector_for(selector: str | None, address: str) -> str:
    """The selector a subscriber's consumer is made with: the user's, and its address clause."""
    clause = f"({SUBSCRIBER} IS NULL OR {SUBSCRIBER} = '{address}')"
    return clause if not selector else f"({selector}) AND {clause}"


def subscribers_at_send(ctx: JMSContext, topic: Topic) -> list[str] | None:
    """The addresses to stage a delayed publication to on a pyjms broker, or None to stage it
    once."""
    if isinstance(topic, TemporaryTopic):
        return None
    try:
        found = admin.subscribers(ctx, topic, 2000)
    except JMSRuntimeException:
        return None
    return None if UNADDRESSABLE in found else found
