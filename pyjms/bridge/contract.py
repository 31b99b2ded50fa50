"""The Python/Java contract, defined once on the Python side.

Everything the two sides of the JVM boundary must agree on is named here, and every Python
module takes it from here: the record layout (kinds, flags, value tags; the layout itself is
pyjms.bridge.codec), the send flags the shim understands, the ``JMS_PYJMS_*`` message
properties pyjms writes and reads, and the queues pyjms's own services talk on. The Java side
has its own twins (org.pyjms.shim.Codec, Channel, Receiver, activemq.*).

``JMS_PYJMS_*`` properties are pyjms's alone: no other component may set them.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------- records (Codec.java)

#: message kinds of a record
KIND_MESSAGE, KIND_TEXT, KIND_BYTES, KIND_MAP, KIND_OBJECT, KIND_STREAM = range(6)
#: which optional blocks an outgoing record carries
FLAG_HEADERS, FLAG_PROPERTIES = 1, 2
#: value tags of properties and map entries (T_NULL only for map entries a Java client set to null)
T_NULL = 0
T_BOOL, T_BYTE, T_SHORT, T_INT, T_LONG, T_FLOAT, T_DOUBLE, T_STRING, T_BYTES, T_CHAR = range(1, 11)

# ---------------------------------------------------------------------------- send flags (Channel.java)

#: the producer disabled message ids / timestamps
SEND_NO_MESSAGE_ID = 1
SEND_NO_TIMESTAMP = 2
#: how the shim applies a nonzero delivery delay: the client's setDeliveryDelay, or the
#: broker's scheduler (the provider's Provider.schedule); neither: the delay is only recorded
SEND_DELAY_NATIVE = 4
SEND_DELAY_SCHEDULER = 8
SEND_DELAY_FLAGS = SEND_DELAY_NATIVE | SEND_DELAY_SCHEDULER

# ---------------------------------------------------------------------------- session modes (Channel.java)

#: a session mode beyond JMS's: CLIENT_ACKNOWLEDGE on the provider's individual acknowledge mode
#: (a message's acknowledge() acknowledges that message only; Provider.individualAcknowledgeMode)
INDIVIDUAL_ACKNOWLEDGE = 101

# ---------------------------------------------------------------------------- message properties

#: the prefix of every property pyjms writes; the public setters refuse it (2442), and pyjms
#: writes these only as typed (tag, value) pairs through Message.encode/copy's add_properties
RESERVED_PREFIX = "JMS_PYJMS_"

#: the delivery time (send time + delay), where the wire drops JMSDeliveryTime (the shim sets it)
DELIVERY_TIME = "JMS_PYJMS_DeliveryTime"
#: the original send time, where a broker scheduler or a forward restamps JMSTimestamp
SEND_TIME = "JMS_PYJMS_Timestamp"
#: the exact expiration (send time + TTL) of a delayed message; receivers enforce it
EXPIRATION = "JMS_PYJMS_Expiration"
#: the original id of a message delayed through the staging queue
MESSAGE_ID = "JMS_PYJMS_MessageID"
#: a staged message's target, sender's correlation id and own expiration (the staging header)
STAGED_TARGET = "JMS_PYJMS_DDL_Target"
STAGED_CORRELATION_ID = "JMS_PYJMS_DDL_CorrelationID"
STAGED_EXPIRATION = "JMS_PYJMS_DDL_Expiration"
#: on a slot queue's message: the user the broker stamped (JMSXUserID) when it was staged, ""
#: for none (the broker stamps the processor on what it files; org.pyjms.shim.delay.SlotFiler)
STAGED_USER = "JMS_PYJMS_DDL_User"
#: the subscriber a staged copy of a delayed publication is addressed to (activemq.DelayedPublications)
SUBSCRIBER = "JMS_PYJMS_Subscriber"
#: the prefix of the dead-letter header's properties (pyjms.dlq.header)
DEAD_LETTER_HEADER_PREFIX = "JMS_PYJMS_DLH_"
#: the transmission-queue header's remote queue and queue manager (pyjms.dlq.handler)
XQH_REMOTE_Q = "JMS_PYJMS_XQH_RemoteQName"
XQH_REMOTE_Q_MGR = "JMS_PYJMS_XQH_RemoteQMgrName"
#: beside a dead-letter header: the error that dead-lettered a Spark row
DLQ_DETAIL = "JMS_PYJMS_DLQDetail"
#: the dead-letter reason of a message quarantined because a JMS_PYJMS_* property it carries is
#: malformed (MQRC_FORMAT_ERROR; org.pyjms.shim.Poison): DLQ_DETAIL names the property and value
QUARANTINE_REASON = 2110
#: pyjms's properties that hold a time in epoch milliseconds (a long), and those that hold text;
#: a value of another type makes a message poison (quarantined, never handed over)
TIME_PROPERTIES = (DELIVERY_TIME, SEND_TIME, EXPIRATION, STAGED_EXPIRATION)
TEXT_PROPERTIES = (MESSAGE_ID, STAGED_TARGET, STAGED_CORRELATION_ID, SUBSCRIBER)

#: a message's duplicate-detection id (Message.set_duplicate_id): Apache Artemis's own header
#: (org.apache.activemq.artemis.api.core.Message.HDR_DUPLICATE_DETECTION_ID), which its broker
#: reads from core messages and from AMQP application properties alike. pyjms writes it on every
#: provider; where the broker detects no duplicates, pyjms's receivers drop by it (pyjms.api.duplicates)
DUPLICATE_ID = "_AMQ_DUPL_ID"

# ---------------------------------------------------------------------------- queues

#: where delayed messages wait for the delay processor (IBM MQ's name)
STAGING_QUEUE = "SYSTEM.DDELAY.LOCAL.QUEUE"
#: IBM MQ's dead-letter queue: where pyjms components dead-letter when the provider names none
DEAD_LETTER_QUEUE = "SYSTEM.DEAD.LETTER.QUEUE"
#: the admin service of a pyjms broker
ADMIN_QUEUE = "PYJMS.ADMIN"
#: the mark service (cooperative browsing)
MARK_QUEUE = "PYJMS.MARKS"
#: the delay processor's ping queue is CONTROL_PREFIX + its staging queue
CONTROL_PREFIX = "PYJMS.CONTROL."
#: the delay processor's slot queues (SLOT_PREFIX + "<n>." + staging) and slot markers
SLOT_PREFIX = "PYJMS.SLOT."
SLOTS_PREFIX = "PYJMS.SLOTS."
#: leader election of pyjms's own services (pyjms.api.leadership): LEADER_PREFIX + the role.
#: pyjms brokers make every consumer of these queues exclusive, so the broker picks the leader
LEADER_PREFIX = "PYJMS.LEADER."


def control_queue_name(staging_queue: str) -> str:
    """The queue a delay processor serving ``staging_queue`` answers pings on."""
    return CONTROL_PREFIX + staging_queue
