"""IBM MQ's send-time rules for delayed messages (spec 002), each in one place.

The checks every send option gets (priority, delivery mode, time-to-live, delivery delay) are
the client's (pyjms.api.checks) and are named here too, so the JMSProducer, the Spark sink and
the CLI use one set. The rules here concern delayed messages: the delay within the
time-to-live (D06), what a delayed message may not be (D07, D08) and its target (D05, D22,
D23). pyjms.rules.policy applies them to every delayed send, as a send policy. Errors name
the values that broke the rule and IBM MQ's reason code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyjms.api.checks import (  # noqa: F401 - the client's checks, named here too
    DELIVERY_MODES,
    PRIORITY_RANGE,
    check_delivery_delay,
    check_delivery_mode,
    check_priority,
    check_time_to_live,
    to_ms,
)
from pyjms.api.message import BytesMessage, MapMessage, Message, TextMessage
from pyjms.api.property_types import T_BOOL, T_BYTE, T_CHAR, T_DOUBLE, T_FLOAT, T_INT, T_LONG, T_SHORT
from pyjms.bridge.contract import RESERVED_PREFIX
from pyjms.errors import (
    IllegalStateRuntimeException,
    JMSRuntimeException,
    NotSupportedRuntimeException,
    ResourceAllocationRuntimeException,
    mq_error,
)
from pyjms.reasons import MQRC

#: this module's rules, with the client's checks it names too (re-exported)
__all__ = [
    "DELIVERY_MODES",
    "PRIORITY_RANGE",
    "check_delivery_delay",
    "check_delivery_mode",
    "check_priority",
    "check_time_to_live",
    "to_ms",
    "check_delay_within_ttl",
    "delay_not_supported",
    "RETAIN_PROPERTY",
    "GROUP_PROPERTY",
    "check_delayed_message",
    "check_delayed_target",
    "message_length",
    "check_target_accepts",
]


def check_delay_within_ttl(delay_ms: int, ttl_ms: int) -> None:
    """D06: a nonzero delay longer than a nonzero TTL would expire before delivery."""
    if delay_ms > 0 and ttl_ms > 0 and delay_ms > ttl_ms:
        raise mq_error(
            JMSRuntimeException,
            MQRC.EXPIRY_ERROR,
            f"delivery delay {delay_ms} ms exceeds time-to-live {ttl_ms} ms, so the message would expire before delivery",
            delivery_delay=delay_ms,
            time_to_live=ttl_ms,
        )


def delay_not_supported(delay_ms: int, provider: str) -> JMSRuntimeException:
    """D04: a nonzero delay where no delay mechanism is available."""
    return mq_error(
        NotSupportedRuntimeException,
        MQRC.FUNCTION_NOT_SUPPORTED,
        f"delivery delay {delay_ms} ms is not supported on {provider}",
        delivery_delay=delay_ms,
    )


#: IBM MQ's retained-publication property (JMS_IBM_RETAIN = 1 asks to retain)
RETAIN_PROPERTY = "JMS_IBM_RETAIN"
#: JMS message grouping
GROUP_PROPERTY = "JMSXGroupID"


def check_delayed_message(delay_ms: int, property_values: dict[str, Any]) -> None:
    """D07, D08: what a delayed message may not be (values are plain property values)."""
    if delay_ms <= 0:
        return
    retain = property_values.get(RETAIN_PROPERTY)
    if retain is not None and str(retain) == "1":
        raise mq_error(
            JMSRuntimeException,
            MQRC.OPTIONS_ERROR,
            f"a retained publication ({RETAIN_PROPERTY}=1) cannot have a delivery delay ({delay_ms} ms)",
            delivery_delay=delay_ms,
            **{RETAIN_PROPERTY: retain},
        )
    group = property_values.get(GROUP_PROPERTY)
    if group is not None:
        raise mq_error(
            JMSRuntimeException,
            MQRC.OPTIONS_ERROR,
            f"a grouped message ({GROUP_PROPERTY}={group!r}) cannot have a delivery delay ({delay_ms} ms)",
            delivery_delay=delay_ms,
            **{GROUP_PROPERTY: group},
        )


def check_delayed_target(
    destination_key: str, attributes: Any, *, persistent: bool, size: int, delay_ms: int
) -> None:
    """D05, D22, D23: the target of a delayed message, checked at send time.

    ``attributes`` are the target's (pyjms.rules.attributes), or None where none are defined.
    """
    if delay_ms <= 0 or attributes is None:
        return
    a = attributes
    if hasattr(a, "persistent_delivery"):  # a topic
        delivery = a.persistent_delivery if persistent else a.nonpersistent_delivery
        if delivery != "ALLAVAIL":
            kind = "PMSGDLV" if persistent else "NPMSGDLV"
            raise mq_error(
                JMSRuntimeException,
                MQRC.PUBLICATION_FAILURE,
                f"a delayed publication to {destination_key} needs {kind}(ALLAVAIL), the topic has {kind}({delivery})",
                delivery_delay=delay_ms,
                **{kind: delivery},
            )
        return
    if a.clustered and a.default_bind != "NOTFIXED":
        raise mq_error(
            JMSRuntimeException,
            MQRC.OPTIONS_ERROR,
            f"a delayed message to clustered queue {destination_key} needs DEFBIND(NOTFIXED), it has DEFBIND({a.default_bind})",
            delivery_delay=delay_ms,
            DEFBIND=a.default_bind,
        )
    check_target_accepts(destination_key, a, size=size)


_VALUE_BYTES = {
    T_BOOL: 1,
    T_BYTE: 1,
    T_SHORT: 2,
    T_CHAR: 2,
    T_INT: 4,
    T_FLOAT: 4,
    T_LONG: 8,
    T_DOUBLE: 8,
}


def _value_length(tag: int, value: Any) -> int:
    if value is None:
        return 0
    if tag in _VALUE_BYTES:
        return _VALUE_BYTES[tag]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    return len(str(value).encode("utf-8"))


def _property_counts(name: str) -> bool:
    """As org.pyjms.shim.MessageLength.counts: JMS headers, JMSX*, pyjms's and the provider's
    own properties do not count."""
    if name.startswith("JMS"):
        return name.startswith("JMS_") and not name.startswith(RESERVED_PREFIX)
    return not name.startswith(("_AMQ", "__AMQ", "AMQ_", "_HQ"))


def message_length(message: Message, extra_properties: Mapping[str, tuple[int, Any]] | None = None) -> int:
    """A message's length as IBM MQ counts it against MAXMSGL: the body's bytes (text as
    UTF-8, a map's names and values) plus each application property's name and value, not
    pyjms's or the provider's encoding. The brokers count the same (org.pyjms.shim.MessageLength)."""
    body = message.get_body() if isinstance(message, (TextMessage, BytesMessage)) else None
    if isinstance(message, MapMessage):
        length = sum(
            len(k.encode("utf-8")) + _value_length(t, v) for k, (t, v) in message.typed_map().items()
        )
    elif body is None:
        length = 0
    else:
        length = len(body.encode("utf-8")) if isinstance(body, str) else len(body)
    properties = {**message.typed_properties(), **(extra_properties or {})}
    return length + sum(
        len(name.encode("utf-8")) + _value_length(tag, value)
        for name, (tag, value) in properties.items()
        if _property_counts(name)
    )


def check_target_accepts(destination_key: str, attributes: Any, *, size: int = 0) -> None:
    """D22: a queue that is put-inhibited, full, or shorter than the message refuses it.

    Used at send for a delayed message, and again by the delay processor at delivery (D15).
    """
    a = attributes
    if a is None or not hasattr(a, "put_enabled"):
        return
    if not a.put_enabled:
        raise mq_error(
            IllegalStateRuntimeException, MQRC.PUT_INHIBITED, f"queue {destination_key} is put-inhibited"
        )
    if 0 <= a.max_msg_length < size:
        raise mq_error(
            JMSRuntimeException,
            MQRC.MSG_TOO_BIG_FOR_Q,
            f"a message of {size} bytes (body and properties) exceeds MAXMSGL {a.max_msg_length} of {destination_key}",
            size=size,
            MAXMSGL=a.max_msg_length,
        )
    if 0 <= a.max_depth <= a.depth:
        raise mq_error(
            ResourceAllocationRuntimeException,
            MQRC.Q_FULL,
            f"queue {destination_key} is full ({a.depth} of MAXDEPTH {a.max_depth})",
            depth=a.depth,
            MAXDEPTH=a.max_depth,
        )
