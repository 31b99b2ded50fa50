"""The options of the ``jms`` data source, parsed and checked once, where Spark plans the job.

Names are camelCase, like Spark's Kafka connector; Spark hands them over case-insensitively.
Option values that are send options (priority, TTL, delay, delivery mode) pass the same rules
as ``JMSProducer``'s setters (pyjms.rules.delivery), so a bad default fails before any task runs.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pyjms.api.checks import JAVA_INT_MAX
from pyjms.api.constants import DEFAULT_PRIORITY, NON_PERSISTENT, PERSISTENT
from pyjms.api.context import JMSContext
from pyjms.api.destination import from_key
from pyjms.api.factory import ConnectionFactory
from pyjms.delay.mechanism import check_choice
from pyjms.errors import (
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
)
from pyjms.rules import delivery as rules

_log = logging.getLogger("pyjms.spark")

ON_INVALID = ("fail", "skip", "dlq")
MODES = ("browse", "consume")
DELIVERY_MODE_NAMES = {"PERSISTENT": PERSISTENT, "NON_PERSISTENT": NON_PERSISTENT}
# options Spark itself passes to sources and sinks; not ours, not a typo
_SPARK_OPTIONS = {"path", "checkpointlocation", "queryname"}


def _pairs(raw: str | None, name: str) -> tuple[tuple[str, str], ...]:
    """``a=1,b=2`` as pairs. A value, unlike an option name, keeps its case through Spark."""
    out = []
    for item in (raw or "").split(","):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InvalidArgumentRuntimeException(
                f"option {name} takes name=value pairs, got {item!r}", values={name: raw}
            )
        out.append((key.strip(), value.strip()))
    return tuple(out)


def destination_key(value: str, what: str) -> str:
    """``queue://NAME`` or ``topic://NAME`` as given, or a plain NAME as a queue."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidDestinationRuntimeException(
            f"{what} must be a destination name, got {value!r}", values={what: value}
        )
    if "://" not in value:
        return f"queue://{value}"
    from_key(value)  # raises for an unknown scheme
    return value


def delivery_mode_value(value: Any) -> int:
    """1, 2, "1", "2", "PERSISTENT" or "NON_PERSISTENT" (any case) as a checked JMS delivery mode."""
    if isinstance(value, str):
        name = value.strip().upper()
        value = DELIVERY_MODE_NAMES.get(
            name, int(name) if name.isascii() and name.isdigit() and len(name) < 20 else value
        )
    return rules.check_delivery_mode(value)


def _int(
    options: Mapping[str, str],
    name: str,
    default: int,
    minimum: int | None = None,
    maximum: int | None = JAVA_INT_MAX,
) -> int:
    value = _optional_int(options, name, minimum, maximum)
    return default if value is None else value


