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
* Entries ActiveMQ dead-letters itself carry no pyjms dead-letter header, only
  ``dlqDeliveryFailureCause``, and it clears JMSExpiration. :func:`dead_letter_header` maps
  them onto the same header (IBM MQ's MQDLH, pyjms.dlq.header):

  =============================================  ==========================================
  ``dlqDeliveryFailureCause``                     Reason
  =============================================  ==========================================
  ``...Message Expired. Expiration:<ms>``         MQFB_EXPIRATION (258); PutDate/PutTime =
                                                  that expiration
  ``...Delivery[n] exceeds redelivery policy      MQRC_BACKOUT_THRESHOLD_REACHED (2362):
  limit...`` (a consumer rolled it back more      IBM MQ's reason for a JMS poison message
  than maximumRedeliveries, default 6)            its backout threshold dead-lettered
  anything else                                   MQRC_UNEXPECTED_ERROR (2195)
  =============================================  ==========================================

  DestQ is the original destination, DestQMgr the handler's queue manager (the broker that
  dead-lettered it is the one the handler reads), PutApplName ``ActiveMQ``, PutApplType
  MQAT_QMGR (7), PutDate/PutTime when the broker received the dead-letter copy (else the
  expiration, else the original send time) and Format that of the body.
"""

from __future__ import annotations

import re
from typing import cast

from pyjms.api.context import JMSContext
from pyjms.api.factory import ConnectionFactory
from pyjms.api.message import Message
from pyjms.bridge.urls import add_internal_option, with_options
from pyjms.dlq.header import (
    ACTIVEMQ_CAUSE,
    MQAT_QMGR,
    MQFB_EXPIRATION,
    MQRC_BACKOUT_THRESHOLD_REACHED,
    MQRC_UNEXPECTED_ERROR,
    REASON,
    DeadLetterDetails,
    DeadLetterHeader,
    destination_name,
    format_of,
    put_stamp,
)
from pyjms.providers.activemq.java_types import JavaActiveMQMessage

#: URL schemes the shim hands to ActiveMQ (org.pyjms.shim.Providers.forUrl)
SCHEMES = ("vm", "tcp", "nio", "ssl", "failover", "discovery", "static", "auto", "peer")
_HANDLER_OPTIONS = ("jms.redeliveryPolicy.maximumRedeliveries=-1",)
#: ActiveMQ's client sends a CLIENT_ACKNOWLEDGE acknowledgement asynchronously by default: one
#: still in its send queue when the process dies is lost, and the message comes again
_SYNCHRONOUS_ACK_OPTIONS = ("jms.sendAcksAsync=false",)
#: a failover transport that, once connected, does not reconnect: its connection fails with
#: the broker (its first connect still tries every broker of the list once)
_NO_RECONNECT_OPTIONS = ("maxReconnectAttempts=0",)
for _option in _HANDLER_OPTIONS + _SYNCHRONOUS_ACK_OPTIONS + _NO_RECONNECT_OPTIONS:
    add_internal_option(_option)
#: at most this many entries are read per call; ActiveMQ browses no more than 400 by default
_MAX_ENTRIES = 1000
#: the most messages ActiveMQ's queue browser shows (the broker's maxBrowsePageSize, by default)
BROWSE_LIMIT = 400

_EXPIRED = re.compile(r"message expired", re.IGNORECASE)
_EXPIRATION_AT = re.compile(r"Expiration:\s*(\d+)")
_REDELIVERY = re.compile(r"redelivery policy limit|exceeded redeliverypolicy limit", re.IGNORECASE)


def is_activemq_url(url: str | None) -> bool:
    return bool(url) and url.partition(":")[0] in SCHEMES  # type: ignore[union-attr]


def without_redelivery_limit(base: ConnectionFactory) -> ConnectionFactory:
    """The factory as given, plus no redelivery limit (unless the URL sets one)."""
    return _with_options(base, _HANDLER_OPTIONS)


def with_synchronous_acks(base: ConnectionFactory) -> ConnectionFactory:
    """The factory as given, whose acknowledgements have reached the broker when acknowledge()
    returns (unless the URL says otherwise)."""
    return _with_options(base, _SYNCHRONOUS_ACK_OPTIONS)


def ending_with_its_broker(base: ConnectionFactory) -> ConnectionFactory:
    """The factory as given; on a ``failover:(...)`` URL (unless it sets maxReconnectAttempts),
    one whose connections fail when their broker goes instead of reconnecting to another."""
    if not base.url.startswith("failover:"):
        return base
    return _with_options(base, _NO_RECONNECT_OPTIONS)


def _with_options(base: ConnectionFactory, wanted: tuple[str, ...]) -> ConnectionFactory:
    """The factory as given, with those of ``wanted`` (``name=value``) its URL does not set."""
    url = base.url
    if not is_activemq_url(url):
        return base
    merged = with_options(url, dict(o.split("=", 1) for o in wanted), replace=False)
    return base if merged == url else base.derive(url=merged)


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


def dead_lettered_by_broker(message: Message) -> bool:
    """Whether ActiveMQ dead-lettered the message itself (it carries the broker's cause)."""
    return message.property_exists(ACTIVEMQ_CAUSE)


def dead_letter_header(
    message: Message,
    queue_manager: str = "",
    original_destination: str | None = None,
    dead_lettered_ms: int | None = None,
) -> DeadLetterHeader | None:
    """The header of an entry ActiveMQ dead-lettered, from its dlqDeliveryFailureCause (see the
    module docstring); None for a message without one."""
    if not message.property_exists(ACTIVEMQ_CAUSE):
        return None
    cause = message.get_string_property(ACTIVEMQ_CAUSE)
    if cause is None:
        return None
    expiration = _EXPIRATION_AT.search(cause)
    if _EXPIRED.search(cause):
        reason = MQFB_EXPIRATION
    elif _REDELIVERY.search(cause):
        reason = MQRC_BACKOUT_THRESHOLD_REACHED
    else:
        reason = MQRC_UNEXPECTED_ERROR
    at = dead_lettered_ms or (int(expiration.group(1)) if expiration else 0) or message.get_jms_timestamp()
    date, time = put_stamp(at) if at else ("", "")
    return DeadLetterHeader(
        reason=reason,
        dest_q=destination_name(original_destination),
        dest_q_mgr=queue_manager,
        put_appl_name="ActiveMQ",
        put_appl_type=MQAT_QMGR,
        put_date=date,
        put_time=time,
        format=format_of(message),
        cause=cause,
    )


__all__ = [
    "without_redelivery_limit",
    "dead_letter_details",
    "dead_letter_header",
    "dead_lettered_by_broker",
    "is_activemq_url",
    "BROWSE_LIMIT",
    "SCHEMES",
]
