"""Jakarta Messaging constants, with their JMS values."""

from __future__ import annotations

from pyjms.bridge.contract import INDIVIDUAL_ACKNOWLEDGE as _INDIVIDUAL

# session modes (jakarta.jms.JMSContext / Session)
SESSION_TRANSACTED = 0
AUTO_ACKNOWLEDGE = 1
CLIENT_ACKNOWLEDGE = 2
DUPS_OK_ACKNOWLEDGE = 3
#: beyond JMS: CLIENT_ACKNOWLEDGE where a message's acknowledge() acknowledges that message only
#: (ActiveMQ Classic's, Artemis's and Qpid JMS's INDIVIDUAL_ACKNOWLEDGE; the value theirs but
#: ActiveMQ's): ctx.acknowledge() acknowledges every message consumed and not acknowledged yet,
#: ctx.acknowledge_messages(ms) exactly those
INDIVIDUAL_ACKNOWLEDGE = _INDIVIDUAL
SESSION_MODES = {
    SESSION_TRANSACTED: "SESSION_TRANSACTED",
    AUTO_ACKNOWLEDGE: "AUTO_ACKNOWLEDGE",
    CLIENT_ACKNOWLEDGE: "CLIENT_ACKNOWLEDGE",
    DUPS_OK_ACKNOWLEDGE: "DUPS_OK_ACKNOWLEDGE",
    INDIVIDUAL_ACKNOWLEDGE: "INDIVIDUAL_ACKNOWLEDGE",
}

# delivery modes (jakarta.jms.DeliveryMode)
NON_PERSISTENT = 1
PERSISTENT = 2

# jakarta.jms.Message defaults
DEFAULT_DELIVERY_MODE = PERSISTENT
DEFAULT_PRIORITY = 4
DEFAULT_TIME_TO_LIVE = 0
DEFAULT_DELIVERY_DELAY = 0

# how a ConnectionFactory delays messages (pyjms.delay resolves "auto" by probing)
DELIVERY_DELAY_CHOICES = ("auto", "native", "scheduler", "staging", "none")
