"""What the DLQ handler (and the delay processor) need to know about ActiveMQ Classic.

* A rolled-back get counts as a redelivery, and after ``maximumRedeliveries`` (6) ActiveMQ's
  client hands the message to the broker as poison: it moves to ActiveMQ.DLQ, or is dropped
  if it already is there. A DLQ handler rolls back every move whose put fails, so it
  connects with no redelivery limit (:func:`without_redelivery_limit`); it keeps its own retry
  counts, as IBM's handler does.
* In a transaction ActiveMQ sends asynchronously, so a refused put (a full queue) surfaces
  only at commit, as "Transaction marked rollback only"; and after such a commit the broker
  keeps the message got in that transaction from everyone until the connection closes
  (measured on 6.1.7). So after a failed commit the handler reconnects. (Synchronous sends,
  ``jms.alwaysSyncSend=true``, fail at the put instead, but cost a round trip per move:
  420 instead of 700 moves/s on vm://.)
* ActiveMQ keeps a dead-lettered message's original destination and the time it
  dead-lettered it in the message's ``originalDestination`` and ``brokerInTime`` fields,
  which are not JMS properties. :func:`dead_letter_details` reads them through the provider
  session. (The shim could carry them as properties instead; then this goes.)
"""

from __future__ import annotations

from typing import cast

from pyjms.api.context import ConnectionFactory, JMSContext
from pyjms.bridge.urls import add_internal_option
from pyjms.dlq.header import ACTIVEMQ_CAUSE, REASON, DeadLetterDetails
from pyjms.providers.activemq.java_types import JavaActiveMQMessage

#: URL schemes the shim hands to ActiveMQ (org.pyjms.shim.Providers.forUrl)
SCHEMES = ("vm", "tcp", "nio", "ssl", "failover", "discovery", "static", "auto", "peer")
_HANDLER_OPTIONS = ("jms.redeliveryPolicy.maximumRedeliveries=-1",)
#: ActiveMQ's client sends a CLIENT_ACKNOWLEDGE acknowledgement asynchronously by default: one
#: still in its send queue when the process dies is lost, and the message comes again
_SYNCHRONOUS_ACK_OPTIONS = ("jms.sendAcksAsync=false",)
for _option in _HANDLER_OPTIONS + _SYNCHRONOUS_ACK_OPTIONS:
    add_internal_option(_option)
#: at most this many entries are read per call; ActiveMQ browses no more than 400 by default
_MAX_ENTRIES = 1000


def is_activemq_url(url: str | None) -> bool:
    return bool(url) and url.partition(":")[0] in SCHEMES  # type: ignore[union-attr]


def without_redelivery_limit(base: ConnectionFactory) -> ConnectionFactory:
    """The factory as given, plus no redelivery limit (unless the URL sets one)."""
    return _with_options(base, _HANDLER_OPTIONS)


def with_synchronous_acks(base: ConnectionFactory) -> ConnectionFactory:
    """The factory as given, whose acknowledgements have reached the broker when acknowledge()
    returns (unless the URL says otherwise)."""
    return _with_options(base, _SYNCHRONOUS_ACK_OPTIONS)


def _with_options(base: ConnectionFactory, wanted: tuple[str, ...]) -> ConnectionFactory:
    url = base.url
    options = [o for o in wanted if o.partition("=")[0] not in url]
    if not is_activemq_url(url) or not options:
        return base
    separator = "&" if "?" in url.rpartition(")")[2] else "?"  # failover:(...)?options
    return base.derive(url=url + separator + "&".join(options))


def dead_letter_details(ctx: JMSContext, dlq: str) -> dict[str, DeadLetterDetails]:
    """By JMSMessageID, the details of the entries on ``dlq`` that ActiveMQ dead-lettered.

    Empty for other providers. Reads up to the first _MAX_ENTRIES such entries with one
    provider browser whose selector leaves out everything else.
    """
    if not ctx.provider_name.startswith("ActiveMQ"):
        return {}
    session = ctx.channel.java.session()
    found: dict[str, DeadLetterDetails] = {}

    def read() -> None:
        browser = session.createBrowser(
            session.createQueue(dlq), f"{ACTIVEMQ_CAUSE} IS NOT NULL AND {REASON} IS NULL"
        )
        try:
            entries = browser.getEnumeration()
            while entries.hasMoreElements() and len(found) < _MAX_ENTRIES:
                m = cast(JavaActiveMQMessage, entries.nextElement())
                original = m.getOriginalDestination()
                broker_in = int(m.getBrokerInTime())
                found[str(m.getJMSMessageID())] = DeadLetterDetails(
                    str(original) if original is not None else None, broker_in or None
                )
        finally:
            browser.close()

    try:
        ctx.channel.call(read, f"read ActiveMQ's dead-letter details on queue://{dlq}")
    except AttributeError:  # not ActiveMQ's message class after all
        return {}
    return found


__all__ = ["without_redelivery_limit", "dead_letter_details", "is_activemq_url", "SCHEMES"]