def _optional_int(
    options: Mapping[str, str], name: str, minimum: int | None = None, maximum: int | None = JAVA_INT_MAX
) -> int | None:
    """An integer option; counts and timeouts are Java ints (at most 2147483647) on the wire."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise InvalidArgumentRuntimeException(
            f"option {name} must be an integer, got {raw!r}", values={name: raw}
        ) from None
    if minimum is not None and value < minimum:
        raise InvalidArgumentRuntimeException(
            f"option {name} must be at least {minimum}, got {value}", values={name: value}
        )
    if maximum is not None and value > maximum:
        raise InvalidArgumentRuntimeException(
            f"option {name} must be at most {maximum}, got {value}", values={name: value}
        )
    return value


def _choice(options: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    raw = options.get(name.lower())
    value = choices[0] if raw is None else str(raw).strip().lower()
    if value not in choices:
        raise InvalidArgumentRuntimeException(
            f"option {name} must be one of {', '.join(choices)}, got {raw!r}", values={name: raw}
        )
    return value


@dataclass(frozen=True)
class JMSOptions:
    """Everything the data source was told, checked. Picklable: it travels to the executors."""

    url: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    #: the destination key (queue://NAME, topic://NAME) when the option is given
    destination: str | None = None
    delivery_delay: int = 0
    time_to_live: int = 0
    priority: int = DEFAULT_PRIORITY
    delivery_mode: int = PERSISTENT
    #: rows per JVM crossing when writing, messages per Arrow batch when reading
    batch_size: int = 1000
    on_invalid: str = "fail"
    dead_letter_queue: str | None = None
    message_selector: str | None = None
    mode: str = "browse"
    max_messages: int | None = None
    num_partitions: int = 1
    #: how long a reader waits for a further message before it takes the queue as drained (ms)
    receive_timeout: int = 1000
    max_messages_per_trigger: int | None = None
    #: how delayed messages are held: auto (probe), native, scheduler, staging or none
    delay_mechanism: str = "auto"
    #: ``factoryProperties`` ("name=value,name=value"): bean properties of the provider's
    #: connection factory (ConnectionFactory(properties=...)), as Kafka's connector passes kafka.*
    factory_properties: tuple[tuple[str, str], ...] = ()
    #: writing: how long a task whose connection failed, or whose commit's outcome is unknown,
    #: waits for the broker to resend its transaction (ms; 0: it fails at once, Spark retries it)
    reconnect_timeout: int = 30000
    #: writing: how many rows a task keeps to resend its transaction itself (0: none)
    resend_buffer: int = 100_000

    #: option name (as users write it) for each field
    NAMES: ClassVar[dict[str, str]] = {
        "url": "url",
        "user": "user",
        "password": "password",
        "destination": "destination",
        "delivery_delay": "deliveryDelay",
        "time_to_live": "timeToLive",
        "priority": "priority",
        "delivery_mode": "deliveryMode",
        "batch_size": "batchSize",
        "on_invalid": "onInvalid",
        "dead_letter_queue": "deadLetterQueue",
        "message_selector": "messageSelector",
        "mode": "mode",
        "max_messages": "maxMessages",
        "num_partitions": "numPartitions",
        "receive_timeout": "receiveTimeout",
        "max_messages_per_trigger": "maxMessagesPerTrigger",
        "delay_mechanism": "deliveryDelayMechanism",
        "factory_properties": "factoryProperties",
        "reconnect_timeout": "reconnectTimeout",
        "resend_buffer": "resendBuffer",
    }

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> JMSOptions:
        o = {str(k).lower(): v for k, v in options.items()}
        known = {n.lower() for n in cls.NAMES.values()}
        unknown = sorted(set(o) - known - _SPARK_OPTIONS)
        if unknown:  # a typo would silently change behaviour: say so where the job is planned
            _log.warning(
                "jms data source: ignoring unknown options %s (known: %s)",
                unknown,
                ", ".join(sorted(cls.NAMES.values())),
            )
        url = o.get("url") or os.environ.get("PYJMS_URL")
        if not url:
            raise InvalidArgumentRuntimeException(
                "the jms data source needs the option url (e.g. tcp://broker:61616), or PYJMS_URL set "
                "on the driver and executors",
                values={"url": None},
            )
        if url.startswith("vm:"):
            # every Spark Python worker is its own process with its own JVM: a vm:// broker in
            # one of them is invisible to the others
            raise InvalidArgumentRuntimeException(
                f"url {url!r} is in-process; Spark's Python workers are separate processes, so use a "
                "broker they can all reach, e.g. tcp://127.0.0.1:61616 (python -m pyjms broker)",
                values={"url": url},
            )
        dest = o.get("destination") or o.get("path")
        dlq = o.get("deadletterqueue")
        ttl = rules.check_time_to_live(_int(o, "timeToLive", 0, maximum=None))
        delay = rules.check_delivery_delay(_int(o, "deliveryDelay", 0, maximum=None))
        rules.check_delay_within_ttl(delay, ttl)
        priority = rules.check_priority(_int(o, "priority", DEFAULT_PRIORITY))
        mode_raw = o.get("deliverymode")
        delivery_mode = PERSISTENT if mode_raw is None else delivery_mode_value(mode_raw)
        on_invalid = _choice(o, "onInvalid", ON_INVALID)
        if on_invalid == "dlq" and not dlq:
            raise InvalidArgumentRuntimeException(
                "onInvalid=dlq needs the option deadLetterQueue (the queue invalid rows go to)",
                values={"onInvalid": "dlq", "deadLetterQueue": None},
            )
        mechanism = str(o.get("deliverydelaymechanism") or "auto").strip().lower()
        check_choice(mechanism)
        selector = o.get("messageselector")
        return cls(
            url=url,
            user=o.get("user"),
            password=o.get("password"),
            destination=destination_key(dest, "destination") if dest else None,
            delivery_delay=delay,
            time_to_live=ttl,
            priority=priority,
            delivery_mode=delivery_mode,
            batch_size=_int(o, "batchSize", 1000, minimum=1),
            on_invalid=on_invalid,
            dead_letter_queue=destination_key(dlq, "deadLetterQueue") if dlq else None,
            message_selector=selector.strip() if selector and selector.strip() else None,
            mode=_choice(o, "mode", MODES),
            max_messages=_optional_int(o, "maxMessages", minimum=0),
            num_partitions=_int(o, "numPartitions", 1, minimum=1),
            receive_timeout=_int(o, "receiveTimeout", 1000, minimum=1),
            max_messages_per_trigger=_optional_int(o, "maxMessagesPerTrigger", minimum=1),
            delay_mechanism=mechanism,
            factory_properties=_pairs(o.get("factoryproperties"), "factoryProperties"),
            reconnect_timeout=_int(o, "reconnectTimeout", 30000, minimum=0),
            resend_buffer=_int(o, "resendBuffer", 100_000, minimum=0),
        )

    def require_destination(self) -> str:
        if self.destination is None:
            raise InvalidDestinationRuntimeException(
                "the jms data source needs the option destination (a queue name, queue://NAME or topic://NAME)"
            )
        return self.destination

    def require_queue(self) -> str:
        key = self.require_destination()
        if not key.startswith("queue://"):
            raise InvalidDestinationRuntimeException(
                f"reading needs a queue, got {key!r}: a topic keeps no messages to browse or consume",
                values={"destination": key},
            )
        return key


# ---------------------------------------------------------------------------- connections

_factories: dict[tuple[Any, ...], Any] = {}
_factories_lock = threading.Lock()


def connection_factory(options: JMSOptions) -> ConnectionFactory:
    """This process's ConnectionFactory for the options' broker.

    A Spark Python worker runs many tasks: keeping the factory keeps the JVM (one per worker)
    and the probed delay mechanism, so only the first task of a worker pays for them. Each
    task still opens and closes its own connection.
    """
    key = (options.url, options.user, options.password, options.delay_mechanism, options.factory_properties)
    with _factories_lock:
        f = _factories.get(key)
        if f is None:
            f = _factories[key] = ConnectionFactory(
                options.url,
                options.user,
                options.password,
                delivery_delay=options.delay_mechanism,
                properties=dict(options.factory_properties),
            )
        return f


def close_context(ctx: JMSContext, rollback: bool) -> None:
    """Closes a task's context, rolling back first unless it committed (a CLIENT_ACKNOWLEDGE
    context that did not acknowledge gives back what it consumed as it closes).

    After a failure the rollback may fail too (the connection may be what broke); closing,
    or the broker noticing the dead connection, discards the transaction all the same.
    """
    try:
        if rollback and ctx.get_transacted():
            ctx.rollback()
    except JMSRuntimeException:
        pass
    finally:
        try:
            ctx.close()
        except JMSRuntimeException:
            if not rollback:
                raise
