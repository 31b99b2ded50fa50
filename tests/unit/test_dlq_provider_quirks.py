"""The DLQ package knows no provider (issue 33): where a dead-letter header comes from for an
entry the broker dead-lettered itself, and how much of a queue a browser shows, are the
provider plug-in's to say (ProviderPlugin.dead_letter_header, dead_lettered_by_broker,
browse_limit), with neutral defaults. No JVM."""

from __future__ import annotations

import re
from pathlib import Path

import pyjms
from pyjms.api.provider import ProviderPlugin, default_provider
from pyjms.dlq import DeadLetterHeader
from pyjms.dlq.header import ACTIVEMQ_CAUSE, MQFB_EXPIRATION, MQRC_BACKOUT_THRESHOLD_REACHED, put_stamp
from pyjms.providers.activemq import ActiveMQPlugin
from pyjms.providers.activemq.dead_letters import BROWSE_LIMIT

DLQ_PACKAGE = Path(pyjms.__file__).parent / "dlq"
EXPIRED = "java.lang.Throwable: Message Expired. Expiration:1795305744745"
POISON = "java.lang.Throwable: Delivery[7] exceeds redelivery policy limit:RedeliveryPolicy {...}"


def activemq_entry(cause: str) -> pyjms.TextMessage:
    message = pyjms.TextMessage("x")
    message.set_property(ACTIVEMQ_CAUSE, cause)
    return message


def test_activemq_plugin_maps_the_entries_its_broker_dead_lettered() -> None:
    plugin = ActiveMQPlugin()
    expired = activemq_entry(EXPIRED)
    assert plugin.dead_lettered_by_broker(expired)
    header = plugin.dead_letter_header(
        expired, queue_manager="QM1", original_destination="queue://APP.IN", dead_lettered_ms=None
    )
    assert (header.reason, header.dest_q, header.dest_q_mgr, header.put_appl_name) == (
        MQFB_EXPIRATION,
        "APP.IN",
        "QM1",
        "ActiveMQ",
    )
    assert (header.put_date, header.put_time) == put_stamp(1795305744745)
    poison = plugin.dead_letter_header(
        activemq_entry(POISON), queue_manager="", original_destination=None, dead_lettered_ms=86_399_999
    )
    assert poison.reason == MQRC_BACKOUT_THRESHOLD_REACHED
    assert (poison.put_date, poison.put_time) == put_stamp(86_399_999)  # when the broker took it
    plain = pyjms.TextMessage("plain")
    assert not plugin.dead_lettered_by_broker(plain)
    assert (
        plugin.dead_letter_header(plain, queue_manager="", original_destination=None, dead_lettered_ms=None)
        is None
    )


def test_a_plain_provider_maps_no_entry_and_browses_whole_queues() -> None:
    plain = ProviderPlugin()
    entry = activemq_entry(POISON)
    assert not plain.dead_lettered_by_broker(entry)
    assert (
        plain.dead_letter_header(entry, queue_manager="", original_destination=None, dead_lettered_ms=None)
        is None
    )
    assert plain.browse_limit is None
    assert DeadLetterHeader.from_message(entry, provider=plain) is None


def test_from_message_asks_the_provider_it_is_given_else_the_default_one() -> None:
    entry = activemq_entry(POISON)
    assert isinstance(default_provider(), ActiveMQPlugin)
    by_default = DeadLetterHeader.from_message(entry, original_destination="topic://PRICES")
    assert by_default is not None and by_default.dest_q == "topic://PRICES"
    assert DeadLetterHeader.from_message(entry, provider=ActiveMQPlugin()) == DeadLetterHeader.from_message(
        entry
    )


def test_activemq_browsers_show_at_most_its_page_size() -> None:
    assert ActiveMQPlugin.browse_limit == BROWSE_LIMIT == 400


def test_the_dlq_package_holds_no_activemq_quirk() -> None:
    for path in DLQ_PACKAGE.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert "from_activemq" not in source, path
        assert "_BROWSE_LIMIT" not in source and not re.search(r"= 400\b", source), path
        assert "dlqDeliveryFailureCause" not in source or path.name == "header.py", path
